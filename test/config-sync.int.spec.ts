/**
 * config-source and sync-loop on a real nats-server: manifests written,
 * edited, broken, fixed and deleted in a temporary directory give the
 * expected PodUpdate operations and dispatches, in order, nothing for a
 * broken manifest; a killed and restarted sync loop gets its pods back from
 * KV and dispatches nothing twice, but does apply a change it missed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { MessageTypes, type EventMessage, type PodUpdateMessage, type UpdatePodOptionsMessage } from '@app/contracts';
import { freePort, startNats, startService, type NatsServer, type ServiceProcess } from '../deploy/local/stack.js';

const NODE = 'sync-int';
const SHARDS = 4;
const dec = new TextDecoder();

interface Seen {
  kind: 'config' | 'work' | 'event';
  subject: string;
  op?: string;
  names?: string[];
  updateType?: string;
  uid?: string;
  name?: string;
  message?: string;
}

const manifest = (name: string, image: string, command = 'sleep 3600') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers:
    - name: main
      image: ${image}
      command: ["sh", "-c", "${command}"]
`;

describe('config-source -> sync-loop -> dispatchWork on a real nats-server', { timeout: 180_000 }, () => {
  let nats: NatsServer;
  let nc: NatsConnection;
  let dir: string;
  let configSource: ServiceProcess;
  let syncLoop: ServiceProcess;
  let seen: Seen[] = [];
  const env = () => ({ NODE_NAME: NODE, NATS_URL: nats.url, LOG_LEVEL: 'warn', POD_WORKER_SHARDS: String(SHARDS) });

  async function waitFor(what: string, pred: (s: Seen[]) => boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (pred(seen)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail(`timed out waiting for ${what}; seen: ${JSON.stringify(seen, null, 1)}`);
  }
  const quiet = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const ops = () => seen.filter((s) => s.kind === 'config').map((s) => `${s.op}:${(s.names ?? []).join(',')}`);
  const work = () => seen.filter((s) => s.kind === 'work').map((s) => `${s.updateType}:${s.uid}`);

  before(async () => {
    nats = await startNats();
    nc = await connect({ servers: nats.url, name: 'config-sync-test', ...nats.auth() });
    const record = (kind: Seen['kind']) => (_e: unknown, m: { subject: string; data: Uint8Array }) => {
      const body = JSON.parse(dec.decode(m.data)) as Record<string, unknown>;
      if (kind === 'config') {
        const u = body as unknown as PodUpdateMessage;
        if (u.op) seen.push({ kind, subject: m.subject, op: u.op, names: u.pods.map((p) => p.metadata.name ?? '') });
      } else if (kind === 'work') {
        const w = body as unknown as UpdatePodOptionsMessage;
        seen.push({ kind, subject: m.subject, updateType: w.updateType, uid: w.pod.metadata.uid ?? '', name: w.pod.metadata.name ?? '' });
      } else {
        seen.push({ kind, subject: m.subject, message: (body as unknown as EventMessage).message });
      }
    };
    nc.subscribe(`kubelet.${NODE}.config.*`, { callback: record('config') });
    // The test stands for the pod workers: it answers each dispatch as the shard's owner does (work_accepted), or the sync loop sends it again.
    const recordWork = record('work');
    for (let s = 0; s < SHARDS; s++) {
      nc.subscribe(`kubelet.${NODE}.work.${s}.*`, {
        callback: (e, m) => {
          recordWork(e, m);
          if (m.reply) m.respond(JSON.stringify({ type: MessageTypes.workAccepted, podUid: m.subject.split('.').at(-1), shard: s }));
        },
      });
    }
    nc.subscribe(`kubelet.${NODE}.events.*`, { callback: record('event') });
    await nc.flush();
    dir = mkdtempSync(join(tmpdir(), 'ks-manifests-'));
    syncLoop = await startService('sync-loop', env(), { port: await freePort(), instance: 's1' });
    configSource = await startService('config-source', { ...env(), POD_MANIFEST_PATH: dir, FILE_CHECK_FREQUENCY: '1s' }, { port: await freePort(), instance: 'c1' });
  });

  after(async () => {
    await Promise.all([configSource?.stop(), syncLoop?.stop()]);
    await nc?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  let webUid = '';

  it('a new manifest: ADD, then SyncPodCreate on the pod\'s shard', async () => {
    writeFileSync(join(dir, 'web.yaml'), manifest('web', 'localhost/kubelet-split/busybox:1.35'));
    await waitFor('the ADD and its dispatch', (s) => s.some((x) => x.kind === 'work'));
    assert.deepEqual(ops(), [`add:web-${NODE}`]);
    const w = seen.find((x) => x.kind === 'work');
    webUid = w?.uid ?? '';
    assert.match(webUid, /^[0-9a-f]{32}$/);
    assert.deepEqual(work(), [`SyncPodCreate:${webUid}`]);
    assert.match(w?.subject ?? '', new RegExp(`^kubelet\\.${NODE}\\.work\\.[0-${SHARDS - 1}]\\.${webUid}$`));
  });

  it('an edit: a new UID (the kubelet hashes the whole pod), the old generation REMOVEd and killed, the new one ADDed and created', async () => {
    seen = [];
    writeFileSync(join(dir, 'web.yaml'), manifest('web', 'localhost/kubelet-split/busybox:1.35', 'sleep 7200'));
    await waitFor('both dispatches', (s) => s.filter((x) => x.kind === 'work').length >= 2);
    assert.deepEqual(ops(), [`remove:web-${NODE}`, `add:web-${NODE}`]);
    const created = seen.find((x) => x.kind === 'work' && x.updateType === 'SyncPodCreate')?.uid ?? '';
    assert.match(created, /^[0-9a-f]{32}$/);
    assert.notEqual(created, webUid);
    assert.deepEqual(work(), [`SyncPodKill:${webUid}`, `SyncPodCreate:${created}`]);
    webUid = created;
  });

  it('a broken edit and a broken new file: a Warning event naming the file, and nothing dispatched', async () => {
    seen = [];
    writeFileSync(join(dir, 'web.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: [broken\n');
    writeFileSync(join(dir, 'bad.yaml'), manifest('bad', ''));
    await waitFor('two Warning events', (s) => s.filter((x) => x.kind === 'event').length >= 2);
    await quiet(2500); // two more file checks
    const messages = seen.filter((x) => x.kind === 'event').map((x) => x.message ?? '');
    assert.ok(messages.some((m) => m.startsWith(join(dir, 'web.yaml'))), messages.join('\n'));
    assert.ok(messages.some((m) => m.startsWith(join(dir, 'bad.yaml')) && /image/.test(m)), messages.join('\n'));
    assert.deepEqual(ops(), []);
    assert.deepEqual(work(), []);
  });

  it('fixing them recovers both', async () => {
    seen = [];
    writeFileSync(join(dir, 'web.yaml'), manifest('web', 'localhost/kubelet-split/busybox:1.35', 'sleep 9000'));
    writeFileSync(join(dir, 'bad.yaml'), manifest('bad', 'localhost/kubelet-split/busybox:1.35'));
    await waitFor('three dispatches', (s) => s.filter((x) => x.kind === 'work').length >= 3);
    assert.deepEqual(ops().sort(), [`add:bad-${NODE},web-${NODE}`, `remove:web-${NODE}`].sort());
    assert.ok(work().includes(`SyncPodKill:${webUid}`), 'the last good generation of web is killed');
    assert.equal(work().filter((w) => w.startsWith('SyncPodCreate:')).length, 2, 'bad and the new web are created');
    webUid = seen.find((x) => x.kind === 'work' && x.updateType === 'SyncPodCreate' && x.name === `web-${NODE}`)?.uid ?? '';
  });

  it('the sync loop killed and restarted: pods back from KV, nothing dispatched twice, a missed change applied once', async () => {
    syncLoop.process.kill('SIGKILL');
    await new Promise((r) => syncLoop.process.once('exit', r));
    // A change while the sync loop is down: its PodUpdate is lost on core NATS.
    seen = [];
    unlinkSync(join(dir, 'bad.yaml'));
    await waitFor('the REMOVE to be published', (s) => s.some((x) => x.kind === 'config' && x.op === 'remove'));
    seen = [];
    syncLoop = await startService('sync-loop', env(), { port: await freePort(), instance: 's2' });
    const state = (await (await fetch(`http://127.0.0.1:${syncLoop.port}/pods`)).json()) as { pods: { pod: { metadata: { name: string } } }[] };
    assert.ok(state.pods.some((r) => r.pod.metadata.name === `web-${NODE}`), 'web is back from KV');
    await waitFor('the missed REMOVE to be dispatched', (s) => s.some((x) => x.kind === 'work'));
    await quiet(2500);
    assert.deepEqual(work().filter((w) => !w.endsWith(webUid)).map((w) => w.split(':')[0]), ['SyncPodKill']);
    assert.deepEqual(work().filter((w) => w.endsWith(webUid)), [], 'nothing for web: it did not change');
  });

  it('a deleted manifest: REMOVE, then SyncPodKill', async () => {
    seen = [];
    unlinkSync(join(dir, 'web.yaml'));
    await waitFor('the kill', (s) => s.some((x) => x.kind === 'work'));
    assert.deepEqual(ops(), [`remove:web-${NODE}`]);
    assert.deepEqual(work(), [`SyncPodKill:${webUid}`]);
  });
});

describe('config-source http source on a real nats-server', { timeout: 60_000 }, () => {
  it('a PodList served on loopback: ADD of its pods, then config.ready', async () => {
    const { createServer } = await import('node:http');
    let body = JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'remote' }, spec: { containers: [{ name: 'c', image: 'localhost/kubelet-split/busybox:1.35' }] } }] });
    let auth = '';
    const server = createServer((req, res) => {
      auth = req.headers['x-token'] as string;
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const nats = await startNats();
    const nc = await connect({ servers: nats.url, ...nats.auth() });
    const got: string[] = [];
    nc.subscribe('kubelet.http-int.config.*', { callback: (_e, m) => void got.push(`${m.subject.split('.').pop()}:${((JSON.parse(dec.decode(m.data)) as PodUpdateMessage).pods ?? []).map((p) => p.metadata.name).join(',')}`) });
    await nc.flush();
    const cs = await startService('config-source', { NODE_NAME: 'http-int', NATS_URL: nats.url, LOG_LEVEL: 'warn', MANIFEST_URL: `http://127.0.0.1:${port}/pods`, MANIFEST_URL_HEADER: 'X-Token:secret', HTTP_CHECK_FREQUENCY: '1s' }, { port: await freePort(), instance: 'h' });
    try {
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && !got.includes('ready:')) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(got.slice(0, 2), ['add:remote-http-int', 'ready:']);
      assert.equal(auth, 'secret');
      body = 'not: [yaml';
      await new Promise((r) => setTimeout(r, 2500));
      assert.ok(!got.some((g) => g.startsWith('remove:')), 'a broken listing removes nothing');
    } finally {
      await cs.stop();
      await nc.close();
      await nats.stop();
      server.close();
    }
  });
});
