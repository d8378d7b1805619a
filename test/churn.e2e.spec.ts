/**
 * Issue 12's churn, end to end: 50 static pods created, updated and deleted
 * in waves while each service in turn is SIGKILLed and restarted, with three
 * pod-worker replicas of which one is killed mid-churn and left dead for two
 * waves. Checked as a user would: containerd's own lists (every desired pod
 * has exactly one READY sandbox and one RUNNING container per container name,
 * with the current spec; nothing of a deleted pod is left) and GET /pods
 * (exactly the desired pods, Running and Ready, naming the containers that
 * run). At no moment may two copies of one container run, or two sandboxes of
 * one pod be ready.
 *
 * What was chosen, to stay well inside a CI budget on two cores: 7 waves, one
 * per service killed; each wave creates 7 pods (8 in the last: 50 in all),
 * changes the spec of 2 running pods (an env value of `main`: a new pod, whose
 * UID is the manifest's digest, started once the old one stopped) and deletes 2, then SIGKILLs its service 600 ms later and
 * restarts it (same instance id, as a supervisor would) 1.5 s after the kill.
 * The node is then given up to WAVE_BOUND_MS to converge; the time from the
 * kill to convergence is the wave's number. The third pod-worker replica is
 * SIGKILLed with wave 3 and restarted with wave 5. At the end 38 pods are
 * desired (a third with two containers, a quarter with a readiness probe),
 * 12 were deleted and 12 updates were made. One summary line gives the fault
 * times, the convergence times, lost pods and duplicates.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { Container, PodSandbox } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import type { ServiceName } from '@app/service';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const NODE = 'churn-e2e';
const WAVES = 7;
const TOTAL_PODS = 50;
// Generous bounds, to catch a hang: a wave's edits are whole new pods, each waiting for its old generation (15-28 s on
// this machine under load); the numbers are in the summary line.
const WAVE_BOUND_MS = 60_000;
const FINAL_BOUND_MS = 90_000;
const KILL_AFTER_MS = 600;
const RESTART_AFTER_MS = 1500;

/** The service SIGKILLed in each wave, in turn. */
const killed: { service: ServiceName; instance: string }[] = [
  { service: 'config-source', instance: '0' },
  { service: 'sync-loop', instance: '0' },
  { service: 'pod-worker', instance: '1' },
  { service: 'pleg', instance: '0' },
  { service: 'prober', instance: '0' },
  { service: 'status-manager', instance: '0' },
  { service: 'cri-gateway', instance: '0' },
];
/** The pod-worker replica that is killed and left dead for a while. */
const LONG_DEAD = { service: 'pod-worker' as const, instance: '2', killWave: 3, restartWave: 5 };

interface DesiredPod {
  name: string;
  /** The value of `main`'s GEN env, bumped by each update. */
  gen: number;
  containers: string[];
  probe: boolean;
}

const RUN = "trap 'exit 0' TERM; while true; do sleep 1; done";
function manifest(p: DesiredPod): string {
  const probe = p.probe ? `      readinessProbe:\n        exec:\n          command: ["true"]\n        periodSeconds: 3\n` : '';
  const main = `    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(RUN)}]\n      env:\n        - name: GEN\n          value: "${p.gen}"\n${probe}`;
  const side = p.containers.includes('side') ? `    - name: side\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(RUN)}]\n` : '';
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${p.name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n${main}${side}`;
}

/** A small deterministic PRNG (mulberry32), so every run churns the same pods. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Observation {
  problems: string[];
  /** `<pod>/<container>` with more than one RUNNING container, and `<pod>` with more than one READY sandbox, in this snapshot. */
  duplicates: string[];
  /** Desired pods with a container not running, and deleted pods with anything still running. */
  lost: string[];
}

describe('churn: 50 pods while every service is SIGKILLed in turn', { timeout: 600_000 }, () => {
  const stack = new NodeStack({
    node: NODE,
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'prober', 'config-source'],
    // The resync interval of both sides short (a lost work-done is recovered within one), as the other e2e tests do.
    env: { 'pod-worker': { CRASHLOOP_BACKOFF_INITIAL: '2s', CRASHLOOP_BACKOFF_MAX: '16s', SYNC_FREQUENCY: '10s', POD_SYNC_BACKOFF: '2s' }, 'sync-loop': { SYNC_FREQUENCY: '10s' } },
  });
  const desired = new Map<string, DesiredPod>();
  const deleted = new Set<string>();
  /** The GEN each container id was created with (a container's env never changes). */
  const genOf = new Map<string, string>();
  /** Every duplicate ever seen, with the ids involved. */
  const duplicatesSeen = new Map<string, Set<string>>();

  before(async () => {
    await stack.start();
    for (const instance of ['0', '1', '2']) await stack.startService('pod-worker', instance);
  });
  after(() => stack.stop());

  async function kill(service: ServiceName, instance: string): Promise<void> {
    const key = `${service}#${instance}`;
    const sp = stack.procs.get(key);
    assert.ok(sp, `${key} runs`);
    const exited = new Promise((r) => sp.process.once('exit', r));
    sp.process.kill('SIGKILL');
    await exited;
    stack.procs.delete(key);
  }

  async function envGen(id: string): Promise<string | undefined> {
    const known = genOf.get(id);
    if (known !== undefined) return known;
    const res = await stack.cri.runtime('ContainerStatus', { containerId: id, verbose: true });
    const info = JSON.parse(res.info['info'] ?? '{}') as { config?: { envs?: { key?: string; value?: string }[] } };
    const gen = info.config?.envs?.find((e) => e.key === 'GEN')?.value;
    if (gen !== undefined) genOf.set(id, gen);
    return gen;
  }

  /** containerd's view and GET /pods, against what the manifests say. */
  async function observe(): Promise<Observation> {
    const problems: string[] = [];
    const duplicates: string[] = [];
    const lost: string[] = [];
    const filter = { labelSelector: { [KubeletLabels.node]: NODE } };
    let sandboxes: PodSandbox[];
    let containers: Container[];
    try {
      [sandboxes, containers] = await Promise.all([stack.cri.runtime('ListPodSandbox', { filter }).then((r) => r.items), stack.cri.runtime('ListContainers', { filter }).then((r) => r.containers)]);
    } catch (err) {
      return { problems: [`containerd cannot be listed: ${(err as Error).message}`], duplicates, lost };
    }
    const sbOf = (pod: string) => sandboxes.filter((s) => s.metadata?.name === pod);
    const ctOf = (pod: string) => containers.filter((c) => c.labels[KubeletLabels.podName] === pod);
    const running = new Map<string, Container>();
    for (const d of desired.values()) {
      const pod = stack.podName(d.name);
      const ready = sbOf(pod).filter((s) => s.state === 'SANDBOX_READY');
      if (ready.length > 1) duplicates.push(`${pod} (sandboxes ${ready.map((s) => s.id.slice(0, 12)).join(' ')})`);
      if (ready.length !== 1) problems.push(`${pod}: ${ready.length} ready sandboxes`);
      for (const name of d.containers) {
        const live = ctOf(pod).filter((c) => c.labels[KubeletLabels.containerName] === name && c.state === 'CONTAINER_RUNNING');
        if (live.length > 1) duplicates.push(`${pod}/${name} (containers ${live.map((c) => c.id.slice(0, 12)).join(' ')})`);
        const [c] = live;
        if (!c) {
          lost.push(`${pod}/${name}`);
          problems.push(`${pod}/${name}: not running`);
          continue;
        }
        running.set(`${pod}/${name}`, c);
        if (live.length === 1 && ready.length === 1 && c.podSandboxId !== ready[0]?.id) problems.push(`${pod}/${name}: runs outside the pod's ready sandbox`);
        if (name === 'main') {
          const gen = await envGen(c.id).catch(() => undefined);
          if (gen !== String(d.gen)) problems.push(`${pod}/main: runs GEN=${gen ?? '?'}, the manifest says ${d.gen}`);
        }
      }
    }
    for (const name of deleted) {
      const pod = stack.podName(name);
      const left = [...sbOf(pod).map((s) => `sandbox ${s.state}`), ...ctOf(pod).map((c) => `container ${c.metadata?.name ?? ''} ${c.state}`)];
      if (left.length > 0) problems.push(`${pod} (deleted): ${left.join(', ')} in containerd`);
      if (sbOf(pod).some((s) => s.state === 'SANDBOX_READY') || ctOf(pod).some((c) => c.state === 'CONTAINER_RUNNING')) lost.push(`${pod} (deleted, still running)`);
    }

    let items: V1Pod[];
    try {
      items = (await stack.podList()).items;
    } catch (err) {
      return { problems: [...problems, `GET /pods: ${(err as Error).message}`], duplicates, lost };
    }
    const want = new Set([...desired.values()].map((d) => stack.podName(d.name)));
    const served = new Set(items.map((p) => p.metadata?.name ?? ''));
    for (const pod of served) if (!want.has(pod)) problems.push(`${pod}: in /pods, not desired`);
    for (const d of desired.values()) {
      const pod = stack.podName(d.name);
      const p = items.find((x) => x.metadata?.name === pod);
      if (!p) {
        problems.push(`${pod}: missing from /pods`);
        continue;
      }
      const s = p.status;
      if (s?.phase !== 'Running') problems.push(`${pod}: /pods says ${s?.phase ?? 'no phase'}`);
      if (s?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') problems.push(`${pod}: /pods says not Ready`);
      const specGen = p.spec?.containers.find((c) => c.name === 'main')?.env?.find((e) => e.name === 'GEN')?.value;
      if (specGen !== String(d.gen)) problems.push(`${pod}: /pods serves the spec with GEN=${specGen ?? '?'}, the manifest says ${d.gen}`);
      for (const name of d.containers) {
        const cs = s?.containerStatuses?.find((c) => c.name === name);
        const c = running.get(`${pod}/${name}`);
        if (!cs?.state?.running || cs.ready !== true) problems.push(`${pod}/${name}: /pods says ${cs?.state?.running ? 'running, not ready' : 'not running'}`);
        else if (c && cs.containerID !== `containerd://${c.id}`) problems.push(`${pod}/${name}: /pods names ${cs.containerID ?? '?'}, containerd runs ${c.id}`);
      }
    }
    return { problems, duplicates, lost };
  }

  function noteDuplicates(o: Observation): void {
    for (const d of o.duplicates) {
      const [key = d, ids = ''] = d.split(' (');
      const set = duplicatesSeen.get(key) ?? new Set<string>();
      for (const id of ids.replace(/^\w+ |\)$/g, '').split(' ')) set.add(id);
      duplicatesSeen.set(key, set);
    }
  }

  /** Polls until the node matches the manifests; the ms it took from `since`, or undefined with the last problems. */
  async function converge(since: number, boundMs: number): Promise<{ ms?: number; last: Observation; lastProblems: string[] }> {
    const deadline = since + boundMs;
    let last: Observation = { problems: ['not observed'], duplicates: [], lost: [] };
    let lastProblems: string[] = [];
    while (Date.now() < deadline) {
      last = await observe();
      noteDuplicates(last);
      if (last.problems.length === 0 && last.duplicates.length === 0) return { ms: Date.now() - since, last, lastProblems };
      lastProblems = last.problems;
      await new Promise((r) => setTimeout(r, 250));
    }
    return { last, lastProblems };
  }

  it('afterwards every desired pod runs once with its current spec, every deleted pod is gone, and /pods is right', async () => {
    const rand = prng(12);
    const t0 = Date.now();
    let next = 0;
    const report: string[] = [];
    let unconverged = 0;
    for (let wave = 0; wave < WAVES; wave++) {
      // The wave's manifest changes, all at once.
      const creates = wave === WAVES - 1 ? TOTAL_PODS - next : Math.floor(TOTAL_PODS / WAVES);
      const existing = [...desired.values()];
      const pick = () => existing.splice(Math.floor(rand() * existing.length), 1)[0];
      const updates = wave === 0 ? [] : [pick(), pick()].filter((p) => p !== undefined);
      const deletes = wave === 0 ? [] : [pick(), pick()].filter((p) => p !== undefined);
      for (let i = 0; i < creates; i++, next++) {
        const p: DesiredPod = { name: `churn-${String(next).padStart(2, '0')}`, gen: 1, containers: next % 3 === 0 ? ['main', 'side'] : ['main'], probe: next % 4 === 1 };
        desired.set(p.name, p);
        stack.writeManifest(p.name, manifest(p));
      }
      for (const p of updates) {
        p.gen++;
        stack.writeManifest(p.name, manifest(p));
      }
      for (const p of deletes) {
        desired.delete(p.name);
        deleted.add(p.name);
        stack.removeManifest(p.name);
      }

      // The wave's fault: a SIGKILL while the changes are under way, a restart shortly after.
      await new Promise((r) => setTimeout(r, KILL_AFTER_MS));
      const fault = killed[wave];
      assert.ok(fault);
      const faultAt = Date.now();
      const victims = [fault, ...(wave === LONG_DEAD.killWave ? [LONG_DEAD] : [])];
      for (const v of victims) await kill(v.service, v.instance);
      await new Promise((r) => setTimeout(r, RESTART_AFTER_MS));
      await stack.startService(fault.service, fault.instance);
      if (wave === LONG_DEAD.restartWave) await stack.startService(LONG_DEAD.service, LONG_DEAD.instance);

      const { ms, last, lastProblems } = await converge(faultAt, WAVE_BOUND_MS);
      // What held a slow wave up, for looking into it.
      if (ms !== undefined && ms > 10_000) console.log(`churn wave ${wave} (${victims.map((v) => `${v.service}#${v.instance}`).join('+')}) took ${(ms / 1000).toFixed(1)}s; the last problems: ${lastProblems.slice(0, 10).join('; ')}`);
      const what = `${victims.map((v) => `${v.service}#${v.instance}`).join('+')}${wave === LONG_DEAD.restartWave ? ` (${LONG_DEAD.service}#${LONG_DEAD.instance} back)` : ''}`;
      report.push(`w${wave} t=${((faultAt - t0) / 1000).toFixed(1)}s kill ${what}: ${ms === undefined ? `NOT converged in ${WAVE_BOUND_MS / 1000}s` : `converged in ${(ms / 1000).toFixed(1)}s`}`);
      if (ms === undefined) {
        unconverged++;
        console.log(`churn wave ${wave} (${what}) did not converge; ${last.problems.length} problems: ${last.problems.slice(0, 15).join('; ')}`);
      }
    }

    // A generous bound for the end, then the node must stay converged.
    const settled = await converge(Date.now(), FINAL_BOUND_MS);
    await new Promise((r) => setTimeout(r, 5000));
    const final = await observe();
    noteDuplicates(final);
    const dupCount = [...duplicatesSeen.values()].reduce((n, ids) => n + ids.size - 1, 0);
    const summary =
      `churn summary: ${TOTAL_PODS} pods created, ${deleted.size} deleted, ${desired.size} desired at the end, ${WAVES} waves in ${((Date.now() - t0) / 1000).toFixed(0)}s; ` +
      `${report.join('; ')}; final: ${settled.ms === undefined ? `NOT converged in ${FINAL_BOUND_MS / 1000}s` : `converged ${(settled.ms / 1000).toFixed(1)}s after the last wave`}; ` +
      `lost pods ${final.lost.length}, duplicate containers/sandboxes seen ${dupCount}, waves not converged ${unconverged}`;
    console.log(summary);

    assert.deepEqual([...duplicatesSeen.entries()].map(([k, ids]) => `${k}: ${[...ids].join(' ')}`), [], 'never two copies of one container running, nor two ready sandboxes of one pod');
    assert.deepEqual(final.lost, [], 'no desired pod without its containers, no deleted pod still running');
    assert.deepEqual(final.problems, [], 'containerd and /pods match the manifests');
    assert.equal(unconverged, 0, `every wave converged within ${WAVE_BOUND_MS / 1000}s of its fault: ${report.join('; ')}`);
  });
});
