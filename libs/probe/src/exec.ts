/**
 * The exec action (pkg/probe/exec, and RunInContainer through the CRI's
 * ExecSync), shared by probes and lifecycle hooks.
 */
import { isDeadlineExceeded } from '@app/cri/client';
import type { ContainerCommandRunner } from './ports.js';
import { MAX_PROBE_OUTPUT_BYTES, errorText, failureOutcome, unknownOutcome, type ProbeOutcome } from './probe.js';

/** What RunInContainer hands back: stdout then stderr, and the error if the command failed. */
export interface RunInContainerResult {
  output: Buffer;
  /** remote_runtime's CodeExitError (`command '<cmd>' exited with <code>: <stderr>`), or why it could not run. */
  error?: string;
  /** The command ran past its timeout (exec.TimeoutError). */
  timedOut?: boolean;
}

/** RunInContainer: ExecSync, the output as stdout then stderr, a non-zero exit as an error. */
export async function runInContainer(runner: ContainerCommandRunner, containerId: string, cmd: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<RunInContainerResult> {
  try {
    const r = await runner.execSync(containerId, cmd, timeoutSeconds, signal);
    const output = Buffer.concat([r.stdout, r.stderr]);
    if (r.exitCode === 0) return { output };
    return { output, error: `command '${cmd.join(' ')}' exited with ${r.exitCode}: ${r.stderr.toString('utf8')}` };
  } catch (err) {
    if (isDeadlineExceeded(err)) return { output: Buffer.alloc(0), error: `command ${JSON.stringify(cmd.join(' '))} timed out`, timedOut: true };
    return { output: Buffer.alloc(0), error: errorText(err) };
  }
}

/**
 * The exec prober: exit 0 is a Success, another exit a Failure, both with
 * the first 10 KiB of output; a timeout is a Failure (the remote runtime
 * turns DeadlineExceeded into exec.TimeoutError); a command that could not
 * be run is Unknown.
 */
export async function doExecProbe(runner: ContainerCommandRunner, containerId: string, cmd: string[], timeoutMs: number): Promise<ProbeOutcome> {
  try {
    const r = await runner.execSync(containerId, cmd, Math.max(1, Math.ceil(timeoutMs / 1000)));
    const output = Buffer.concat([r.stdout, r.stderr]).subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8');
    return { result: r.exitCode === 0 ? 'Success' : 'Failure', output };
  } catch (err) {
    if (isDeadlineExceeded(err)) return failureOutcome(`command ${JSON.stringify(cmd.join(' '))} timed out`);
    return unknownOutcome(errorText(err));
  }
}
