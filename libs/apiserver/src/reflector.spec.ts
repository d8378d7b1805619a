import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { ApiError, type RequestInit, type WatchEvent } from './api-server.js';
import { Reflector, type ListWatchClient } from './reflector.js';

interface Obj {
  metadata: { name: string; namespace?: string; resourceVersion?: string; uid?: string };
}
const obj = (name: string, rv: string, uid = name): Obj => ({ metadata: { name, namespace: 'default', resourceVersion: rv, uid } });

/** An apiserver whose answers the test scripts: lists answered from `lists`, each watch from `watches`. */
class ScriptedClient implements ListWatchClient {
  lists: (() => { metadata: { resourceVersion: string }; items: Obj[] })[] = [];
  watches: ((emit: (e: WatchEvent<Obj>) => void, signal?: AbortSignal) => Promise<void>)[] = [];
  readonly calls: string[] = [];

  request<T>(path: string, init?: RequestInit): Promise<T> {
    this.calls.push(`LIST ${path} ${JSON.stringify(init?.query ?? {})}`);
    const next = this.lists.shift();
    if (!next) return Promise.reject(new ApiError(0, 'ConnectionFailed', 'connection refused'));
    return Promise.resolve(next() as T);
  }
  watch<T>(path: string, query: RequestInit['query'], onEvent: (e: WatchEvent<T>) => void, signal?: AbortSignal): Promise<void> {
    this.calls.push(`WATCH ${path} rv=${String(query?.resourceVersion)}`);
    const next = this.watches.shift();
    if (!next) return new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve()));
    return next(onEvent as (e: WatchEvent<Obj>) => void, signal);
  }
}

function setup() {
  const clock = new FakeClock();
  const client = new ScriptedClient();
  const listings: string[][] = [];
  const reflector = new Reflector<Obj>(client, clock, silentLogger(), {
    path: '/api/v1/pods',
    query: { fieldSelector: 'spec.nodeName=n1' },
    onListing: (items) => listings.push(items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort()),
  });
  return { clock, client, listings, reflector };
}

describe('Reflector (client-go ListAndWatch into an UndeltaStore)', () => {
  it('lists, then watches from the list resourceVersion, handing the whole set over after each change', async () => {
    const { clock, client, listings, reflector } = setup();
    client.lists.push(() => ({ metadata: { resourceVersion: '10' }, items: [obj('a', '9')] }));
    client.watches.push(async (emit) => {
      emit({ type: 'ADDED', object: obj('b', '11') });
      emit({ type: 'BOOKMARK', object: obj('', '12') });
      emit({ type: 'MODIFIED', object: obj('a', '13') });
      emit({ type: 'DELETED', object: obj('b', '14') });
      await new Promise(() => {});
    });
    reflector.start();
    await clock.step(10);
    assert.deepEqual(listings, [['a@9'], ['a@9', 'b@11'], ['a@13', 'b@11'], ['a@13']]);
    assert.deepEqual(client.calls, ['LIST /api/v1/pods {"fieldSelector":"spec.nodeName=n1"}', 'WATCH /api/v1/pods rv=10']);
    assert.equal(reflector.lastSyncResourceVersion, '14');
    reflector.stop();
  });

  it('lists again after 410 Gone, and keeps its last view while the apiserver is down, backing off', async () => {
    const { clock, client, listings, reflector } = setup();
    client.lists.push(() => ({ metadata: { resourceVersion: '10' }, items: [obj('a', '9')] }));
    client.watches.push((emit) => Promise.resolve(emit({ type: 'ERROR', object: { code: 410, reason: 'Expired', message: 'too old resource version' } as unknown as Obj })));
    reflector.start();
    await clock.step(10);
    // The relist finds nothing to answer it: the apiserver is down. No listing is handed over.
    assert.equal(client.calls.filter((c) => c.startsWith('LIST')).length, 2);
    assert.deepEqual(listings, [['a@9']]);
    await clock.step(790);
    assert.equal(client.calls.filter((c) => c.startsWith('LIST')).length, 3, 'tried again 800 ms after the failure');
    await clock.step(1599);
    assert.equal(client.calls.filter((c) => c.startsWith('LIST')).length, 3, 'the second back-off is 1600 ms');
    client.lists.push(() => ({ metadata: { resourceVersion: '20' }, items: [obj('c', '19')] }));
    await clock.step(1);
    assert.deepEqual(listings, [['a@9'], ['c@19']]);
    assert.equal(client.calls.at(-1), 'WATCH /api/v1/pods rv=20');
    reflector.stop();
  });

  it('starts the watch again from the last resourceVersion when the server ends it after a while', async () => {
    const { clock, client, reflector } = setup();
    client.lists.push(() => ({ metadata: { resourceVersion: '10' }, items: [] }));
    client.watches.push(async (emit) => {
      emit({ type: 'ADDED', object: obj('a', '11') });
      await clock.sleep(300_000);
    });
    reflector.start();
    await clock.step(300_000);
    assert.deepEqual(client.calls.slice(1), ['WATCH /api/v1/pods rv=10', 'WATCH /api/v1/pods rv=11']);
    reflector.stop();
  });

  it('stop() ends the watch and calls nothing afterwards', async () => {
    const { clock, client, listings, reflector } = setup();
    client.lists.push(() => ({ metadata: { resourceVersion: '10' }, items: [] }));
    reflector.start();
    await clock.step(10);
    reflector.stop();
    await clock.step(60_000);
    assert.equal(listings.length, 1);
    assert.equal(clock.waiting, 0);
  });
});
