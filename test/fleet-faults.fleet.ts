/**
 * The fleet under faults (`npm run fleet -- --test`, not in the CI subset):
 *
 *  - node B's leaf link cut for 20 s: its pods keep running and Ready in its
 *    own /pods, a container killed behind its back is restarted meanwhile,
 *    and the fleet view (get pods --fleet from the hub) has node B's pods
 *    again once the link is back;
 *  - one hub server SIGKILLed: no node notices (no NotReady, no restart), and
 *    the leaf links move to the other two;
 *  - node B's stack stopped (every service and its nats-server SIGKILLed):
 *    the Node goes NotReady after the node-monitor grace period, the
 *    controller-manager taints it, and the Deployment's pods (tolerating the
 *    taint for 5 s) are made again on node A; started again, node B is Ready
 *    and nothing of the old pods is left on it, none ran twice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from '@nats-io/transport-node';
import { HUB_LEAFZ_SUBJECT } from '@app/nats';
import type { Node } from 'kubernetes-types/core/v1.js';
import type { Fleet } from './fleet/fleet-cluster.js';
import { createDeployment, createNamespace, fleetCli, httpDeployment, isReady, killContainerBehindItsBack, nodePods, podsOf, remainsOf, restartsOf, runningSandboxes, testFleet, until } from './support/fleet-test.js';

/** The node-monitor grace period given to the controller-manager here (the default is 50 s). */
const GRACE_S = 20;
const TOLERATION_S = 5;

describe('a fleet of two nodes under faults', { timeout: 1_200_000 }, () => {
  let fleet: Fleet;
  const NS = 'fleet-faults';

  before(async () => {
    fleet = await testFleet(2, { controllerArgs: [`--node-monitor-grace-period=${GRACE_S}s`, '--node-monitor-period=2s'] });
    await createNamespace(fleet, NS);
    await createDeployment(fleet, httpDeployment('web', NS, 4, TOLERATION_S));
    await until('the 4 pods Ready', async () => ((await podsOf(fleet, NS, 'web')).filter(isReady).length === 4 ? true : undefined), 300_000);
  });

  after(async () => {
    await fleet?.stop();
  });

  /** Each hub server's leaf connections, as the fleet reader sees them. */
  async function leafLinks(): Promise<Map<string, string[]>> {
    const nc = await connect({ servers: fleet.hub.credentials.clientUrls, ...fleet.hub.fleetAuth() });
    try {
      const out = new Map<string, string[]>();
      for await (const m of await nc.requestMany(HUB_LEAFZ_SUBJECT, '', { maxWait: 2000 })) {
        const z = m.json<{ server: { name: string }; data: { leafs?: { name: string }[] } }>();
        out.set(z.server.name, (z.data.leafs ?? []).map((l) => l.name));
      }
      return out;
    } finally {
      await nc.close();
    }
  }

  const readySince = async (node: string) => (await fleet.cp.admin.request<Node>(`/api/v1/nodes/${node}`)).status?.conditions?.find((c) => c.type === 'Ready');

  it("keeps node B's pods running, restarted and probed while its leaf link is cut for 20 s; the fleet view catches up", async () => {
    const b = fleet.nodes[1];
    assert.ok(b);
    const before = (await nodePods(b)).filter((p) => p.metadata?.namespace === NS);
    assert.ok(before.length > 0, 'node B runs some of the pods');
    const victim = before[0];
    assert.ok(victim?.metadata?.uid);
    b.link.cut();
    const cutAt = Date.now();
    // The fleet view loses node B (the hub no longer reaches it).
    const during = await until('the fleet view without node B', async () => {
      const r = await fleetCli(fleet.hub, ['get', 'pods', '-A', '-o', 'json']);
      const items = r.code === 0 ? (JSON.parse(r.out) as { items: { spec?: { nodeName?: string } }[] }).items : undefined;
      return items && items.length > 0 && !items.some((p) => p.spec?.nodeName === b.name) ? items : undefined;
    }, 15_000);
    assert.ok(during.length > 0, "node A's pods are still in the fleet view");
    const restarts0 = restartsOf(victim);
    await killContainerBehindItsBack(b, victim.metadata.uid);
    const restarted = await until('the killed container restarted on node B', async () => {
      const p = (await nodePods(b)).find((x) => x.metadata?.uid === victim.metadata?.uid);
      return p && restartsOf(p) > restarts0 && isReady(p) ? p : undefined;
    }, 60_000);
    console.log(`restarted while cut: restartCount ${restarts0} -> ${restartsOf(restarted)} after ${((Date.now() - cutAt) / 1000).toFixed(1)} s`);
    const wait = cutAt + 20_000 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const still = (await nodePods(b)).filter((p) => p.metadata?.namespace === NS);
    assert.deepEqual(still.map((p) => p.metadata?.uid).sort(), before.map((p) => p.metadata?.uid).sort(), 'the same pods on node B');
    assert.ok(still.every(isReady), 'every pod on node B Ready in its own /pods after 20 s cut off');
    // Still cut off at the end (a leaf that found its way around the link would be back in the fleet view).
    const late = await fleetCli(fleet.hub, ['get', 'pods', '-A', '-o', 'json']);
    assert.equal(late.code, 0, late.err);
    assert.ok(!(JSON.parse(late.out) as { items: { spec?: { nodeName?: string } }[] }).items.some((p) => p.spec?.nodeName === b.name), 'node B out of the fleet view for the whole cut');
    b.link.restore();
    const back = await until('node B back in the fleet view', async () => {
      const r = await fleetCli(fleet.hub, ['get', 'pods', '-A', '-o', 'json']);
      const items = r.code === 0 ? (JSON.parse(r.out) as { items: { metadata?: { uid?: string }; spec?: { nodeName?: string } }[] }).items : undefined;
      return items?.filter((p) => p.spec?.nodeName === b.name).length === before.length ? items : undefined;
    }, 60_000);
    assert.ok(back.some((p) => p.metadata?.uid === victim.metadata?.uid));
  });

  it('notices nothing on any node when one hub server is SIGKILLed', async () => {
    const links = await until('both leaf links up', async () => {
      const l = await leafLinks();
      return [...l.values()].flat().length === 2 ? l : undefined;
    }, 30_000);
    // The server holding the most leaf links: the one whose loss matters.
    const [name] = [...links].sort((x, y) => y[1].length - x[1].length)[0] ?? [];
    const server = fleet.hub.servers.find((s) => s.address.name === name);
    assert.ok(server);
    const ready0 = new Map(await Promise.all(fleet.nodes.map(async (n) => [n.name, (await readySince(n.name))?.lastTransitionTime] as const)));
    const restarts0 = new Map((await podsOf(fleet, NS, 'web')).map((p) => [p.metadata?.uid, restartsOf(p)]));
    const pids0 = fleet.nodes.flatMap((n) => [n.nats.process.pid, ...n.services.map((s) => s.process.pid)]);
    await server.kill();
    const moved = await until('the leaf links on the two servers left', async () => {
      const l = await leafLinks();
      return [...l.values()].flat().length === 2 && !l.has(server.address.name) ? l : undefined;
    }, 30_000);
    console.log(`killed ${server.address.name} (had ${links.get(server.address.name)?.join(', ')}); links now ${JSON.stringify([...moved])}`);
    await new Promise((r) => setTimeout(r, 15_000));
    for (const n of fleet.nodes) {
      const ready = await readySince(n.name);
      assert.equal(ready?.status, 'True', `${n.name} Ready`);
      assert.equal(ready?.lastTransitionTime, ready0.get(n.name), `${n.name}'s Ready condition did not change`);
    }
    for (const p of await podsOf(fleet, NS, 'web')) assert.equal(restartsOf(p), restarts0.get(p.metadata?.uid), `pod ${p.metadata?.name} not restarted`);
    assert.deepEqual(fleet.nodes.flatMap((n) => [n.nats.process.pid, ...n.services.map((s) => s.process.pid)]), pids0, 'no process of any node restarted');
    const r = await fleetCli(fleet.hub, ['get', 'pods', '-A', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    assert.equal((JSON.parse(r.out) as { items: unknown[] }).items.length >= 4, true, 'the fleet view through the two servers left');
    await server.start();
  });

  it("remakes node B's Deployment pods on node A when its stack is stopped, and leaves nothing of them on B when it is back", async () => {
    const [a, b] = fleet.nodes;
    assert.ok(a && b);
    const onB = (await podsOf(fleet, NS, 'web')).filter((p) => p.spec?.nodeName === b.name);
    assert.ok(onB.length > 0, 'node B runs some of the pods');
    const oldUids = new Set(onB.map((p) => p.metadata?.uid ?? ''));
    const killedAt = Date.now();
    await b.kill();
    const notReady = await until('node B NotReady and tainted', async () => {
      const n = await fleet.cp.admin.request<Node>(`/api/v1/nodes/${b.name}`);
      const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
      return ready?.status !== 'True' && (n.spec?.taints ?? []).some((t) => t.key === 'node.kubernetes.io/unreachable') ? Date.now() : undefined;
    }, (GRACE_S + 60) * 1000);
    const remade = await until('4 Ready pods of the Deployment on node A', async () => {
      const ps = (await podsOf(fleet, NS, 'web')).filter((p) => p.spec?.nodeName === a.name && isReady(p));
      return ps.length === 4 ? Date.now() : undefined;
    }, (GRACE_S + TOLERATION_S + 120) * 1000);
    console.log(`node B NotReady after ${((notReady - killedAt) / 1000).toFixed(1)} s; its pods Ready on node A after ${((remade - killedAt) / 1000).toFixed(1)} s (grace ${GRACE_S} s + toleration ${TOLERATION_S} s)`);

    const revivedAt = Date.now();
    await b.revive();
    await until('node B Ready again', async () => ((await readySince(b.name))?.status === 'True' ? true : undefined), 120_000);
    const clean = await until('nothing of the old pods left on node B', async () => ((await remainsOf(b, oldUids)).length === 0 ? Date.now() : undefined), 180_000);
    console.log(`node B back: Ready, and its old pods gone from its containerd ${((clean - revivedAt) / 1000).toFixed(1)} s after its stack started`);
    // None runs twice: every Deployment pod has one READY sandbox, on its own node.
    const sandboxes = [await runningSandboxes(a), await runningSandboxes(b)];
    for (const p of await podsOf(fleet, NS, 'web')) {
      const count = sandboxes.reduce((n, m) => n + (m.get(p.metadata?.uid ?? '') ?? 0), 0);
      assert.equal(count, 1, `pod ${p.metadata?.name} has ${count} READY sandbox(es) in the fleet`);
    }
    for (const uid of oldUids) assert.equal(sandboxes.reduce((n, m) => n + (m.get(uid) ?? 0), 0), 0, `old pod ${uid} still runs`);
  });
});
