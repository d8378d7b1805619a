/**
 * The rolling upgrade test's observer (deploy/compose/upgrade-test.sh): from
 * the start of the workload to the end of the downgrade it polls the node's
 * GET /pods, lists the CRI's sandboxes and containers and follows the CRI's
 * container events (containerd's, straight from its socket: not through the
 * stack under test). On SIGTERM it takes a last look, prints every count and
 * an ok/FAIL line per assertion, and exits 1 when one failed:
 *   - the steady pods: Ready in every /pods answer that has them, restartCount 0,
 *     the same sandbox and container IDs in every CRI listing, no container start after the first look;
 *   - the trickle pods (trickle log: "add NAME" and "del NAME" lines): each started
 *     exactly once (one sandbox, one container, one start event of each);
 *     each deleted one gone from /pods and from the CRI at the end.
 * usage: node dist/test/compose-upgrade/watch.js READ_URL CRI_SOCKET NODE TRICKLE_LOG STEADY_NAME...
 */
import * as grpc from '@grpc/grpc-js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { RuntimeServiceClient } from '@app/cri';

const [readUrl, socket, node, trickleLog, ...steadyNames] = process.argv.slice(2);
if (!readUrl || !socket || !node || !trickleLog || steadyNames.length === 0) {
  console.error('usage: watch.js READ_URL CRI_SOCKET NODE TRICKLE_LOG STEADY_NAME...');
  process.exit(2);
}
const POLL_MS = 500;
const LIST_MS = 1000;
const started = Date.now();
const client = new RuntimeServiceClient(`unix://${socket}`, grpc.credentials.createInsecure());

interface PodView {
  metadata?: { name?: string; namespace?: string };
  status?: { conditions?: { type: string; status: string }[]; containerStatuses?: { restartCount?: number; containerID?: string }[] };
}
interface CriPod {
  sandboxes: Set<string>;
  containers: Set<string>;
}

const polls = { answers: 0, errors: 0, longestGapMs: 0, lastAnswerAt: started };
const steady = new Map(steadyNames.map((n) => [n, { seen: 0, notReady: 0, maxRestarts: 0, notReadyAt: [] as number[] }]));
const onPods = new Set<string>();
let lastPods: Set<string> = new Set();
const cri = new Map<string, CriPod>();
const steadyIds = new Map<string, string>();
const steadyIdChanges: string[] = [];
let steadyBaselineAt = 0;
let lists = 0;
let listErrors = 0;
let events = 0;
let lastCri: { sandboxes: { id: string; pod: string }[]; containers: { id: string; pod: string; state: string }[] } = { sandboxes: [], containers: [] };

const podName = (static_: string) => static_.replace(new RegExp(`-${node}$`), '');
const criPod = (name: string): CriPod => {
  let p = cri.get(name);
  if (!p) cri.set(name, (p = { sandboxes: new Set(), containers: new Set() }));
  return p;
};

async function poll(): Promise<void> {
  try {
    const res = await fetch(`${readUrl}/pods`, { signal: AbortSignal.timeout(3000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const body = (await res.json()) as { items?: PodView[] };
    const now = Date.now();
    polls.longestGapMs = Math.max(polls.longestGapMs, now - polls.lastAnswerAt);
    polls.lastAnswerAt = now;
    polls.answers++;
    const names = new Set<string>();
    for (const pod of body.items ?? []) {
      const name = podName(pod.metadata?.name ?? '');
      names.add(name);
      if (name.startsWith('trickle-')) onPods.add(name);
      const s = steady.get(name);
      if (!s) continue;
      s.seen++;
      const ready = pod.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      if (!ready && s.seen > 0 && steadyBaselineAt) {
        s.notReady++;
        s.notReadyAt.push(Math.round((now - started) / 1000));
      }
      for (const c of pod.status?.containerStatuses ?? []) s.maxRestarts = Math.max(s.maxRestarts, c.restartCount ?? 0);
    }
    lastPods = names;
  } catch {
    polls.errors++;
  }
}

const call = <T>(method: 'listPodSandbox' | 'listContainers', req: object): Promise<T> =>
  new Promise((resolve, reject) => {
    (client[method] as unknown as (r: object, o: object, cb: (e: Error | null, v: T) => void) => void).call(client, req, { deadline: Date.now() + 5000 }, (e, v) => (e ? reject(e) : resolve(v)));
  });

async function list(): Promise<void> {
  try {
    const [sb, cs] = await Promise.all([
      call<{ items: { id: string; labels: Record<string, string> }[] }>('listPodSandbox', {}),
      call<{ containers: { id: string; podSandboxId: string; labels: Record<string, string>; state: string }[] }>('listContainers', {}),
    ]);
    lists++;
    const mine = (labels: Record<string, string>) => labels['io.kubernetes.pod.namespace'] === 'default' && (labels['io.kubernetes.pod.name'] ?? '').endsWith(`-${node}`);
    const sandboxes = sb.items.filter((s) => mine(s.labels)).map((s) => ({ id: s.id, pod: podName(s.labels['io.kubernetes.pod.name'] ?? '') }));
    const containers = cs.containers.filter((c) => mine(c.labels)).map((c) => ({ id: c.id, pod: podName(c.labels['io.kubernetes.pod.name'] ?? ''), state: c.state }));
    for (const s of sandboxes) criPod(s.pod).sandboxes.add(s.id);
    for (const c of containers) criPod(c.pod).containers.add(c.id);
    // The steady pods: their first full look is the baseline; every later one must show the same IDs, running.
    const now = new Map<string, string>();
    for (const name of steadyNames) {
      const ids = [...sandboxes.filter((s) => s.pod === name).map((s) => `sandbox:${s.id}`), ...containers.filter((c) => c.pod === name).map((c) => `${c.state}:${c.id}`)].sort().join(' ');
      now.set(name, ids);
    }
    if (!steadyBaselineAt && [...now.values()].every((ids) => /sandbox:/.test(ids) && /CONTAINER_RUNNING:/.test(ids))) {
      for (const [n, ids] of now) steadyIds.set(n, ids);
      steadyBaselineAt = Date.now();
    } else if (steadyBaselineAt) {
      for (const [n, ids] of now) if (ids !== steadyIds.get(n)) steadyIdChanges.push(`${n} at ${Math.round((Date.now() - started) / 1000)} s: ${steadyIds.get(n)} -> ${ids}`);
    }
    lastCri = { sandboxes, containers };
  } catch (err) {
    if (listErrors++ === 0) console.error(`watch: a CRI listing failed: ${(err as Error).message}`);
  }
}

// containerd's task start events (`ctr events`: containerd 1.6 has no CRI GetContainerEvents), a sandbox's
// (its pause container: the sandbox ID) and each container's; exec probes' processes are other events.
const startEvents = new Map<string, number[]>();
const ctr = spawn('ctr', ['--address', socket, 'events'], { stdio: ['ignore', 'pipe', 'inherit'] });
createInterface({ input: ctr.stdout }).on('line', (line) => {
  const m = / k8s\.io \/tasks\/start (\{.*\})\s*$/.exec(line);
  if (!m?.[1]) return;
  events++;
  const id = (JSON.parse(m[1]) as { container_id?: string }).container_id ?? '';
  if (id) startEvents.set(id, [...(startEvents.get(id) ?? []), Date.now()]);
});

let busy = false;
const pollTimer = setInterval(() => void poll(), POLL_MS);
const listTimer = setInterval(() => {
  if (busy) return;
  busy = true;
  void list().finally(() => (busy = false));
}, LIST_MS);

let failed = 0;
const check = (ok: boolean, what: string) => {
  if (!ok) failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} - ${what}`);
};

process.on('SIGTERM', () => {
  clearInterval(pollTimer);
  clearInterval(listTimer);
  void (async () => {
    await poll();
    await list();
    ctr.kill('SIGTERM');
    const starts = (id: string) => startEvents.get(id)?.length ?? 0;
    const lateSteadyStarts = steadyNames.flatMap((n) => [...(cri.get(n)?.sandboxes ?? []), ...(cri.get(n)?.containers ?? [])].filter((id) => (startEvents.get(id) ?? []).some((at) => at > steadyBaselineAt)).map((id) => `${n} ${id.slice(0, 12)}`));
    const secs = Math.round((Date.now() - started) / 1000);
    console.log(`== watched ${secs} s: ${polls.answers} /pods answers, ${polls.errors} unanswered (longest gap ${(polls.longestGapMs / 1000).toFixed(1)} s); ${lists} CRI listings (${listErrors} failed), ${events} containerd task start events`);
    check(steadyBaselineAt > 0, `the steady pods' sandboxes and containers were seen running in the CRI (${[...steadyIds.values()].map((ids) => ids.split(' ').length).reduce((a, b) => a + b, 0)} IDs)`);
    for (const [name, s] of steady) {
      check(s.seen > 0 && s.notReady === 0, `${name}: Ready in all ${s.seen} /pods answers that had it (NotReady in ${s.notReady}${s.notReady ? `, at ${s.notReadyAt.slice(0, 10).join(', ')} s` : ''})`);
      check(s.maxRestarts === 0, `${name}: restartCount ${s.maxRestarts} at most`);
    }
    check(steadyIdChanges.length === 0, `the steady pods' sandbox and container IDs the same and running in every CRI listing (${steadyIdChanges.length} changes${steadyIdChanges.length ? `: ${steadyIdChanges.slice(0, 3).join('; ')}` : ''})`);
    check(lateSteadyStarts.length === 0, `no start event for a steady pod's container after the baseline (${lateSteadyStarts.length}${lateSteadyStarts.length ? `: ${lateSteadyStarts.slice(0, 3).join(', ')}` : ''})`);

    const log = readFileSync(trickleLog, 'utf8').split('\n').filter(Boolean).map((l) => l.split(' '));
    const added = log.filter(([op]) => op === 'add').map(([, n]) => n ?? '');
    const deleted = new Set(log.filter(([op]) => op === 'del').map(([, n]) => n ?? ''));
    const once: string[] = [];
    const wrong: string[] = [];
    for (const name of added) {
      const p = cri.get(name);
      const containerStarts = p ? [...p.containers].map(starts) : [];
      const sandboxStarts = p ? [...p.sandboxes].map(starts) : [];
      const detail = `${p?.sandboxes.size ?? 0} sandbox(es) (starts ${sandboxStarts.join('+') || 0}), ${p?.containers.size ?? 0} container(s) (starts ${containerStarts.join('+') || 0})`;
      if (p && p.sandboxes.size === 1 && p.containers.size === 1 && containerStarts[0] === 1 && sandboxStarts[0] === 1) once.push(name);
      else wrong.push(`${name}: ${detail}`);
    }
    check(added.length > 0 && wrong.length === 0, `every new pod started exactly once: ${once.length} of ${added.length} one sandbox, one container, one start${wrong.length ? `; not: ${wrong.slice(0, 5).join('; ')}` : ''}`);
    const seenOnPods = added.filter((n) => onPods.has(n)).length;
    check(seenOnPods === added.length, `every new pod showed in /pods: ${seenOnPods} of ${added.length}`);
    const leftOnPods = [...deleted].filter((n) => lastPods.has(n));
    const leftInCri = [...deleted].filter((n) => lastCri.sandboxes.some((s) => s.pod === n) || lastCri.containers.some((c) => c.pod === n));
    check(deleted.size > 0 && leftOnPods.length === 0, `every deleted pod gone from /pods: ${deleted.size - leftOnPods.length} of ${deleted.size}${leftOnPods.length ? `; left: ${leftOnPods.slice(0, 5).join(', ')}` : ''}`);
    check(deleted.size > 0 && leftInCri.length === 0, `every deleted pod gone from the CRI (no sandbox, no container): ${deleted.size - leftInCri.length} of ${deleted.size}${leftInCri.length ? `; left: ${leftInCri.slice(0, 5).join(', ')}` : ''}`);
    console.log(`watch: ${failed} failed`);
    client.close();
    process.exit(failed ? 1 : 0);
  })();
});
