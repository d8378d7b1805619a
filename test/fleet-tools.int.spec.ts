/**
 * The CLI's fleet views (`get pods --fleet`, `topology --fleet`, `trace
 * --fleet`, docs/cli.md) against a real fabric: the hub of three
 * (test/fleet/hub.ts) and two real leaf nats-servers, one per node, each
 * with its JetStream domain. On each leaf a small responder, connected as
 * the leaf's own `status-manager` user, answers what the node's status
 * manager answers over NATS (its pods, its ServiceInfo), and trace records
 * go into the leaf's KUBELET_TRACES the way the services write them
 * (JetStreamTraceRecorder, each service's records as that service's user).
 * The built CLI runs against the hub's client URLs as the fleet reader,
 * and its output is what is asserted. The leaves refuse a permission
 * violation at stop (startNats), but for the one this test provokes: node
 * a's status manager reaching for node b's stream through its own leaf.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Subjects, contractClaim, type Pod, type PodList, type ServiceInfo, type ServiceName } from '@app/contracts';
import { inboxPrefix, nodeDomain } from '@app/nats';
import { JetStreamTraceRecorder, TRACE_STREAM, ensureTraceStream, type TraceHop } from '@app/tracing';
import { startNats, type NatsServer } from '../deploy/local/stack.js';
import { fleetCli, until } from './support/fleet-test.js';
import { startHub, type Hub } from './fleet/hub.js';

const A = 'node-a';
const B = 'node-b';
const UID = { [A]: '0a0a0a0a-1111-4111-8111-000000000001', [B]: '0b0b0b0b-2222-4222-8222-000000000002' } as const;
const POD = { [A]: 'db', [B]: 'web' } as const;
const enc = new TextEncoder();

function podOn(node: typeof A | typeof B): Pod {
  return {
    metadata: { name: POD[node], namespace: 'default', uid: UID[node], creationTimestamp: new Date(Date.now() - 60_000).toISOString() },
    spec: { nodeName: node, containers: [{ name: 'app', image: 'localhost/kubelet-split/busybox:1.35' }] },
    status: { phase: 'Running', podIPs: [{ ip: node === A ? '10.88.1.5' : '10.88.2.7' }], conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function infoOf(node: string): ServiceInfo {
  return {
    type: 'kubelet.v1.service_info',
    service: 'status-manager',
    node,
    instance: 'i0',
    version: '0.0.0-fleet-tools',
    connectionName: `status-manager@${node}#i0`,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    httpPort: 10315,
    subjects: [Subjects.serviceInfo.build(node, 'status-manager'), Subjects.serviceCommand.build(node, 'status-manager', 'pods')],
    leadership: { role: 'leader', identity: 'i0', since: new Date().toISOString() },
    contract: { ...contractClaim(), peersOutsidePolicy: [] },
  };
}

/** A node's leaf, its status manager's stand-in, and its services' trace recorders. */
interface Node {
  name: typeof A | typeof B;
  nats: NatsServer;
  statusManager: NatsConnection;
  podWorker: NatsConnection;
}

async function serviceConnection(nats: NatsServer, node: string, service: ServiceName): Promise<NatsConnection> {
  return connect({ servers: nats.url, name: `${service}@${node}#i0`, ...nats.auth(nats.credentials.userOf(service)), inboxPrefix: inboxPrefix(service) });
}

/** Records `hops` of the pod on `node` as `service` does (its own user, its own subject). */
async function record(nc: NatsConnection, node: string, service: ServiceName, hops: TraceHop[]): Promise<void> {
  const recorder = new JetStreamTraceRecorder(nc, { node, service, instance: `${service}@${node}#i0`, maxBuffered: 100, flushMs: 10 });
  for (const h of hops) recorder.record(h);
  recorder.flush();
  await nc.flush();
}



/** The refusal the isolation test below provokes: node a's status manager asking for node b's trace stream. */
const provoked = (violation: string) => violation.includes(`$JS.${nodeDomain(B)}.API.STREAM.INFO.${TRACE_STREAM}`) && violation.includes('user:status-manager');

describe('the CLI across a fleet: a hub of three, two leaf nodes', { timeout: 180_000 }, () => {
  let dir: string;
  let hub: Hub;
  const nodes: Node[] = [];
  const t0 = Date.now();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ks-fleet-tools-'));
    hub = await startHub({ dir, nodes: [A, B], sink: () => () => undefined });
    for (const name of [A, B] as const) {
      const nats = await startNats({ nodes: [name], domain: nodeDomain(name), leaf: { urls: hub.credentials.leafUrls, ...hub.credentials.leaf(name) }, serverName: `ks-leaf-${name}` });
      const admin = await connect({ servers: nats.url, ...nats.auth() });
      await ensureTraceStream(admin, { maxAgeMs: 3_600_000, maxBytes: 16 << 20 });
      await admin.close();
      const statusManager = await serviceConnection(nats, name, 'status-manager');
      const list: PodList = { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [podOn(name)] };
      statusManager.subscribe(Subjects.serviceCommand.build(name, 'status-manager', 'pods'), { queue: 'status-manager', callback: (_e, m) => void m.respond(enc.encode(JSON.stringify(list))) });
      statusManager.subscribe(Subjects.serviceInfo.build(name, 'status-manager'), { queue: 'status-manager', callback: (_e, m) => void m.respond(enc.encode(JSON.stringify(infoOf(name)))) });
      await statusManager.flush();
      const podWorker = await serviceConnection(nats, name, 'pod-worker');
      const uid = UID[name];
      await record(podWorker, name, 'pod-worker', [
        { traceId: 'a'.repeat(32), spanId: '1'.repeat(16), kind: 'cri', podUid: uid, at: t0, durationMs: 42, subject: `cri.${name}.runtime.RunPodSandbox`, method: 'RunPodSandbox' },
        { traceId: 'a'.repeat(32), spanId: '2'.repeat(16), parentSpanId: '1'.repeat(16), kind: 'cri', podUid: uid, at: t0 + 50, durationMs: 7, subject: `cri.${name}.runtime.StartContainer`, method: 'StartContainer' },
      ]);
      await record(statusManager, name, 'status-manager', [
        { traceId: 'a'.repeat(32), spanId: '3'.repeat(16), parentSpanId: '2'.repeat(16), kind: 'kv.put', podUid: uid, at: t0 + 60, durationMs: 2, bucket: 'pod-status', key: uid, revision: 3, detail: { version: 2 } },
      ]);
      nodes.push({ name, nats, statusManager, podWorker });
    }
    // Both leaf links up and both stand-ins' interest across them, as the fleet reader sees it.
    const fleet = await connect({ servers: hub.credentials.clientUrls, ...hub.fleetAuth() });
    try {
      for (const n of [A, B]) {
        await until(`${n}'s status manager answers through the hub`, async () => {
          const reply = await fleet.request(Subjects.serviceCommand.build(n, 'status-manager', 'pods'), enc.encode('{}'), { timeout: 1000 });
          return (JSON.parse(new TextDecoder().decode(reply.data)) as PodList).items.length === 1 ? true : undefined;
        });
      }
    } finally {
      await fleet.close();
    }
    for (const n of nodes) {
      const admin = await connect({ servers: n.nats.url, ...n.nats.auth() });
      await until(`${n.name}'s three records stored`, async () => ((await (await jetstreamManager(admin)).streams.info(TRACE_STREAM)).state.messages === 3 ? true : undefined));
      await admin.close();
    }
  });

  after(async () => {
    // Everything is stopped even when a server's stop fails the test (a refusal it logged): a server left running keeps the file's process alive.
    const failures: unknown[] = [];
    for (const n of nodes) {
      await n.statusManager.close();
      const others = n.nats.violations.filter((v) => !provoked(v));
      n.nats.violations.splice(0, n.nats.violations.length, ...others);
      await n.podWorker.close();
      await n.nats.stop().catch((err: unknown) => failures.push(err));
    }
    await hub?.stop().catch((err: unknown) => failures.push(err));
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (failures.length > 0) throw failures[0];
  });

  it('trace POD --fleet: finds the pod on node b and prints its hops, read in node b\'s domain', async () => {
    const r = await fleetCli(hub, ['trace', POD[B]]);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split('\n');
    assert.equal(lines[0], `node ${B}, JetStream domain "${nodeDomain(B)}"`);
    assert.match(r.out, new RegExp(`pod-worker@${B}#i0 +CRI RunPodSandbox +cri\\.${B}\\.runtime\\.RunPodSandbox +<- slowest`));
    assert.match(r.out, new RegExp(`pod-worker@${B}#i0 +CRI StartContainer`));
    assert.match(r.out, new RegExp(`status-manager@${B}#i0 +KV put pod-status ${UID[B]} @3 status v2`));
    assert.match(r.out, new RegExp(`^pod ${UID[B]} on node ${B}: 3 hops in 1 trace, total 62\\.0ms$`, 'm'));
    assert.doesNotMatch(r.out, new RegExp(A), "node a's records are not in node b's trace");
  });

  it('trace UID --fleet -o json: the node, and the same hops', async () => {
    const r = await fleetCli(hub, ['trace', UID[A], '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const t = JSON.parse(r.out) as { node: string; uid: string; podUid: string; hops: { service: string; instance: string; what: string }[] };
    assert.equal(t.node, A);
    assert.equal(t.uid, UID[A]);
    assert.equal(t.podUid, UID[A]);
    assert.deepEqual(t.hops.map((h) => h.service), ['pod-worker', 'pod-worker', 'status-manager']);
    assert.deepEqual(t.hops.map((h) => `${h.instance} ${h.what}`), [`pod-worker@${A}#i0 CRI RunPodSandbox`, `pod-worker@${A}#i0 CRI StartContainer`, `status-manager@${A}#i0 KV put pod-status ${UID[A]} @3 status v2`]);
  });

  it('trace --fleet of a pod no node runs: the error names the nodes asked', async () => {
    const r = await fleetCli(hub, ['trace', 'nowhere']);
    assert.equal(r.code, 1);
    assert.equal(r.err.trim(), `error: pods "nowhere" not found in namespace "default" on any of the 2 node(s) that answered (${A}, ${B})`);
  });

  it('trace UID --fleet, a node named with --node that has no leaf link: its domain is said to be unreachable', async () => {
    const uid = '0c0c0c0c-3333-4333-8333-000000000003';
    const r = await fleetCli(hub, ['trace', uid, '--node', 'node-z']);
    assert.equal(r.code, 1);
    assert.match(r.err, new RegExp(`^error: no trace records for pod ${uid} on any of 3 node\\(s\\) \\(${A}, ${B}, node-z\\)`));
    assert.match(r.err, /\n {2}node node-z's JetStream domain "node-z" is unreachable from the hub: /);
  });

  it('get pods -A --fleet: both nodes\' pods, with their nodes', async () => {
    const r = await fleetCli(hub, ['get', 'pods', '-A']);
    assert.equal(r.code, 0, r.err);
    const rows = r.out.trim().split('\n').map((l) => l.split(/ {2,}/));
    assert.deepEqual(rows[0], ['NAMESPACE', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'NODE']);
    assert.deepEqual(rows.slice(1).map((c) => [c[1], c[2], c[3], c[6]]), [['db', '0/1', 'Running', A], ['web', '0/1', 'Running', B]]);
    const wide = await fleetCli(hub, ['get', 'pods', '-o', 'wide']);
    assert.equal(wide.code, 0, wide.err);
    assert.match(wide.out, new RegExp(`^web .* 10\\.88\\.2\\.7 +${B} +<none> +<none>$`, 'm'));
    const json = await fleetCli(hub, ['get', 'pods', '-o', 'json']);
    assert.deepEqual((JSON.parse(json.out) as PodList).items.map((p) => `${p.spec.nodeName}/${p.metadata.name}`), [`${A}/db`, `${B}/web`]);
  });

  it('topology --fleet: both nodes with their services, and two leaf links', async () => {
    const r = await fleetCli(hub, ['topology']);
    assert.equal(r.code, 0, r.err);
    for (const n of [A, B]) assert.match(r.out, new RegExp(`^${n} +${nodeDomain(n)} +status-manager +i0 +0\\.0\\.0-fleet-tools +leader +ks-hub-\\d$`, 'm'));
    for (const n of [A, B]) assert.match(r.out, new RegExp(`^ks-hub-\\d +ks-leaf-${n} +${n} +KUBELET +127\\.0\\.0\\.1:\\d+ `, 'm'));
    assert.match(r.out, /^2 nodes, 2 leaf links, 3 hub servers answered \(ks-hub-0, ks-hub-1, ks-hub-2\)$/m);
    const json = await fleetCli(hub, ['topology', '-o', 'json']);
    const t = JSON.parse(json.out) as { leafs: { node?: string }[]; notes: string[] };
    assert.deepEqual(t.leafs.map((l) => l.node).sort(), [A, B]);
    assert.deepEqual(t.notes, []);
  });

  it("node a's status manager cannot read node b's trace stream through its own leaf", async () => {
    const a = nodes.find((n) => n.name === A);
    assert.ok(a);
    await assert.rejects(a.statusManager.request(`$JS.${nodeDomain(B)}.API.STREAM.INFO.${TRACE_STREAM}`, enc.encode(''), { timeout: 3000 }));
    const jsm = await jetstreamManager(a.statusManager, { domain: nodeDomain(B), checkAPI: false, timeout: 3000 });
    await assert.rejects(jsm.streams.info(TRACE_STREAM), "node a's status manager read node b's stream info");
    // Its own leaf refused it (a permission violation there): what this test provokes, and nothing else, is
    // forgiven when the servers stop (the second refusal may be logged after this test ends).
    await until('the violation logged', () => Promise.resolve(a.nats.violations.some(provoked) ? true : undefined), 5000);
  });
});
