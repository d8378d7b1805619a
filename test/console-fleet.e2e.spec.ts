/**
 * The console's fleet page (/console/fleet) in a real headless Chromium,
 * on real nats-servers: the hub of three (test/fleet/hub.ts), two nodes'
 * leaf nats-servers, each with its own JetStream domain, linked to the hub
 * through a LeafLink that the test can cut; the real console app, connected
 * to node A's leaf as its node user and to the hub as the fleet reader
 * (FLEET_NATS_URL, FLEET_NATS_PASSWORD_FILE).
 *
 * On each leaf, small responders stand for the node's status-manager and
 * node-status (the real ones keep no Node without an apiserver, and list no
 * pods without the rest of the stack): connected as those services' own
 * leaf users, under their real permissions, they answer the same subjects
 * (`service.<service>.info`, `status-manager.pods`, `node-status.conditions`)
 * with a ServiceInfo, a PodList and NodeConditionsMessage, as the services
 * do (with Kubelet-Sender). What crosses the leaf link is the fabric's
 * (leafPermissions from fleetServiceReads): a subject it did not let through
 * would leave the node Unknown.
 *
 * The page shows both nodes, Ready (A) and NotReady (B), and their pods;
 * node B's link cut, it turns Unknown (unreachable) with its last pods; the
 * link restored, the next refreshes show it Ready again. A screenshot is
 * saved at /var/tmp/kubelet-split/console-fleet.png (KS_FLEET_SCREENSHOT).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { MessageTypes, Subjects, type NodeConditionsMessage, type Pod, type PodList } from '@app/contracts';
import { inboxPrefix, nodeDomain } from '@app/nats';
import { Headers } from '@app/tracing';
import { freePort, startNats, startService, type NatsServer, type ServiceProcess } from '../deploy/local/stack.js';
import { LeafLink, startHub, type Hub } from './fleet/hub.js';

const CHROMIUM = process.env['KS_CHROMIUM'] ?? '/usr/bin/chromium';
const SCREENSHOT = process.env['KS_FLEET_SCREENSHOT'] ?? '/var/tmp/kubelet-split/console-fleet.png';
const A = 'fleet-a';
const B = 'fleet-b';
const enc = new TextEncoder();

function pod(node: string, name: string, phase: string, ready: boolean): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: 'default', name, uid: `${node}-${name}` },
    spec: { nodeName: node, containers: [{ name: 'main', image: 'busybox' }] },
    status: { phase, containerStatuses: [{ name: 'main', ready, restartCount: 0, image: 'busybox', imageID: '', containerID: '' }] },
  };
}

/** What a node says: its pods, and its Ready condition. */
interface NodeSays {
  pods: Pod[];
  ready: { status: 'True' | 'False'; reason: string; message: string };
}

/**
 * The node's status-manager and node-status, as far as the fleet asks them:
 * each connected to the node's leaf as the service's own user, answering
 * its `info` and its command with the body the real one gives.
 */
async function startResponders(nats: NatsServer, node: string, says: NodeSays): Promise<NatsConnection[]> {
  const serve = async (service: 'status-manager' | 'node-status', command: string, body: () => unknown): Promise<NatsConnection> => {
    const nc = await connect({ servers: nats.url, ...nats.auth(service), inboxPrefix: inboxPrefix(service), name: `${service}@${node}#r1` });
    const h = () => {
      const out = headers();
      out.set(Headers.service, service);
      out.set(Headers.sender, `${service}@${node}#r1`);
      return out;
    };
    const info = { type: 'kubelet.v1.service_info', service, node, instance: 'r1', version: 'test', connectionName: `${service}@${node}#r1`, pid: process.pid, startedAt: new Date().toISOString(), httpPort: 0, subjects: [], leadership: { role: 'leader', identity: 'r1' } };
    nc.subscribe(Subjects.serviceInfo.build(node, service), { callback: (_, m) => void m.respond(enc.encode(JSON.stringify(info)), { headers: h() }) });
    nc.subscribe(Subjects.serviceCommand.build(node, service, command), { callback: (_, m) => void m.respond(enc.encode(JSON.stringify(body())), { headers: h() }) });
    await nc.flush();
    return nc;
  };
  return [
    await serve('status-manager', 'pods', (): PodList => ({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items: says.pods })),
    await serve('node-status', 'conditions', (): NodeConditionsMessage => ({ type: MessageTypes.nodeConditions, node, leading: true, conditions: [{ type: 'Ready', ...says.ready }] })),
  ];
}

describe('the console\'s fleet page in a headless Chromium, on a hub and two leaf nodes', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'ks-console-fleet-'));
  const logs: string[] = [];
  const sink = (who: string) => (line: string) => void logs.push(`${who}: ${line}`);
  let hub: Hub;
  const links = new Map<string, LeafLink>();
  const leafs = new Map<string, NatsServer>();
  const responders: NatsConnection[] = [];
  let console_: ServiceProcess;
  let consoleUrl: string;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  const nodeRow = (node: string) => page.locator(`[data-testid="fleet-nodes"] tr[data-node="${node}"]`);
  /** Until node's Ready column says `ready`; else fails with what the page and the console said. */
  const waitReady = async (node: string, ready: string, timeout: number) => {
    try {
      await nodeRow(node).locator('[data-col="ready"]', { hasText: new RegExp(`^${ready.replace(/[()]/g, '\\$&')}`) }).waitFor({ timeout });
    } catch (err) {
      const view = await fetch(`${consoleUrl}/console/fleet/nodes`).then((r) => r.text(), (e: Error) => e.message);
      throw new Error(`${(err as Error).message}\n/console/fleet/nodes: ${view}\npage: ${await page.locator('main').innerText()}\nlogs:\n${logs.slice(-30).join('\n')}`);
    }
  };

  before(async () => {
    hub = await startHub({ dir: join(dir, 'hub'), nodes: [A, B], sink });
    for (const node of [A, B]) {
      const link = await LeafLink.start(hub.credentials.leafUrls);
      links.set(node, link);
      leafs.set(node, await startNats({ nodes: [node], domain: nodeDomain(node), leaf: { urls: link.urls, ...hub.credentials.leaf(node) }, serverName: `ks-leaf-${node}`, sink: sink(`leaf-${node}`) }));
    }
    const says: Record<string, NodeSays> = {
      [A]: { pods: [pod(A, 'web-1', 'Running', true), pod(A, 'web-2', 'Pending', false)], ready: { status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' } },
      [B]: { pods: [pod(B, 'db-0', 'Running', true)], ready: { status: 'False', reason: 'KubeletNotReady', message: 'container runtime network not ready' } },
    };
    for (const node of [A, B]) responders.push(...(await startResponders(leafs.get(node) as NatsServer, node, says[node] as NodeSays)));
    const port = await freePort();
    const leafA = leafs.get(A) as NatsServer;
    console_ = await startService(
      'console',
      { NATS_URL: leafA.url, NODE_NAME: A, FLEET_NATS_URL: hub.credentials.clientUrls.join(','), FLEET_NATS_PASSWORD_FILE: hub.credentials.passwordFile('fleet'), LOG_LEVEL: 'warn' },
      { port, instance: 'c1', sink: sink('console') },
    );
    consoleUrl = `http://127.0.0.1:${port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (m) => void (m.type() === 'error' && errors.push(`console: ${m.text()}`)));
    page.on('pageerror', (e) => void errors.push(`uncaught: ${e.message}`));
  });

  after(async () => {
    await browser?.close();
    await console_?.stop();
    await Promise.all(responders.map((nc) => nc.close()));
    for (const l of leafs.values()) await l.stop();
    for (const l of links.values()) await l.stop();
    await hub?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the main page links the fleet page; /console/fleet shows both nodes, their Ready state as each computes it, their pods and the services answering', async () => {
    await page.goto(`${consoleUrl}/console`);
    await page.getByTestId('nav-fleet').click();
    await page.waitForURL(/\/console#\/fleet$/);
    await page.goto(`${consoleUrl}/console/fleet`);
    assert.match(page.url(), /\/console#\/fleet$/, '/console/fleet lands on the fleet page');
    await waitReady(A, 'Ready', 20_000);
    await waitReady(B, 'NotReady', 20_000);
    assert.equal(await nodeRow(A).locator('[data-col="pods"]').textContent(), '2');
    assert.equal(await nodeRow(B).locator('[data-col="pods"]').textContent(), '1');
    // Node A's services: the responders and the real console itself, which answers `info` on its node.
    assert.equal(await nodeRow(A).locator('[data-col="services"]').textContent(), 'console, node-status, status-manager');
    assert.equal(await nodeRow(B).locator('[data-col="services"]').textContent(), 'node-status, status-manager');
    assert.match((await nodeRow(B).locator('[data-col="ready"]').textContent()) ?? '', /KubeletNotReady/);
    const podsOf = async (node: string) => (await page.locator(`table[data-node-pods="${node}"] tbody tr`).allInnerTexts()).map((t) => t.trim().split(/\s+/).join(' '));
    assert.deepEqual(await podsOf(A), ['default/web-1 Running 1/1', 'default/web-2 Pending 0/1']);
    assert.deepEqual(await podsOf(B), ['default/db-0 Running 1/1']);
    assert.deepEqual(errors, []);
  });

  it("node B's leaf link cut: it turns Unknown (unreachable), its pods as last read; restored: Ready as it says, at the next refreshes", async () => {
    const link = links.get(B) as LeafLink;
    link.cut();
    const cutAt = Date.now();
    await waitReady(B, 'Unknown (unreachable)', 20_000);
    console.log(`node B Unknown ${Date.now() - cutAt} ms after its link was cut`);
    assert.equal(await nodeRow(B).getAttribute('data-reachable'), 'false');
    assert.equal(await nodeRow(B).locator('[data-col="services"]').textContent(), 'none');
    assert.equal(await nodeRow(B).locator('[data-col="pods"]').textContent(), '1', 'the pods as last read');
    assert.match((await nodeRow(A).locator('[data-col="ready"]').textContent()) ?? '', /^Ready/, 'node A is not affected');
    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    link.restore();
    const restoredAt = Date.now();
    await waitReady(B, 'NotReady', 30_000);
    console.log(`node B back ${Date.now() - restoredAt} ms after its link was restored`);
    assert.equal(await nodeRow(B).getAttribute('data-reachable'), 'true');
    assert.equal(await nodeRow(B).locator('[data-col="services"]').textContent(), 'node-status, status-manager');
    assert.deepEqual(errors, []);
  });

  it('the real node-status answers the fleet reader its conditions from the hub, through its leaf link (no apiserver: leading, no Node)', async () => {
    const leafA = leafs.get(A) as NatsServer;
    const nodeStatus = await startService('node-status', { NATS_URL: leafA.url, NODE_NAME: A, LOG_LEVEL: 'warn' }, { port: await freePort(), instance: 'ns1', sink: sink('node-status') });
    const fleetNc = await connect({ servers: hub.credentials.clientUrls, ...hub.fleetAuth() });
    try {
      const answers: NodeConditionsMessage[] = [];
      const deadline = Date.now() + 20_000;
      // Until it leads (its leader election in the node's leases bucket): a standby answers `leading: false`.
      while (Date.now() < deadline && !answers.some((a) => a.leading && a.conditions.length === 0 && a.type === MessageTypes.nodeConditions)) {
        answers.length = 0;
        for await (const m of await fleetNc.requestMany(Subjects.nodeConditions.build(A), '{}', { maxWait: 1000 })) answers.push(m.json<NodeConditionsMessage>());
      }
      const real = answers.filter((a) => a.conditions.length === 0);
      assert.deepEqual(real, [{ type: MessageTypes.nodeConditions, node: A, leading: true, conditions: [] }]);
    } finally {
      await fleetNc.close();
      await nodeStatus.stop();
    }
  });
});
