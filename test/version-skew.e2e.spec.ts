/**
 * The version-skew policy, tried as an operator would meet it
 * (docs/adr/0034-version-skew-policy.md): a node runs at this build's
 * contract version, then its sync loop is replaced by one that claims a
 * version outside the policy (CONTRACT_VERSION=3 beside peers of 1: two
 * apart, where the policy allows one).
 *
 * What a user checks: the peers that hear the odd sync loop say so in
 * their logs (structured: the peer, its version, the range they accept)
 * and in /readyz (a degraded `contractVersions` check, still 200: a peer's
 * version never makes a service unready), and the odd one says the same
 * of them; /info states every instance's version and range; and the pods
 * keep running meanwhile — the pod that ran before is never restarted and
 * never NotReady in /pods, and a pod added while the node is skewed starts
 * and, deleted, is gone.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PodStatus } from '@kubernetes/client-node';
import type { ServiceInfo } from '@app/contracts';
import type { ServiceProcess } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'skew-e2e';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
/** The version the odd sync loop claims: this build speaks 1 and accepts 1; a service of 3 accepts 2..3. */
const ODD_VERSION = 3;
const ODD = `sync-loop@${NODE}#1`;
/** Generous: a loaded machine starts a sync loop, wins its lease and dispatches within seconds. */
const REFUSAL_BOUND_MS = 60_000;
/** How long the node runs skewed after the refusals, watched: several housekeeping passes, relists and probe periods. */
const SOAK_MS = 15_000;
/**
 * Who hears the sync loop, and so who must say it is outside the policy: the pod worker (its work), the
 * cri-gateway (its CRI calls), the config source (its sources snapshot), the prober (housekeeping's
 * CleanupPods) and the status manager (RemoveOrphanedStatuses, once a deleted pod is cleaned up).
 */
const HEARERS = ['pod-worker', 'cri-gateway', 'config-source', 'status-manager', 'prober'];
/** Whom the odd sync loop hears back: the replies of the first three, and the PLEG's events of the pod it adds. */
const HEARD = ['pod-worker', 'cri-gateway', 'config-source', 'pleg'];

function manifest(name: string): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n`;
}

const runningAndReady = (s: V1PodStatus | undefined) =>
  s?.phase === 'Running' && s.containerStatuses?.[0]?.state?.running !== undefined && s.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

/** One structured log line of a peer outside the policy (libs/service/src/peer-contracts.ts). */
interface SkewLine {
  service: string;
  instance: string;
  peer: string;
  peerContractVersion: number;
  contractVersion: number;
  accepts: string;
  why: string;
  msg: string;
}

interface Readyz {
  ok: boolean;
  checks: Record<string, { ok: boolean; detail?: string; degraded?: boolean }>;
  degraded?: string[];
}

describe('a service claiming a contract version outside the skew policy is refused clearly, and pods keep running', { timeout: 600_000 }, () => {
  const skewLines: SkewLine[] = [];
  const stack = new NodeStack({
    node: NODE,
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source', 'prober'],
    target: 'group',
    onLogLine: (_proc, line) => {
      if (!line.includes('peer outside the contract skew policy')) return;
      try {
        skewLines.push(JSON.parse(line) as SkewLine);
      } catch {
        // not a JSON line
      }
    },
  });
  const report: string[] = [];

  const running = (): ServiceProcess[] => [...stack.procs.values()].filter((p) => p.process.exitCode === null && p.process.signalCode === null);
  const proc = (key: string): ServiceProcess => {
    const p = stack.procs.get(key);
    if (!p) throw new Error(`no ${key} in the stack`);
    return p;
  };
  const get = async <T>(sp: ServiceProcess, path: string): Promise<{ status: number; body: T }> => {
    const res = await fetch(`http://127.0.0.1:${sp.port}${path}`, { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: (await res.json()) as T };
  };
  /** The lines that `service` logged about `peer`. */
  const linesOf = (service: string, peer?: string) => skewLines.filter((l) => l.service === service && (peer === undefined || l.peer === peer));

  before(async () => {
    await stack.start();
  });
  after(async () => {
    console.log(`version skew:\n  ${report.join('\n  ')}`);
    await stack.stop();
  });

  it('runs: every instance states contract 1, accepting 1, in /info, and /readyz has nothing degraded', async () => {
    stack.writeManifest('steady', manifest('steady'));
    await stack.waitForPod('steady', 'Running and Ready', runningAndReady, 90_000);
    for (const sp of running()) {
      const info = await get<ServiceInfo>(sp, '/info');
      assert.deepEqual(info.body.contract, { version: 1, accepts: { oldest: 1, newest: 1 }, peersOutsidePolicy: [] }, `${sp.service}#${sp.instance} /info`);
      const ready = await get<Readyz>(sp, '/readyz');
      assert.equal(ready.status, 200, `${sp.service} /readyz`);
      assert.equal(ready.body.degraded, undefined, `${sp.service} /readyz degraded`);
      assert.equal(ready.body.checks['contractVersions']?.detail, 'contract 1, accepts 1');
      const metrics = await (await fetch(`http://127.0.0.1:${sp.port}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      assert.match(metrics, /^kubelet_contract_peers_outside_policy\{contract_version="1"[^}]*\} 0$/m, `${sp.service} /metrics`);
    }
    assert.deepEqual(skewLines, [], 'no peer outside the policy while every service speaks 1');
  });

  it('a sync loop claiming contract 3 replaces the running one: refused clearly on both sides, and the pods keep running', async () => {
    const steadyBefore = await stack.containers('steady');
    assert.equal(steadyBefore.length, 1);
    const steadyId = steadyBefore[0]?.id;

    // Every /pods answer from here on: the steady pod must stay Running and Ready in each.
    let watching = true;
    let answers = 0;
    const notReady: string[] = [];
    const watcher = (async () => {
      while (watching) {
        const list = await stack.podList().catch(() => undefined);
        if (list) {
          answers++;
          const s = list.items.find((p) => p.metadata?.name === stack.podName('steady'))?.status;
          if (!runningAndReady(s) || (s?.containerStatuses?.[0]?.restartCount ?? 0) !== 0) notReady.push(JSON.stringify({ phase: s?.phase, state: s?.containerStatuses?.[0]?.state, restartCount: s?.containerStatuses?.[0]?.restartCount }));
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();

    try {
      await proc('sync-loop#0').stop(10_000);
      stack.options.env = { ...stack.options.env, 'sync-loop': { CONTRACT_VERSION: String(ODD_VERSION) } };
      const odd = await stack.startService('sync-loop', '1');
      const oddInfo = await get<ServiceInfo>(odd, '/info');
      assert.equal(oddInfo.body.contract.version, ODD_VERSION);
      assert.deepEqual(oddInfo.body.contract.accepts, { oldest: 2, newest: 3 }, 'a service of 3 accepts 2..3');

      // A pod added while the node is skewed: the odd sync loop dispatches it, the pod worker takes it (their messages' types are v1 both ways).
      stack.writeManifest('during', manifest('during'));
      await stack.waitForPod('during', 'Running and Ready (added while the sync loop is outside the policy)', runningAndReady, 90_000);
      // And deleted while skewed: gone from /pods and from containerd.
      stack.removeManifest('during');
      await stack.waitFor('the deleted pod to be gone from /pods and containerd', async () => {
        const listed = (await stack.podList()).items.some((p) => p.metadata?.name === stack.podName('during'));
        return !listed && (await stack.containers('during')).length === 0 && (await stack.sandboxes('during')).length === 0 ? true : undefined;
      }, 90_000);

      const refused = () => HEARERS.every((s) => linesOf(s, ODD).length > 0) && HEARD.every((s) => linesOf('sync-loop', `${s}@${NODE}#0`).length > 0);
      await stack.waitFor(`${HEARERS.join(', ')} to log the odd sync loop, and it to log ${HEARD.join(', ')}`, () => refused() || undefined, REFUSAL_BOUND_MS).catch((err: Error) => {
        throw new Error(`${err.message}; logged so far: ${JSON.stringify(skewLines.map((l) => `${l.service}#${l.instance} on ${l.peer}`))}`);
      });
      // The node runs skewed a while, watched.
      await new Promise((r) => setTimeout(r, SOAK_MS));
      for (const service of HEARERS) {
        const [line] = linesOf(service, ODD);
        assert.deepEqual(
          { peer: line?.peer, peerContractVersion: line?.peerContractVersion, contractVersion: line?.contractVersion, accepts: line?.accepts, why: line?.why },
          { peer: ODD, peerContractVersion: ODD_VERSION, contractVersion: 1, accepts: '1', why: 'peer too new' },
          `${service}'s log line`,
        );
        assert.match(line?.msg ?? '', new RegExp(`^peer outside the contract skew policy: ${ODD} \\(peer too new\\): the peer speaks contract 3, which accepts 2\\.\\.3; this service speaks 1 and accepts 1`));
        assert.equal(linesOf(service, ODD).length, 1, `${service} says it once, not once per message`);
      }
      for (const line of linesOf('sync-loop')) {
        assert.equal(line.instance, '1');
        assert.deepEqual({ version: line.peerContractVersion, mine: line.contractVersion, accepts: line.accepts, why: line.why }, { version: 1, mine: 3, accepts: '2..3', why: 'peer too old' }, `the odd one on ${line.peer}`);
      }

      // /readyz: 200 on every side, the contractVersions check degraded and naming who.
      for (const key of HEARERS.map((s) => `${s}#0`)) {
        const ready = await get<Readyz>(proc(key), '/readyz');
        assert.equal(ready.status, 200, `${key} stays ready: a peer too new must not stop it serving pods`);
        assert.deepEqual(ready.body.degraded, ['contractVersions'], `${key} /readyz degraded`);
        assert.match(ready.body.checks['contractVersions']?.detail ?? '', new RegExp(`degraded: peers outside the skew policy: .*${ODD} speaks 3 \\(peer too new\\)`));
        const metrics = await (await fetch(`http://127.0.0.1:${proc(key).port}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
        assert.match(metrics, /^kubelet_contract_peers_outside_policy\{contract_version="1"[^}]*\} 1$/m, `${key} /metrics`);
        const info = await get<ServiceInfo>(proc(key), '/info');
        assert.deepEqual(info.body.contract.peersOutsidePolicy.map((p) => [p.peer, p.version, p.why]), [[ODD, ODD_VERSION, 'peer too new']], `${key} /info`);
      }
      const oddReady = await get<Readyz>(odd, '/readyz');
      assert.equal(oddReady.status, 200);
      assert.deepEqual(oddReady.body.degraded, ['contractVersions']);
      assert.match(oddReady.body.checks['contractVersions']?.detail ?? '', /^contract 3, accepts 2\.\.3; degraded: peers outside the skew policy: .*pod-worker@skew-e2e#0 speaks 1 \(peer too old\)/);
      const oddPeers = (await get<ServiceInfo>(odd, '/info')).body.contract.peersOutsidePolicy;
      for (const s of HEARD) assert.ok(oddPeers.some((p) => p.peer === `${s}@${NODE}#0` && p.version === 1 && p.why === 'peer too old'), `the odd one's /info lists ${s}: ${JSON.stringify(oddPeers)}`);
      // Nobody heard at the same version is listed: the PLEG never heard the sync loop, so it has nothing degraded.
      const pleg = await get<Readyz>(proc('pleg#0'), '/readyz');
      assert.equal(pleg.body.degraded, undefined, 'the PLEG heard no peer outside the policy');

      // The pod that ran before: the same container, still running, never restarted.
      const steadyAfter = await stack.containers('steady');
      assert.deepEqual(steadyAfter.map((c) => [c.id, c.state]), [[steadyId, 'CONTAINER_RUNNING']], 'the steady pod\'s one container still runs');
    } finally {
      watching = false;
      await watcher;
    }
    assert.ok(answers >= SOAK_MS / 1000, `the watcher saw /pods answers all along (${answers})`);
    assert.deepEqual(notReady, [], 'the steady pod was Running, Ready and never restarted in every /pods answer');
    const by = [...new Set(skewLines.map((l) => `${l.service}#${l.instance}`))].sort();
    report.push(`peer-outside-policy lines: ${skewLines.length}, by ${by.join(', ')}`);
    for (const l of skewLines) report.push(`${l.service}#${l.instance}: ${l.peer} speaks ${l.peerContractVersion} (${l.why}; accepts ${l.accepts})`);
    report.push(`/pods answers watched: ${answers}, steady pod not Ready or restarted in ${notReady.length}`);
  });
});
