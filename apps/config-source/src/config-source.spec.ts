import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { EventMessage, PodUpdateMessage } from '@app/contracts';
import { NatsEventRecorder } from '@app/nats';
import { silentLogger } from '@app/observability';
import { NatsPodUpdateOutbox } from './adapters/nats-pod-update-outbox.js';
import { PodConfigPublisher } from './pod-config-publisher.js';
import { ListingBuilder } from './listing.js';
import { ManifestDirectory, ManifestFetcher, type DirectoryRead, type FetchResult } from './ports.js';
import { PodConfig } from './pod-config.js';
import { FILE_CHANGE_DEBOUNCE_MS, FileSource, HttpSource } from './sources.js';

const NODE = 'node-a';
const manifest = (name: string, image = 'busybox:1.35', extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers:
    - name: main
      image: ${image}${extra}
`;

describe('ListingBuilder: a directory of manifests to a listing', () => {
  it('admits good pods and names the file and reason of each refusal', () => {
    const b = new ListingBuilder('file', NODE);
    const l = b.build([
      { location: '/m/good.yaml', text: manifest('web') },
      { location: '/m/syntax.yaml', text: 'apiVersion: v1\nkind: Pod\nmetadata: [oops' },
      { location: '/m/kind.yaml', text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n' },
      { location: '/m/noname.yaml', text: 'apiVersion: v1\nkind: Pod\nmetadata: {}\nspec:\n  containers: [{name: c, image: x:1}]\n' },
      { location: '/m/dupc.yaml', text: 'apiVersion: v1\nkind: Pod\nmetadata: {name: dup}\nspec:\n  containers: [{name: c, image: x:1}, {name: c, image: y:1}]\n' },
      { location: '/m/unreadable.yaml', error: 'cannot read: EACCES' },
      { location: '/m/huge.yaml', size: 11 * 1024 * 1024, text: '' },
    ]);
    assert.deepEqual(l.pods.map((p) => p.metadata.name), [`web-${NODE}`]);
    const byFile = new Map(l.problems.map((p) => [p.location, p.reason]));
    assert.match(byFile.get('/m/syntax.yaml') ?? '', /line/i);
    assert.match(byFile.get('/m/kind.yaml') ?? '', /Deployment/);
    assert.match(byFile.get('/m/noname.yaml') ?? '', /metadata\.name/);
    assert.match(byFile.get('/m/dupc.yaml') ?? '', /Duplicate value/);
    assert.match(byFile.get('/m/unreadable.yaml') ?? '', /EACCES/);
    assert.match(byFile.get('/m/huge.yaml') ?? '', /larger than/);
  });

  it('several pods in one file, and two pods with one name across files: the second is refused', () => {
    const b = new ListingBuilder('file', NODE);
    const l = b.build([
      { location: '/m/a.yaml', text: `${manifest('one')}---\n${manifest('two')}` },
      { location: '/m/b.yaml', text: manifest('one', 'other:1') },
    ]);
    assert.deepEqual(l.pods.map((p) => p.metadata.name).sort(), [`one-${NODE}`, `two-${NODE}`]);
    assert.match(l.problems.find((p) => p.location === '/m/b.yaml')?.reason ?? '', /duplicate pod default\/one-node-a: already defined in \/m\/a.yaml/);
  });

  it('a broken edit keeps the last good pod; fixing it gives the new one; deleting the file removes it', () => {
    const b = new ListingBuilder('file', NODE);
    const first = b.build([{ location: '/m/web.yaml', text: manifest('web') }]);
    const uid = first.pods[0]?.metadata.uid;
    const broken = b.build([{ location: '/m/web.yaml', text: 'kind: Pod\nmetadata: [' }]);
    assert.deepEqual(broken.pods.map((p) => p.metadata.uid), [uid]);
    const invalid = b.build([{ location: '/m/web.yaml', text: manifest('web', '') }]);
    assert.deepEqual(invalid.pods.map((p) => p.metadata.uid), [uid], 'an invalid version of a named pod keeps the last good one');
    const fixed = b.build([{ location: '/m/web.yaml', text: manifest('web', 'busybox:1.36') }]);
    assert.equal(fixed.pods[0]?.spec.containers[0]?.image, 'busybox:1.36');
    assert.equal(b.build([]).pods.length, 0);
  });

  it('an emptied file (one being written) keeps the last good pod and says so; a new empty file admits nothing', () => {
    const b = new ListingBuilder('file', NODE);
    const uid = b.build([{ location: '/m/web.yaml', text: manifest('web') }]).pods[0]?.metadata.uid;
    const emptied = b.build([{ location: '/m/web.yaml', text: '' }]);
    assert.deepEqual(emptied.pods.map((p) => p.metadata.uid), [uid]);
    assert.deepEqual(emptied.problems, [{ location: '/m/web.yaml', reason: 'the manifest is empty' }]);
    assert.equal(b.build([{ location: '/m/web.yaml', text: ' \n' }]).pods.length, 1);
    assert.equal(new ListingBuilder('file', NODE).build([{ location: '/m/new.yaml', text: '' }]).pods.length, 0);
  });

  it('a new file that is broken admits nothing', () => {
    const b = new ListingBuilder('file', NODE);
    assert.equal(b.build([{ location: '/m/new.yaml', text: 'metadata: [' }]).pods.length, 0);
  });
});

describe('PodConfig', () => {
  it('stamps config.seen once and keeps it; sources are ready after one listing each', () => {
    const pc = new PodConfig(['file', 'http']);
    const b = new ListingBuilder('file', NODE);
    const pods = b.build([{ location: '/m/web.yaml', text: manifest('web') }]).pods;
    const ops1 = pc.apply('file', pods, new Date('2026-01-01T00:00:00Z'));
    assert.equal(ops1.add.length, 1);
    assert.equal(ops1.add[0]?.metadata.annotations?.['kubernetes.io/config.seen'], '2026-01-01T00:00:00.000Z');
    assert.equal(pc.allReady(), false);
    const ops2 = pc.apply('file', pods, new Date('2026-01-02T00:00:00Z'));
    assert.equal(Object.values(ops2).flat().length, 0);
    assert.equal(pc.snapshot()[0]?.pods[0]?.metadata.annotations?.['kubernetes.io/config.seen'], '2026-01-01T00:00:00.000Z');
    pc.apply('http', [], new Date());
    assert.equal(pc.allReady(), true);
  });

  const created = (pc: PodConfig, uid: string | undefined) => pc.snapshot().flatMap((s) => s.pods).find((p) => p.metadata.uid === uid)?.metadata.creationTimestamp;

  it('a static pod gets creationTimestamp = first seen, kept across re-reads and edits, UID untouched', () => {
    const pc = new PodConfig(['file']);
    const b = new ListingBuilder('file', NODE);
    const pods = b.build([{ location: '/m/web.yaml', text: manifest('web') }]).pods;
    assert.equal(pods[0]?.metadata.creationTimestamp, undefined, 'the file source sets none');
    const uid = pods[0]?.metadata.uid;
    const ops1 = pc.apply('file', pods, new Date('2026-01-01T00:00:00Z'));
    assert.equal(ops1.add[0]?.metadata.creationTimestamp, '2026-01-01T00:00:00.000Z');
    assert.equal(ops1.add[0]?.metadata.uid, uid);
    assert.equal(Object.values(pc.apply('file', pods, new Date('2026-01-02T00:00:00Z'))).flat().length, 0, 'a re-read is no change');
    assert.equal(created(pc, uid), '2026-01-01T00:00:00.000Z');
    const edited = b.build([{ location: '/m/web.yaml', text: manifest('web', 'busybox:1.36') }]).pods;
    const ops3 = pc.apply('file', edited, new Date('2026-01-03T00:00:00Z'));
    const changed = [...ops3.add, ...ops3.update];
    assert.equal(changed.length, 1);
    assert.equal(changed[0]?.metadata.creationTimestamp, changed[0]?.metadata.uid === uid ? '2026-01-01T00:00:00.000Z' : '2026-01-03T00:00:00.000Z');
  });

  it('after a restart, a pod the sync loop already holds keeps its first-seen time; a new pod gets now', () => {
    const b = new ListingBuilder('file', NODE);
    const pods = b.build([{ location: '/m/web.yaml', text: manifest('web') }, { location: '/m/new.yaml', text: manifest('new') }]).pods;
    const web = pods.find((p) => p.metadata.name === `web-${NODE}`)?.metadata.uid ?? '';
    const fresh = pods.find((p) => p.metadata.name === `new-${NODE}`)?.metadata.uid ?? '';
    const pc = new PodConfig(['file']);
    pc.restoreFirstSeen(new Map([[web, '2025-12-24T10:00:00.000Z']]));
    const ops = pc.apply('file', pods, new Date('2026-01-05T00:00:00Z'));
    assert.equal(ops.add.find((p) => p.metadata.uid === web)?.metadata.creationTimestamp, '2025-12-24T10:00:00.000Z');
    assert.equal(ops.add.find((p) => p.metadata.uid === fresh)?.metadata.creationTimestamp, '2026-01-05T00:00:00.000Z');
  });

  it('a pod that has a creationTimestamp (an apiserver pod) keeps its own', () => {
    const pc = new PodConfig(['api']);
    const pod = { metadata: { name: 'api-pod', namespace: 'default', uid: 'u-api', creationTimestamp: '2025-06-01T00:00:00Z' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } };
    pc.restoreFirstSeen(new Map([['u-api', '2025-12-24T10:00:00.000Z']]));
    const ops = pc.apply('api', [pod], new Date('2026-01-05T00:00:00Z'));
    assert.equal(ops.add[0]?.metadata.creationTimestamp, '2025-06-01T00:00:00Z');
  });
});

class Bus {
  sent: { subject: string; payload: unknown }[] = [];
  publish(subject: string, payload: unknown): void {
    this.sent.push({ subject, payload });
  }
  ops(): string[] {
    return this.sent.filter((s) => /\.config\.(add|update|remove|reconcile|delete)$/.test(s.subject)).map((s) => `${(s.payload as PodUpdateMessage).op}:${(s.payload as PodUpdateMessage).pods.map((p) => p.metadata.name).join(',')}`);
  }
}

/** The publisher with its NATS adapters on a recording bus: what goes out on which subject. */
function publisher(bus: Bus, sources: string[]): PodConfigPublisher {
  const clock = new FakeClock(0);
  return new PodConfigPublisher(new NatsPodUpdateOutbox(bus, NODE), new NatsEventRecorder(bus, NODE, clock), clock, silentLogger(), sources);
}

describe('PodConfigPublisher', () => {
  it('publishes operations in the kubelet order, config.ready once ready, one Warning event per new problem', () => {
    const bus = new Bus();
    const svc = publisher(bus, ['file']);
    const b = new ListingBuilder('file', NODE);
    svc.onListing('file', b.build([{ location: '/m/a.yaml', text: manifest('a') }, { location: '/m/b.yaml', text: manifest('b') }]));
    assert.deepEqual(bus.ops(), [`add:a-${NODE},b-${NODE}`]);
    assert.ok(bus.sent.some((s) => s.subject === `kubelet.${NODE}.config.ready`));
    bus.sent = [];
    svc.onListing('file', b.build([{ location: '/m/a.yaml', text: manifest('a', 'x:2') }, { location: '/m/c.yaml', text: manifest('c') }, { location: '/m/bad.yaml', text: 'kind: [' }]));
    // A changed manifest is a new UID (applyDefaults hashes the whole pod): the old generation removed, the new one added.
    assert.deepEqual(bus.ops(), [`remove:a-${NODE},b-${NODE}`, `add:a-${NODE},c-${NODE}`]);
    const events = bus.sent.filter((s) => s.subject === `kubelet.${NODE}.events.${NODE}`).map((s) => s.payload as EventMessage);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.eventType, 'Warning');
    assert.match(events[0]?.message ?? '', /^\/m\/bad.yaml: /);
    bus.sent = [];
    svc.onListing('file', b.build([{ location: '/m/a.yaml', text: manifest('a', 'x:2') }, { location: '/m/c.yaml', text: manifest('c') }, { location: '/m/bad.yaml', text: 'kind: [' }]));
    assert.equal(bus.sent.filter((s) => s.subject.includes('.events.')).length, 0, 'the same problem is not reported again');
  });

  it('with no source configured it is ready at once', () => {
    const bus = new Bus();
    const svc = publisher(bus, []);
    svc.start([]);
    assert.deepEqual(bus.sent.map((s) => s.subject), [`kubelet.${NODE}.config.ready`]);
  });
});

class FakeDirectory extends ManifestDirectory {
  files = new Map<string, string>();
  missing = false;
  reads = 0;
  onChange?: () => void;
  read(): Promise<DirectoryRead> {
    this.reads++;
    if (this.missing) return Promise.resolve({ missing: true, error: 'ENOENT' });
    return Promise.resolve({ missing: false, manifests: [...this.files].map(([location, text]) => ({ location, text })) });
  }
  watch(_dir: string, onChange: () => void): () => void {
    this.onChange = onChange;
    return () => (this.onChange = undefined);
  }
}

describe('FileSource', () => {
  it('reads at start, on change (debounced) and every check period; a missing directory is an empty listing', async () => {
    const dir = new FakeDirectory();
    dir.files.set('/m/a.yaml', manifest('a'));
    const clock = new FakeClock(0);
    const listings: string[][] = [];
    const src = new FileSource('/m', NODE, dir, clock, silentLogger(), 20_000, (_s, l) => listings.push(l.pods.map((p) => p.metadata.name ?? '')));
    src.start();
    await clock.step(0);
    assert.deepEqual(listings, [[`a-${NODE}`]]);
    dir.files.set('/m/b.yaml', manifest('b'));
    const reads = dir.reads;
    dir.onChange?.();
    await clock.step(FILE_CHANGE_DEBOUNCE_MS - 1);
    dir.onChange?.();
    await clock.step(FILE_CHANGE_DEBOUNCE_MS - 1);
    assert.equal(dir.reads, reads, 'events gathered while they keep coming');
    await clock.step(1);
    assert.equal(dir.reads, reads + 1, 'then one read');
    assert.equal(listings.length, 2);
    assert.deepEqual(listings[1], [`a-${NODE}`, `b-${NODE}`]);
    await clock.step(20_000);
    assert.equal(listings.length, 3);
    dir.missing = true;
    await clock.step(20_000);
    assert.deepEqual(listings.at(-1), []);
    src.stop();
  });
});

class FakeFetcher extends ManifestFetcher {
  answer: FetchResult = { ok: false, error: 'not yet' };
  calls: { url: string; headers: Record<string, string> }[] = [];
  fetch(url: string, headers: Record<string, string>): Promise<FetchResult> {
    this.calls.push({ url, headers });
    return Promise.resolve(this.answer);
  }
}

describe('HttpSource', () => {
  const URL = 'http://127.0.0.1:9/pods';
  const podList = (...names: string[]) =>
    JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: names.map((n) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: n }, spec: { containers: [{ name: 'c', image: 'x:1' }] } })) });

  it('polls with the headers; a failed fetch is a problem and keeps the last listing; not ready until one succeeds', async () => {
    const fetcher = new FakeFetcher();
    const clock = new FakeClock(0);
    const listings: string[][] = [];
    const problems: string[] = [];
    const src = new HttpSource(URL, { Authorization: 'Bearer x' }, NODE, fetcher, clock, silentLogger(), 20_000, (_s, l) => listings.push(l.pods.map((p) => p.metadata.name ?? '')), (_s, ps) => problems.push(...ps.map((p) => p.reason)));
    src.start();
    await clock.step(0);
    assert.deepEqual(listings, []);
    assert.deepEqual(problems, ['not yet']);
    assert.deepEqual(fetcher.calls[0], { url: URL, headers: { Authorization: 'Bearer x' } });
    fetcher.answer = { ok: true, text: podList('a', 'b') };
    await clock.step(20_000);
    assert.deepEqual(listings, [[`a-${NODE}`, `b-${NODE}`]]);
    fetcher.answer = { ok: false, error: 'HTTP 500' };
    await clock.step(20_000);
    assert.equal(listings.length, 1, 'no new listing on a failed fetch');
    fetcher.answer = { ok: true, text: JSON.stringify((JSON.parse(podList('c')) as { items: unknown[] }).items) };
    await clock.step(20_000);
    assert.deepEqual(listings.at(-1), [`c-${NODE}`]);
    src.stop();
  });

  it('http pods get their UID from the URL', () => {
    const a = new ListingBuilder('http', NODE).build([{ location: URL, text: podList('a') }]).pods[0];
    const b = new ListingBuilder('http', NODE).build([{ location: `${URL}2`, text: podList('a') }]).pods[0];
    assert.equal(a?.metadata.annotations?.['kubernetes.io/config.source'], 'http');
    assert.notEqual(a?.metadata.uid, b?.metadata.uid);
  });
});
