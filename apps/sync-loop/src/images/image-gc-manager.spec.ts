import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { FakeClock } from '@app/clock/testing';
import { ConfigError } from '@app/config';
import { RecordingEventRecorder } from '@app/contracts/testing';
import { FakeCri } from '@app/cri/testing';
import { createLogger, silentLogger, type Logger } from '@app/observability';
import { CriImageFs, sandboxImageOf } from '../adapters/cri-image-service.js';
import { DEFAULT_IMAGE_GC_POLICY, ImageGarbageCollector, RealImageGCManager, imageGCPolicyProblems, normalizeImageRef, type ImageGCPolicy } from './image-gc-manager.js';
import type { GcImage } from '../ports.js';
import { imageGCPolicyOf } from '../sync-loop.config.js';
import { FakeImageFs, FakeImageService } from '../testing.js';

const MIN = 60_000;
const img = (id: string, size: number, extra: Partial<GcImage> = {}): GcImage => ({ id, repoTags: [`example.com/${id}:1`], repoDigests: [], size, pinned: false, ...extra });

/** A manager over fakes; the image filesystem holds 1000 bytes, `used` of them used. */
function setup(opts: { policy?: Partial<ImageGCPolicy>; images?: GcImage[]; used?: number; logger?: Logger; onRemoved?: (reason: 'age' | 'space') => void } = {}) {
  const clock = new FakeClock();
  const fs = new FakeImageFs();
  fs.current = { capacityBytes: 1000, availableBytes: 1000 - (opts.used ?? 0) };
  const images = new FakeImageService(fs);
  images.images = opts.images ?? [];
  const events = new RecordingEventRecorder();
  const policy = { ...DEFAULT_IMAGE_GC_POLICY, ...opts.policy };
  const manager = new RealImageGCManager({ images, imageFs: fs, events, clock, logger: opts.logger ?? silentLogger(), onImageRemoved: opts.onRemoved }, policy);
  return { clock, fs, images, events, manager, beganGC: clock.now() };
}

/** Detects the images now, then lets `ms` pass (images must be older than MinAge to go). */
async function detectThenWait(s: ReturnType<typeof setup>, ms = 3 * MIN): Promise<void> {
  await s.manager.detectImages(s.clock.now());
  await s.clock.step(ms);
}

describe('image GC policy', () => {
  const cases: { name: string; policy: Partial<ImageGCPolicy>; want: RegExp[] }[] = [
    { name: 'the defaults are valid', policy: {}, want: [] },
    { name: 'high over 100', policy: { highThresholdPercent: 101 }, want: [/^IMAGE_GC_HIGH_THRESHOLD_PERCENT 101 must be between 0 and 100, inclusive$/] },
    { name: 'low under 0', policy: { lowThresholdPercent: -1 }, want: [/^IMAGE_GC_LOW_THRESHOLD_PERCENT -1 must be between 0 and 100/] },
    { name: 'low equal to high', policy: { lowThresholdPercent: 85 }, want: [/^IMAGE_GC_LOW_THRESHOLD_PERCENT 85 must be less than IMAGE_GC_HIGH_THRESHOLD_PERCENT 85$/] },
    { name: 'low over high', policy: { highThresholdPercent: 50, lowThresholdPercent: 60 }, want: [/must be less than IMAGE_GC_HIGH_THRESHOLD_PERCENT 50/] },
    { name: 'high 1, low 0 is valid', policy: { highThresholdPercent: 1, lowThresholdPercent: 0 }, want: [] },
    { name: 'a maximum age not over the minimum age', policy: { maxAgeMs: 2 * MIN }, want: [/^IMAGE_MAXIMUM_GC_AGE \(120000ms\) must be greater than IMAGE_MINIMUM_GC_AGE \(120000ms\), or 0 \(off\)$/] },
    { name: 'a negative maximum age', policy: { maxAgeMs: -1 }, want: [/^IMAGE_MAXIMUM_GC_AGE must not be negative$/] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const problems = imageGCPolicyProblems({ ...DEFAULT_IMAGE_GC_POLICY, ...tc.policy });
      assert.equal(problems.length, tc.want.length, problems.join('; '));
      tc.want.forEach((re, i) => assert.match(problems[i] ?? '', re));
    });
  }

  it('the settings become the policy, and a bad combination is a ConfigError naming both settings', () => {
    const cfg = { IMAGE_GC_HIGH_THRESHOLD_PERCENT: 85, IMAGE_GC_LOW_THRESHOLD_PERCENT: 80, IMAGE_MINIMUM_GC_AGE: 2 * MIN, IMAGE_MAXIMUM_GC_AGE: 0 };
    assert.deepEqual(imageGCPolicyOf(cfg), DEFAULT_IMAGE_GC_POLICY);
    assert.throws(
      () => imageGCPolicyOf({ ...cfg, IMAGE_GC_LOW_THRESHOLD_PERCENT: 90 }),
      (err: unknown) => err instanceof ConfigError && /IMAGE_GC_LOW_THRESHOLD_PERCENT 90 must be less than IMAGE_GC_HIGH_THRESHOLD_PERCENT 85/.test(err.message),
    );
  });

  it('the manager refuses an invalid policy', () => {
    assert.throws(() => setup({ policy: { lowThresholdPercent: 90 } }), /invalid image GC policy/);
  });
});

describe('normalizeImageRef', () => {
  const cases: [string, string][] = [
    ['busybox', 'docker.io/library/busybox:latest'],
    ['library/busybox:1.35', 'docker.io/library/busybox:1.35'],
    ['registry.k8s.io/pause:3.10', 'registry.k8s.io/pause:3.10'],
    ['localhost/kubelet-split/pause:3.10', 'localhost/kubelet-split/pause:3.10'],
    ['localhost:5000/app', 'localhost:5000/app:latest'],
    ['docker.io/library/nginx@sha256:abc', 'docker.io/library/nginx@sha256:abc'],
    ['sha256:abc', 'sha256:abc'],
  ];
  for (const [input, want] of cases) it(`${input} -> ${want}`, () => assert.equal(normalizeImageRef(input), want));
});

describe('detectImages', () => {
  it('records when an image was first detected and last used, and forgets images that are gone', async () => {
    const s = setup({ images: [img('a', 10), img('b', 20)] });
    const t0 = s.clock.now();
    s.images.inUse = ['a'];
    await s.manager.detectImages(t0);
    assert.deepEqual(s.manager.records().get('a'), { firstDetected: t0, lastUsed: t0, size: 10, pinned: false });
    assert.deepEqual(s.manager.records().get('b'), { firstDetected: t0, lastUsed: 0, size: 20, pinned: false });

    await s.clock.step(MIN);
    s.images.inUse = ['example.com/b:1'];
    s.images.images = [img('b', 25, { pinned: true }), img('c', 5)];
    await s.manager.detectImages(s.clock.now());
    const r = s.manager.records();
    assert.equal(r.has('a'), false, 'a is gone from the runtime');
    assert.deepEqual(r.get('b'), { firstDetected: t0, lastUsed: t0 + MIN, size: 25, pinned: true }, 'first detected stays; used by its name; size and pinned follow the runtime');
    assert.deepEqual(r.get('c'), { firstDetected: t0 + MIN, lastUsed: 0, size: 5, pinned: false });
  });

  it('a new term starts fresh, as a restarted kubelet', async () => {
    const s = setup({ images: [img('a', 10)] });
    await s.manager.detectImages(s.clock.now());
    s.manager.reset();
    assert.equal(s.manager.records().size, 0);
  });
});

describe('GarbageCollect', () => {
  it('does nothing below the high threshold', async () => {
    const s = setup({ images: [img('a', 100)], used: 840 });
    await detectThenWait(s);
    await s.manager.garbageCollect(s.beganGC);
    assert.deepEqual(s.images.removed, []);
    assert.deepEqual(s.events.events, []);
  });

  it('at the high threshold removes unused images least recently used first, and stops once at the low threshold', async () => {
    // 850 of 1000 used: 85 %; down to 80 % is 50 bytes.
    const s = setup({ images: [img('old', 30), img('older', 30), img('newer', 30), img('never', 30)], used: 850 });
    const t0 = s.clock.now();
    s.images.inUse = ['older'];
    await s.manager.detectImages(t0);
    await s.clock.step(MIN);
    s.images.inUse = ['old'];
    await s.manager.detectImages(s.clock.now());
    await s.clock.step(MIN);
    s.images.inUse = ['newer'];
    await s.manager.detectImages(s.clock.now());
    await s.clock.step(MIN);
    s.images.inUse = [];
    await s.manager.garbageCollect(s.beganGC);
    // never used (lastUsed 0) first, then the one used longest ago (older at t0); 60 bytes >= 50: stop.
    assert.deepEqual(s.images.removed, ['never', 'older']);
    assert.deepEqual(s.events.events, []);
  });

  it('breaks a tie in last use by first detection', async () => {
    // 900 used: 100 bytes to free, one image's worth.
    const s = setup({ images: [img('x', 100)], used: 900 });
    await s.manager.detectImages(s.clock.now());
    await s.clock.step(MIN);
    s.images.images = [img('y', 100), img('x', 100)];
    await s.manager.detectImages(s.clock.now());
    await s.clock.step(3 * MIN);
    await s.manager.garbageCollect(s.beganGC);
    assert.deepEqual(s.images.removed, ['x'], 'both never used: the one detected first goes');
  });

  const kept: { name: string; image: GcImage; arrange: (s: ReturnType<typeof setup>) => void }[] = [
    { name: 'an image a container uses (by id)', image: img('used', 500), arrange: (s) => void (s.images.inUse = ['used']) },
    { name: 'an image a container uses (by its tag)', image: img('used', 500), arrange: (s) => void (s.images.inUse = ['example.com/used:1']) },
    { name: 'a pinned image', image: img('pinned', 500, { pinned: true }), arrange: () => undefined },
    {
      name: "the runtime's sandbox image, named as the runtime's config names it",
      image: img('sha256:pause', 500, { repoTags: ['docker.io/library/pause:3.10'] }),
      arrange: (s) => void (s.images.sandbox = 'pause:3.10'),
    },
    { name: "the runtime's sandbox image, by id", image: img('sha256:pause', 500), arrange: (s) => void (s.images.sandbox = 'sha256:pause') },
  ];
  for (const tc of kept) {
    it(`never removes ${tc.name}`, async () => {
      const s = setup({ images: [tc.image, img('other', 10)], used: 990 });
      tc.arrange(s);
      await detectThenWait(s);
      await assert.rejects(s.manager.garbageCollect(s.beganGC), /Failed to garbage collect required amount of images/);
      assert.deepEqual(s.images.removed, ['other']);
    });
  }

  it('never removes an image first detected less than the minimum age ago', async () => {
    const s = setup({ images: [img('a', 500)], used: 990 });
    await s.manager.detectImages(s.clock.now());
    await s.clock.step(2 * MIN - 1);
    await assert.rejects(s.manager.garbageCollect(s.beganGC));
    assert.deepEqual(s.images.removed, []);
    await s.clock.step(1);
    await s.manager.garbageCollect(s.beganGC);
    assert.deepEqual(s.images.removed, ['a']);
  });

  it('with too little eligible, removes what it may and records FreeDiskSpaceFailed with upstream message', async () => {
    // 990 used; to 80 %: 1000 * 20 / 100 - 10 = 190 bytes to free, 40 eligible.
    const s = setup({ images: [img('a', 30), img('b', 10), img('busy', 500)], used: 990 });
    s.images.inUse = ['busy'];
    await detectThenWait(s);
    const want = 'Failed to garbage collect required amount of images. Attempted to free 190 bytes, but only found 40 bytes eligible to free.';
    await assert.rejects(s.manager.garbageCollect(s.beganGC), { message: want });
    assert.deepEqual(s.images.removed.sort(), ['a', 'b']);
    assert.deepEqual(s.events.events, [{ uid: '', type: 'Warning', reason: 'FreeDiskSpaceFailed', message: want }]);
  });

  it('a capacity of 0 is InvalidDiskCapacity', async () => {
    const s = setup({ images: [img('a', 30)] });
    s.fs.current = { capacityBytes: 0, availableBytes: 0 };
    await assert.rejects(s.manager.garbageCollect(s.beganGC), /invalid capacity 0 on image filesystem/);
    assert.deepEqual(s.events.reasons(), ['InvalidDiskCapacity']);
  });

  it('takes available above capacity as capacity (no usage)', async () => {
    const s = setup({ images: [img('a', 30)], policy: { highThresholdPercent: 1, lowThresholdPercent: 0 } });
    s.fs.current = { capacityBytes: 1000, availableBytes: 5000 };
    await detectThenWait(s);
    await s.manager.garbageCollect(s.beganGC);
    assert.deepEqual(s.images.removed, []);
  });

  it('a failed removal does not stop the others, and the pass fails naming it', async () => {
    const s = setup({ images: [img('a', 100), img('b', 100)], used: 900 });
    s.images.failRemove.add('a');
    await detectThenWait(s);
    await assert.rejects(s.manager.garbageCollect(s.beganGC), /wanted to free 100 bytes, but freed 100 bytes space with errors in image deletion: \[.*failed to remove a\]/);
    assert.deepEqual(s.images.removed, ['b']);
    assert.equal(s.manager.records().has('a'), true, 'a failed removal keeps the record');
    assert.deepEqual(s.events.events, [], 'no FreeDiskSpaceFailed: the pass failed before');
  });

  it('logs one line per removed image', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>), cb()) });
    const s = setup({ images: [img('a', 100), img('b', 100)], used: 1000, logger: createLogger({ service: 'sync-loop', node: 'n', instance: 'i' }, 'info', sink) });
    await detectThenWait(s);
    await s.manager.garbageCollect(s.beganGC);
    const removals = lines.filter((l) => l['msg'] === 'Removing image to free bytes');
    assert.deepEqual(
      removals.map((l) => [l['imageID'], l['size'], l['reason']]),
      [
        ['a', 100, 'space'],
        ['b', 100, 'space'],
      ],
    );
  });

  it('counts each removed image by reason (kubelet_image_garbage_collected_total)', async () => {
    const reasons: string[] = [];
    const s = setup({ images: [img('stale', 10), img('a', 200)], used: 1000, policy: { maxAgeMs: 10 * MIN }, onRemoved: (r) => reasons.push(r) });
    s.images.inUse = ['a'];
    await detectThenWait(s, 11 * MIN);
    await detectThenWait(s, 1000);
    s.images.inUse = [];
    // stale was never used (older than the maximum age); a was used a second ago, then goes for space.
    await s.manager.garbageCollect(s.beganGC);
    assert.deepEqual(reasons, ['age', 'space']);
    assert.deepEqual(s.images.removed, ['stale', 'a']);
  });

  describe('maximum age', () => {
    it('removes images unused for longer than it, whatever the usage, once it has passed since GC began', async () => {
      const s = setup({ images: [img('stale', 10), img('fresh', 10)], policy: { maxAgeMs: 10 * MIN } });
      s.images.inUse = ['stale', 'fresh'];
      await s.manager.detectImages(s.clock.now());
      await s.clock.step(8 * MIN);
      s.images.inUse = ['fresh'];
      await s.manager.detectImages(s.clock.now());
      await s.clock.step(2 * MIN);
      s.images.inUse = [];
      // 10 minutes since GC began: not more, so nothing by age yet.
      await s.manager.garbageCollect(s.beganGC);
      assert.deepEqual(s.images.removed, []);
      await s.clock.step(1);
      await s.manager.garbageCollect(s.beganGC);
      assert.deepEqual(s.images.removed, ['stale'], 'unused for 10m + 1ms; fresh was used 2m ago');
    });

    it('is off at 0', async () => {
      const s = setup({ images: [img('a', 10)] });
      await detectThenWait(s, 60 * MIN);
      await s.manager.garbageCollect(s.beganGC);
      assert.deepEqual(s.images.removed, []);
    });
  });
});

describe('ImageGarbageCollector (StartGarbageCollection)', () => {
  it('logs a first failure only, records ImageGCFailed for a repeated one, and starts over after a success', async () => {
    const s = setup({ images: [img('a', 10)] });
    const gc = new ImageGarbageCollector({ manager: s.manager, events: s.events, clock: s.clock, logger: silentLogger() });
    gc.startTerm();
    s.images.failList = true;
    assert.equal(await gc.garbageCollect(), false);
    assert.equal(s.events.events.length, 0, 'a first failure is only logged');
    assert.equal(await gc.garbageCollect(), false);
    assert.deepEqual(s.events.reasons(), ['ImageGCFailed']);
    assert.match(s.events.events[0]?.message ?? '', /connection refused/);
    s.images.failList = false;
    assert.equal(await gc.garbageCollect(), true);
    s.images.failList = true;
    assert.equal(await gc.garbageCollect(), false);
    assert.deepEqual(s.events.reasons(), ['ImageGCFailed'], 'a failure after a success is a first one again');
  });

  it('a new term forgets the records and measures the maximum age from its start', async () => {
    const s = setup({ images: [img('a', 10)], policy: { maxAgeMs: 10 * MIN } });
    const gc = new ImageGarbageCollector({ manager: s.manager, events: s.events, clock: s.clock, logger: silentLogger() });
    gc.startTerm();
    await gc.garbageCollect();
    await s.clock.step(20 * MIN);
    gc.startTerm();
    assert.equal(s.manager.records().size, 0);
    await gc.garbageCollect();
    assert.deepEqual(s.images.removed, [], 'only 0 ms since this term began');
    await s.clock.step(10 * MIN + 1);
    await gc.garbageCollect();
    assert.deepEqual(s.images.removed, ['a']);
  });

  const enabled: { name: string; policy: Partial<ImageGCPolicy>; want: boolean }[] = [
    { name: 'on by default', policy: {}, want: true },
    { name: 'off at a high threshold of 100 % without a maximum age', policy: { highThresholdPercent: 100 }, want: false },
    { name: 'on at 100 % with a maximum age', policy: { highThresholdPercent: 100, maxAgeMs: 10 * MIN }, want: true },
  ];
  for (const tc of enabled) {
    it(tc.name, () => {
      const s = setup({ policy: tc.policy });
      assert.equal(new ImageGarbageCollector({ manager: s.manager, events: s.events, clock: s.clock, logger: silentLogger() }).enabled, tc.want);
    });
  }
});

describe('CRI adapters', () => {
  it("the sandbox image from containerd's verbose Status config", () => {
    assert.equal(sandboxImageOf({ config: JSON.stringify({ sandboxImage: 'localhost/kubelet-split/pause:3.10', snapshotter: 'overlayfs' }) }), 'localhost/kubelet-split/pause:3.10');
    assert.equal(sandboxImageOf({}), undefined);
    assert.equal(sandboxImageOf({ config: 'not json' }), undefined);
  });

  it('the image filesystem: used bytes from ImageFsInfo, capacity and available from statfs of its mountpoint', async () => {
    const cri = new FakeCri().onImage('ImageFsInfo', () => ({
      imageFilesystems: [{ timestamp: '1', fsId: { mountpoint: '/var/lib/containerd/snap' }, usedBytes: { value: '300' }, inodesUsed: { value: '3' } }],
      containerFilesystems: [],
    }));
    const asked: string[] = [];
    const fs = new CriImageFs(cri, (path) => (asked.push(path), Promise.resolve({ capacityBytes: 1000, availableBytes: 600 })));
    assert.deepEqual(await fs.stats(), { capacityBytes: 1000, availableBytes: 600, usedBytes: 300, mountpoint: '/var/lib/containerd/snap' });
    assert.deepEqual(asked, ['/var/lib/containerd/snap']);
  });

  it('an image filesystem whose mountpoint cannot be measured is an error naming it, not a guess', async () => {
    const cri = new FakeCri().onImage('ImageFsInfo', () => ({ imageFilesystems: [{ timestamp: '1', fsId: { mountpoint: '/nowhere' }, usedBytes: { value: '1' } }], containerFilesystems: [] }));
    const fs = new CriImageFs(cri, () => Promise.reject(new Error('ENOENT: no such file or directory')));
    await assert.rejects(fs.stats(), /get filesystem info of the image filesystem \/nowhere: ENOENT/);
    const none = new CriImageFs(new FakeCri().onImage('ImageFsInfo', () => ({ imageFilesystems: [], containerFilesystems: [] })));
    await assert.rejects(none.stats(), /imageFs information is unavailable/);
  });
});
