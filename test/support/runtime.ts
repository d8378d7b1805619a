/**
 * The real containerd for end-to-end tests: the one deploy/runtime.sh runs
 * (npm test starts it), or a throw-away second one with its own state and
 * root, for tests that must kill and restart it.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../deploy/local/stack.js';

const script = join(REPO_ROOT, 'deploy', 'runtime.sh');

/** The socket of the project's containerd. */
export function runtimeAddress(): string {
  return process.env['KS_RUNTIME_ADDRESS'] ?? execFileSync('bash', [script, 'address'], { encoding: 'utf8' }).trim();
}

export type RuntimeKind = 'containerd2' | 'containerd1.6';

/**
 * Which containerd the tests run on (deploy/runtime.sh kind: KS_RUNTIME, or
 * the one running): containerd 2 streams container events over the CRI,
 * containerd 1.6 does not (docs/adr/0040).
 */
export function runtimeKind(): RuntimeKind {
  const kind = process.env['KS_RUNTIME'] || execFileSync('bash', [script, 'kind'], { encoding: 'utf8' }).trim();
  if (kind !== 'containerd2' && kind !== 'containerd1.6') throw new Error(`deploy/runtime.sh kind said "${kind}", neither containerd2 nor containerd1.6`);
  return kind;
}

/** Whether the runtime streams container events (GetContainerEvents): containerd 2 does, 1.6 does not. */
export function runtimeStreamsEvents(): boolean {
  return runtimeKind() === 'containerd2';
}

/**
 * An outage of the project's containerd (deploy/runtime.sh restart): the
 * daemon stops, stays down `downMs`, and starts again; the running tasks'
 * shims stay. Other test files share this containerd: call it only inside
 * a test run, which holds the e2e lock.
 */
export async function restartRuntime(downMs = 0): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    execFile('bash', [script, 'restart', String(downMs / 1000)], { encoding: 'utf8' }, (err, stdout, stderr) => (err ? reject(new Error(`runtime.sh restart: ${stderr}${stdout}`)) : resolve()));
  });
}

export interface ScratchRuntime {
  address: string;
  start(): void;
  stop(): void;
  remove(): void;
}

/** A second containerd in a temporary directory (no images), started and stopped at will. */
export function scratchRuntime(): ScratchRuntime {
  const dir = mkdtempSync(join(tmpdir(), 'ks-ctd-'));
  const env = { ...process.env, KS_RUNTIME_STATE: join(dir, 'state'), KS_RUNTIME_ROOT: join(dir, 'root'), KS_SKIP_IMAGES: '1' };
  const run = (cmd: string) => {
    const r = spawnSync('bash', [script, cmd], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`runtime.sh ${cmd}: ${r.stderr}${r.stdout}`);
    return r.stdout.trim();
  };
  return {
    address: run('address'),
    start: () => void run('start'),
    stop: () => void run('stop'),
    remove: () => {
      run('stop');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The project's containerd of `kind` running (deploy/runtime.sh with KS_RUNTIME): another kind that answers
 * is stopped first (its tasks killed: nothing else may be using it). Returns how to leave the runtime as it was
 * found: the same kind running again, or none. For the tools that compare the two kinds in one run (the bench's
 * --runtimes, runtime-diff); KS_RUNTIME is set for this process's children meanwhile.
 */
export function useRuntimeKind(kind: RuntimeKind, log: (line: string) => void = () => undefined): () => void {
  const run = (cmd: string, k?: string) => {
    const env = { ...process.env };
    if (k === undefined) delete env['KS_RUNTIME'];
    else env['KS_RUNTIME'] = k;
    return spawnSync('bash', [script, cmd], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env });
  };
  const running = () => (run('status').status === 0 ? run('kind').stdout.trim() : undefined);
  const before = running();
  const beforeEnv = process.env['KS_RUNTIME'];
  if (before !== undefined && before !== kind) {
    log(`stopping the running ${before} for ${kind}`);
    run('stop');
  }
  if (run('start', kind).status !== 0) throw new Error(`deploy/runtime.sh start (KS_RUNTIME=${kind}) failed`);
  process.env['KS_RUNTIME'] = kind;
  return () => {
    if (beforeEnv === undefined) delete process.env['KS_RUNTIME'];
    else process.env['KS_RUNTIME'] = beforeEnv;
    const now = running();
    if (now === before) return;
    if (now !== undefined) run('stop');
    if (before !== undefined) run('start', before);
  };
}
