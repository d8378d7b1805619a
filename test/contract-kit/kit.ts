/**
 * The contract kit: a black-box suite run against whatever answers as one
 * subsystem on a real node stack (real nats-server, real containerd through
 * cri-gateway), as a team that writes its own subsystem would run it. It
 * speaks to the node only as the contract does (docs/contract.md): it
 * drives the subsystem's inputs (the runtime behind its back, the messages
 * it must react to, bad input) and reads what it must produce (its
 * messages on their subjects, its KV records, its leader lease), and names
 * what is missing when something is.
 *
 *   npm run contract:kit -- --service pleg [--node NODE] [--nats URL] [--nats-password-file FILE] [--restart 'COMMAND'] [--manifests DIR] [--read-url URL]
 *
 * It connects as the admin user (the launcher prints where its password
 * is; compose keeps it in the nats-credentials volume). --restart is a
 * shell command that restarts the subsystem under test (e.g. `docker
 * compose restart pleg`): with it, the restart checks run too. Run it
 * against a node whose other subsystems are not running (cri-gateway
 * alone beside the one under test, as test/contract-kit.e2e.spec.ts
 * does): the kit makes pods behind the node's back, which a sync loop's
 * housekeeping would kill as unknown. Its last line is "N passed, N
 * failed"; it exits 1 when one failed.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { NatsCriClient, type CriInput, type CriRuntime, type PodSandboxConfig } from '@app/cri';
import type { Pod } from '@app/contracts';
import { KubeletLabels } from '@app/kube';
import { podManagerStore } from '@app/pod-manager';
import { leaderLeaseKey, type LeaderElectionRecord } from '@app/leader-election';

/** What a check is given: the node's NATS as admin, the node's name, its CRI through cri-gateway. */
export interface KitTarget {
  nc: NatsConnection;
  node: string;
  cri: CriRuntime;
  /** Restarts the subsystem under test and resolves once it was asked to; absent: the restart checks are not run. */
  restart?: () => Promise<void>;
  /** The node's read port (the kubelet server's /pods, /containerLogs; its suite needs it). */
  readUrl?: string;
  /** The console's URL (its suite needs it). */
  consoleUrl?: string;
  /** The node's static pod manifest directory (config-source's checks write their manifests there). */
  manifests?: string;
  /** The longest a check waits for what it expects (default 30 s: the subsystem's 1 s relist, on a loaded machine). */
  timeoutMs: number;
}

/** A failed expectation, its message naming what is missing and what was seen instead. */
export class KitFailure extends Error {
  override readonly name = 'KitFailure';
}

export interface KitCheck {
  name: string;
  /** Needs `restart` (skipped, and said so, when the kit was given none). */
  needsRestart?: boolean;
  run(target: KitTarget, note: (line: string) => void): Promise<void>;
}

export interface KitResult {
  name: string;
  outcome: 'passed' | 'failed' | 'not run';
  detail: string;
  ms: number;
  notes: string[];
}

/** Runs each check in turn (each makes and removes its own pods); one that fails does not stop the others. */
export async function runKit(checks: readonly KitCheck[], target: KitTarget): Promise<KitResult[]> {
  const results: KitResult[] = [];
  for (const check of checks) {
    const notes: string[] = [];
    const started = performance.now();
    if (check.needsRestart && !target.restart) {
      results.push({ name: check.name, outcome: 'not run', detail: 'needs --restart', ms: 0, notes });
      continue;
    }
    try {
      await check.run(target, (line) => notes.push(line));
      results.push({ name: check.name, outcome: 'passed', detail: '', ms: performance.now() - started, notes });
    } catch (err) {
      results.push({ name: check.name, outcome: 'failed', detail: err instanceof Error ? err.message : String(err), ms: performance.now() - started, notes });
    }
  }
  return results;
}

/** The report a user reads: a line per check, its notes and failure under it, and "N passed, N failed" last. */
export function kitReport(service: string, results: readonly KitResult[]): string {
  const lines = [`contract kit: ${service}`];
  for (const r of results) {
    const mark = r.outcome === 'passed' ? '✔' : r.outcome === 'failed' ? '✖' : '-';
    lines.push(`${mark} ${r.name}${r.outcome === 'not run' ? ` (not run: ${r.detail})` : ` (${Math.round(r.ms)} ms)`}`);
    for (const n of r.notes) lines.push(`    ${n}`);
    if (r.outcome === 'failed') lines.push(`    ${r.detail.split('\n').join('\n    ')}`);
  }
  const count = (o: KitResult['outcome']) => results.filter((r) => r.outcome === o).length;
  lines.push(`${count('passed')} passed, ${count('failed')} failed`);
  return lines.join('\n');
}

/** Polls `probe` until it returns a value; a KitFailure naming `what` (and what `seen` says was there) after `timeoutMs`. */
export async function expectWithin<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, seen?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const saw = seen?.();
  throw new KitFailure(`${what}: not within ${timeoutMs / 1000} s${saw ? `; seen: ${saw}` : ''}${last ? ` (last error: ${(last as Error).message})` : ''}`);
}

/** The namespace of every pod the kit makes. */
export const KIT_NAMESPACE = 'contract-kit';

/**
 * A hostNetwork sandbox of the node for a kit pod `uid` named `name`,
 * labelled as the kubelet labels its own (the PLEG and housekeeping look at
 * their node's only).
 */
export function kitSandboxConfig(t: Pick<KitTarget, 'node'>, uid: string, name: string): CriInput<PodSandboxConfig> {
  return {
    metadata: { name, namespace: KIT_NAMESPACE, uid, attempt: 0 },
    logDirectory: `/tmp/ks-contract-kit/${uid}`,
    labels: { [KubeletLabels.podName]: name, [KubeletLabels.podNamespace]: KIT_NAMESPACE, [KubeletLabels.podUid]: uid, [KubeletLabels.node]: t.node },
    annotations: {},
    linux: { securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } },
  };
}

/** The podManager's record of `pod` in `pods`, written (admitted, source api) or deleted, as the sync loop keeps it (podManagerStore). */
export async function desirePod(t: Pick<KitTarget, 'nc' | 'node'>, pod: Pod, desired: boolean): Promise<void> {
  const store = podManagerStore(await new Kvm(t.nc).open('pods'), t.node);
  const uid = pod.metadata.uid ?? '';
  if (desired) await store.put(uid, { pod, source: 'api', addedAt: Date.now(), admitted: true });
  else await store.delete(uid);
}

/** A single-active service leads: it holds the leases key `<node>.leader.<service>` and renews it within its duration. */
export function leaderLeaseCheck(service: string): KitCheck {
  return {
    name: `leads: holds the leases key <node>.leader.${service}, renewed within its duration`,
    async run(t, note) {
      const kv = await new Kvm(t.nc).open('leases');
      const key = leaderLeaseKey(t.node, service);
      const read = async () => {
        const e = await kv.get(key);
        return e && e.operation === 'PUT' && e.value.length > 0 ? (JSON.parse(new TextDecoder().decode(e.value)) as LeaderElectionRecord) : undefined;
      };
      const record = await expectWithin(`a leader lease at ${key} in the leases bucket`, read, t.timeoutMs);
      const first = Date.parse(record.renewTime);
      const renewed = await expectWithin(
        `the lease at ${key} renewed (renewTime later than ${record.renewTime}) within its leaseDurationMs ${record.leaseDurationMs}`,
        async () => {
          const r = await read();
          return r && r.holderIdentity === record.holderIdentity && Date.parse(r.renewTime) > first ? r : undefined;
        },
        Math.max(record.leaseDurationMs, 1000) + 2000,
      );
      note(`holder ${renewed.holderIdentity}, leaseDurationMs ${renewed.leaseDurationMs}, renewed ${Date.parse(renewed.renewTime) - first} ms after first read`);
    },
  };
}

const SUITES: Record<string, () => Promise<readonly KitCheck[]>> = {
  pleg: async () => (await import('./pleg.kit.js')).PLEG_CHECKS,
  'cri-gateway': async () => (await import('./cri-gateway.kit.js')).CRI_GATEWAY_CHECKS,
  prober: async () => (await import('./prober.kit.js')).PROBER_CHECKS,
  'config-source': async () => (await import('./config-source.kit.js')).CONFIG_SOURCE_CHECKS,
  'sync-loop': async () => (await import('./sync-loop.kit.js')).SYNC_LOOP_CHECKS,
  'pod-worker': async () => (await import('./pod-worker.kit.js')).POD_WORKER_CHECKS,
  'status-manager': async () => (await import('./status-manager.kit.js')).STATUS_MANAGER_CHECKS,
  'kubelet-server': async () => (await import('./kubelet-server.kit.js')).KUBELET_SERVER_CHECKS,
  'node-status': async () => (await import('./node-status.kit.js')).NODE_STATUS_CHECKS,
  console: async () => (await import('./console.kit.js')).CONSOLE_CHECKS,
};

/** The services the kit has a suite for. */
export const KIT_SERVICES = Object.keys(SUITES);

export async function checksFor(service: string): Promise<readonly KitCheck[]> {
  const suite = SUITES[service];
  if (!suite) throw new Error(`the contract kit has no suite for ${JSON.stringify(service)} (it has: ${KIT_SERVICES.join(', ')})`);
  return suite();
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      service: { type: 'string' },
      node: { type: 'string', default: process.env['NODE_NAME'] ?? 'node-1' },
      nats: { type: 'string', default: process.env['KUBELET_SPLIT_NATS'] ?? 'nats://127.0.0.1:4222' },
      'nats-password-file': { type: 'string', default: process.env['KUBELET_SPLIT_NATS_PASSWORD_FILE'] },
      restart: { type: 'string' },
      manifests: { type: 'string', default: process.env['POD_MANIFEST_PATH'] },
      'read-url': { type: 'string', default: process.env['KUBELET_SPLIT_SERVER'] ?? 'http://127.0.0.1:10315' },
      'console-url': { type: 'string', default: 'http://127.0.0.1:10319/console' },
      timeout: { type: 'string', default: '30' },
    },
  });
  if (!values.service) {
    process.stderr.write(`usage: npm run contract:kit -- --service ${KIT_SERVICES.join('|')} [--node NODE] [--nats URL] [--nats-password-file FILE] [--restart COMMAND] [--manifests DIR] [--read-url URL] [--console-url URL] [--timeout SECONDS]\n`);
    return 2;
  }
  const checks = await checksFor(values.service);
  const pass = values['nats-password-file'] ? readFileSync(values['nats-password-file'], 'utf8').trim() : undefined;
  const nc = await connect({ servers: values.nats, name: `contract-kit@${values.node}`, ...(pass ? { user: 'admin', pass } : {}) });
  try {
    const restartCommand = values.restart;
    const results = await runKit(checks, {
      nc,
      node: values.node,
      cri: new NatsCriClient(nc, values.node, 'contract-kit'),
      timeoutMs: Number(values.timeout) * 1000,
      ...(values.manifests ? { manifests: values.manifests } : {}),
      readUrl: values['read-url'],
      consoleUrl: values['console-url'],
      ...(restartCommand ? { restart: () => Promise.resolve(void execFileSync('sh', ['-c', restartCommand], { stdio: 'inherit' })) } : {}),
    });
    process.stdout.write(`${kitReport(values.service, results)}\n`);
    return results.some((r) => r.outcome === 'failed') ? 1 : 0;
  } finally {
    await nc.close();
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  main(process.argv.slice(2)).then(
    (code) => process.stdout.write('', () => process.exit(code)),
    (err: unknown) => {
      process.stderr.write(`contract kit: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(2);
    },
  );
}
