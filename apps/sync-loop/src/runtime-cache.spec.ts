/**
 * The runtime cache (pkg/kubelet/container/runtime_cache.go): one listing
 * serves every reader for its period (housekeeping and the orphan cleanup
 * share it); ForceUpdateIfOlder lists again unless the listing started at
 * or after the time asked; readers meanwhile share the listing in flight;
 * a failed listing is not kept.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { RuntimeCache } from './runtime-cache.js';
import { FakeRuntimeView } from './testing.js';

function setup(periodMs = 3000) {
  const clock = new FakeClock();
  const runtime = new FakeRuntimeView();
  let listings = 0;
  let fail = false;
  const pods = runtime.pods.bind(runtime);
  runtime.pods = () => {
    listings++;
    return fail ? Promise.reject(new Error('runtime away')) : pods();
  };
  const cache = new RuntimeCache(runtime, clock, periodMs);
  return { clock, runtime, cache, listings: () => listings, failing: (f: boolean) => (fail = f) };
}

describe('RuntimeCache', () => {
  it('GetPods: one listing for the period, then a new one', async () => {
    const { clock, runtime, cache, listings } = setup();
    runtime.runtimePods = [{ uid: 'a', name: 'a', namespace: 'default', running: true }];
    const first = await cache.get();
    assert.deepEqual(first.pods.map((p) => p.uid), ['a']);
    assert.deepEqual([...first.allPodUids], ['a']);
    runtime.runtimePods = [];
    await clock.step(2999);
    assert.equal(await cache.get(), first, 'the same listing within the period');
    assert.equal(listings(), 1);
    await clock.step(1);
    assert.deepEqual((await cache.get()).pods, []);
    assert.equal(listings(), 2);
  });

  it('ForceUpdateIfOlder: lists again only when the listing started before the time asked', async () => {
    const { clock, cache, listings } = setup();
    const t0 = clock.now();
    await cache.get();
    assert.equal((await cache.getNewerThan(t0)).timestamp, t0);
    assert.equal(listings(), 1);
    await clock.step(10);
    assert.equal((await cache.getNewerThan(clock.now())).timestamp, t0 + 10);
    assert.equal(listings(), 2);
  });

  it('readers meanwhile share the listing in flight; a failed one is not kept', async () => {
    const { cache, listings, failing } = setup();
    failing(true);
    const both = await Promise.allSettled([cache.get(), cache.get()]);
    assert.deepEqual(both.map((r) => r.status), ['rejected', 'rejected']);
    assert.equal(listings(), 1);
    failing(false);
    await cache.get();
    assert.equal(listings(), 2, 'the failure was not cached');
  });

  it('a period of 0 lists at every get', async () => {
    const { cache, listings } = setup(0);
    await cache.get();
    await cache.get();
    assert.equal(listings(), 2);
  });
});
