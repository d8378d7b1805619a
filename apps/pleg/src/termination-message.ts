/**
 * A terminated container's message, as the kubelet's GetPodStatus fills
 * it (pkg/kubelet/kuberuntime/kuberuntime_container.go
 * getPodContainerStatuses, getTerminationMessage,
 * readLastStringFromContainerLogs): the file the pod worker bind-mounted at
 * the container's terminationMessagePath (its host side found among the
 * container's mounts), at most 4 KiB from its end; with
 * FallbackToLogsOnError and a failure (exit code not 0, and the container
 * ran), the last 80 lines of its log, at most 2 KiB from their end, when
 * the file is missing or empty. The message is appended to the runtime's
 * own, after ": ". Why the PLEG reads them: docs/adr/0021.
 */
import type { ContainerStatus } from '@app/cri';
import { KubeletAnnotations } from '@app/kube';
import { ContainerFileReader } from './ports.js';

/** kubecontainer.MaxContainerTerminationMessageLength */
export const MAX_TERMINATION_MESSAGE_BYTES = 1024 * 4;
/** kubecontainer.MaxContainerTerminationMessageLogLength */
export const MAX_TERMINATION_MESSAGE_LOG_BYTES = 1024 * 2;
/** kubecontainer.MaxContainerTerminationMessageLogLines */
export const MAX_TERMINATION_MESSAGE_LOG_LINES = 80;
/** How much of a log's end is read to find its last lines: a line is seldom longer than this over 80. */
const LOG_TAIL_READ_BYTES = 256 * 1024;

/**
 * The messages of a CRI log's text (`<time> <stream> <P|F> <content>` per
 * line), as the log reader writes them: a full line ends in a newline, a
 * partial one is joined to the next of its stream. `lines` of them at
 * most, from the end. A first line cut by the read is dropped.
 */
export function lastLogLines(text: string, lines: number, cutAtStart: boolean): string {
  const raw = text.split('\n');
  if (cutAtStart) raw.shift();
  const out: string[] = [];
  const pending = new Map<string, string>();
  for (const line of raw) {
    const m = /^(\S+) (\S+) ([PF]) (.*)$/s.exec(line) ?? /^(\S+) (\S+) ([PF])$/.exec(line);
    if (!m) continue;
    const stream = m[2] ?? '';
    const content = (pending.get(stream) ?? '') + (m[4] ?? '');
    if (m[3] === 'P') {
      pending.set(stream, content);
      continue;
    }
    pending.delete(stream);
    out.push(`${content}\n`);
  }
  // A partial line the container never ended (`echo -n`) is a message without a newline.
  for (const content of pending.values()) out.push(content);
  return out.slice(-lines).join('');
}

/** The last `max` bytes of `s` in UTF-8 (circbuf's tail); a character cut at the start is dropped. */
function lastBytes(s: string, max: number): string {
  const b = Buffer.from(s, 'utf8');
  if (b.length <= max) return s;
  let start = b.length - max;
  while (start < b.length && ((b[start] ?? 0) & 0xc0) === 0x80) start++;
  return b.subarray(start).toString('utf8');
}

/** getTerminationMessage + readLastStringFromContainerLogs: what to append to an exited container's message. */
export async function terminationMessage(status: ContainerStatus, files: ContainerFileReader): Promise<string> {
  const path = status.annotations[KubeletAnnotations.terminationMessagePath] ?? '';
  const policy = status.annotations[KubeletAnnotations.terminationMessagePolicy] ?? '';
  // A container that could not even start has no logs to fall back to.
  const fallbackToLogs = policy === 'FallbackToLogsOnError' && status.exitCode !== 0 && status.reason !== 'ContainerCannotRun';
  let checkLogs = fallbackToLogs;
  let message = '';
  const mount = path ? status.mounts.find((m) => m.containerPath === path) : undefined;
  if (mount) {
    try {
      const data = await files.readTail(mount.hostPath, MAX_TERMINATION_MESSAGE_BYTES);
      if (data !== undefined) {
        message = data.text;
        checkLogs = fallbackToLogs && data.text.length === 0;
      }
    } catch (err) {
      return `Error on reading termination log ${mount.hostPath}: ${(err as Error).message}`;
    }
  }
  if (!checkLogs) return message;
  try {
    const log = await files.readTail(status.logPath, LOG_TAIL_READ_BYTES);
    if (log === undefined) return 'Error on reading termination message from logs: no such file or directory';
    return lastBytes(lastLogLines(log.text, MAX_TERMINATION_MESSAGE_LOG_LINES, log.truncated), MAX_TERMINATION_MESSAGE_LOG_BYTES);
  } catch (err) {
    return `Error on reading termination message from logs: ${(err as Error).message}`;
  }
}

/** getPodContainerStatuses: an exited container's status with its termination message appended to the runtime's. */
export async function withTerminationMessage(status: ContainerStatus, files: ContainerFileReader): Promise<ContainerStatus> {
  if (status.state !== 'CONTAINER_EXITED') return status;
  const extra = await terminationMessage(status, files);
  if (!extra) return status;
  return { ...status, message: status.message ? `${status.message}: ${extra}` : extra };
}
