/**
 * A fleet of two kubelet-split nodes (test/fleet/fleet-cluster.ts: one
 * control plane with the scheduler and the controller-manager, the NATS hub
 * of three servers, each node with its own containerd, bridge, leaf
 * nats-server and services), seen as a user sees it:
 *
 *  - a Deployment of 6 spreads over both nodes and every pod runs exactly
 *    once (one READY sandbox in one node's containerd); a pod on node A
 *    reaches a pod on node B over the pod network; `kubelet-split trace` of
 *    a pod on node B from the hub's side, as the fleet reader, shows its hops;
 *  - node A's services cannot subscribe to or publish on node B's subjects,
 *    nor read node B's buckets: the real servers refuse (node A's own leaf
 *    for its users, the hub for node A's leaf link).
 *
 * The CI subset of the fleet's tests; the faults are in fleet-faults.fleet.ts
 * (`npm run fleet -- --test` runs both).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errors } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { inboxPrefix, nodeDomain } from '@app/nats';
import type { Fleet } from './fleet/fleet-cluster.js';
import { connectLeaf, createDeployment, createNamespace, fleetCli, httpDeployment, isReady, kubectl, podsOf, runningSandboxes, testFleet, until } from './support/fleet-test.js';

const enc = new TextEncoder();

describe('a fleet of two kubelet-split nodes on one NATS fabric', { timeout: 900_000 }, () => {
  let fleet: Fleet;
  const NS = 'fleet-e2e';

  before(async () => {
    fleet = await testFleet(2);
    await createNamespace(fleet, NS);
  });

  after(async () => {
    await fleet?.stop();
  });

  it('spreads a Deployment of 6 over both nodes, each pod running once; pods reach each other across nodes; trace finds a pod on node B from the hub', async () => {
    const [a, b] = fleet.nodes;
    assert.ok(a && b);
    await createDeployment(fleet, httpDeployment('web', NS, 6));
    const pods = await until(
      'the 6 pods of the Deployment Ready',
      async () => {
        const ps = await podsOf(fleet, NS, 'web');
        return ps.length === 6 && ps.every(isReady) ? ps : undefined;
      },
      300_000,
    );
    const byNode = new Map<string, string[]>();
    for (const p of pods) byNode.set(p.spec?.nodeName ?? '', [...(byNode.get(p.spec?.nodeName ?? '') ?? []), p.metadata?.name ?? '']);
    console.log(`placement: ${[...byNode].map(([n, ps]) => `${n}: ${ps.length}`).join(', ')}`);
    assert.deepEqual([...byNode.keys()].sort(), [a.name, b.name].sort(), 'the scheduler placed pods on both nodes');

    // Exactly once: each pod's one READY sandbox is in its own node's containerd, and in no other's.
    const sandboxes = new Map([[a.name, await runningSandboxes(a)], [b.name, await runningSandboxes(b)]]);
    for (const p of pods) {
      const uid = p.metadata?.uid ?? '';
      const own = sandboxes.get(p.spec?.nodeName ?? '')?.get(uid) ?? 0;
      const other = [...sandboxes].filter(([n]) => n !== p.spec?.nodeName).reduce((sum, [, m]) => sum + (m.get(uid) ?? 0), 0);
      assert.equal(own, 1, `pod ${p.metadata?.name} has ${own} READY sandbox(es) on its node ${p.spec?.nodeName}`);
      assert.equal(other, 0, `pod ${p.metadata?.name} also runs on another node`);
    }

    // Across nodes: a pod on A fetches the page a pod on B serves (its IP in B's subnet), through kubectl exec.
    const onA = pods.find((p) => p.spec?.nodeName === a.name);
    const onB = pods.find((p) => p.spec?.nodeName === b.name);
    assert.ok(onA?.status?.podIP && onB?.status?.podIP);
    assert.ok(onB.status.podIP.startsWith(b.net.subnet.split('.').slice(0, 3).join('.')), `pod IP ${onB.status.podIP} is in ${b.net.subnet}`);
    // (busybox's static wget crashes in its resolver here: nc speaks the HTTP.)
    const fetched = await kubectl(fleet, ['exec', '-n', NS, onA.metadata?.name ?? '', '--', 'sh', '-c', `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${onB.status.podIP} 8080`]);
    assert.equal(fetched.code, 0, `kubectl exec nc: ${fetched.err}`);
    assert.match(fetched.out, /^HTTP\/1\.[01] 200/, `an HTTP answer: ${fetched.out}`);
    assert.equal(fetched.out.trim().split('\n').pop()?.trim(), onB.metadata?.name, 'the page of the pod on node B, fetched from node A');

    // The trace of the pod on B, read from the hub as the fleet reader.
    const trace = await fleetCli(fleet.hub, ['trace', onB.metadata?.name ?? '', '-n', NS, '-o', 'json']);
    assert.equal(trace.code, 0, `trace --fleet: ${trace.err}`);
    const timeline = JSON.parse(trace.out) as { uid: string; hops: { service: string; op?: string; name?: string }[] };
    assert.equal(timeline.uid, onB.metadata?.uid);
    const services = new Set(timeline.hops.map((h) => h.service));
    for (const s of ['config-source', 'sync-loop', 'pod-worker', 'cri-gateway', 'status-manager']) assert.ok(services.has(s), `a ${s} hop in the trace (has ${[...services].join(', ')})`);
  });

  it("keeps node A's services and node A's leaf out of node B's subjects and buckets: the servers refuse", async () => {
    const [a, b] = fleet.nodes;
    assert.ok(a && b);
    const user = a.nats.credentials.userOf('pod-worker', a.name);
    const pw = await connectLeaf(a, user);
    const refused: string[] = [];
    const watching = (async () => {
      for await (const s of pw.status()) if (s.type === 'error' && s.error instanceof errors.PermissionViolationError) refused.push(`${s.error.operation} ${s.error.subject}`);
    })();
    const settled = async () => {
      await pw.flush();
      await new Promise((r) => setTimeout(r, 100));
    };
    const B = b.name;
    pw.publish(`kubelet.${B}.work.done.x`, enc.encode('{}'));
    pw.subscribe(`kubelet.${B}.work.0.*`, { callback: () => undefined });
    pw.subscribe(`cri.${B}.runtime.*`, { callback: () => undefined });
    await settled();
    const jsB = await jetstreamManager(pw, { domain: nodeDomain(B), checkAPI: false });
    await assert.rejects(jsB.streams.info('KV_workers'), 'node A\'s pod worker reads node B\'s workers bucket');
    await settled();
    await pw.close();
    await watching;
    for (const subject of [`kubelet.${B}.work.done.x`, `kubelet.${B}.work.0.*`, `cri.${B}.runtime.*`, `$JS.${nodeDomain(B)}.API.STREAM.INFO.KV_workers`]) {
      assert.ok(refused.some((r) => r.endsWith(` ${subject}`)), `node A's leaf refused ${subject} (refused: ${refused.join(', ')})`);
    }
    a.nats.violations.splice(0);

    // Node A's admin, the leaf's own superuser: its leaf link lets none of it through to node B.
    const admin = await connectLeaf(a);
    try {
      const viaLink = await jetstreamManager(admin, { domain: nodeDomain(B), checkAPI: false, timeout: 3000 });
      await assert.rejects(viaLink.streams.info('KV_workers'), "node A's leaf reaches node B's JetStream");
      await assert.rejects(admin.request(`kubelet.${B}.service.status-manager.pods`, enc.encode('{}'), { timeout: 3000 }), "node A's leaf asks node B's status manager");
      // Node B's own work subject, published on B: nothing of it reaches a subscriber on A.
      const heard: string[] = [];
      admin.subscribe(`kubelet.${B}.>`, { callback: (_e, m) => void heard.push(m.subject) });
      await admin.flush();
      const bAdmin = await connectLeaf(b);
      bAdmin.publish(`kubelet.${B}.service.status-manager.events`, enc.encode('{}'), { reply: `${inboxPrefix('admin')}.x` });
      await bAdmin.flush();
      await bAdmin.close();
      await new Promise((r) => setTimeout(r, 1000));
      assert.deepEqual(heard, [], "node B's subjects reached node A");
    } finally {
      await admin.close();
    }
  });
});
