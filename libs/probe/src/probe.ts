/**
 * What every action shares (pkg/probe/probe.go, util.go, dialer): the
 * result of one run, the port of a container, how an address is written,
 * and what Go's net package says when a dial fails.
 */
import type { Container, Pod } from '@app/contracts';

export type ProbeResult = 'Success' | 'Failure' | 'Unknown';

export interface ProbeOutcome {
  result: ProbeResult;
  output: string;
  /**
   * Success with a warning (probe.Warning upstream: an HTTP redirect to
   * another host was not followed); the kubelet records a ProbeWarning event.
   */
  warning?: boolean;
}

/** maxRespBodyLength and the exec prober's maxReadLength: 10 KiB of output are kept. */
export const MAX_PROBE_OUTPUT_BYTES = 10 * 1024;
/** The kubelet version whose major.minor goes in the User-Agent (`kube-probe/1.34`). */
export const KUBE_VERSION = '1.34';

/** request.go userAgent: `kube-<purpose>/<major>.<minor>`; purpose is `probe` for probes, `lifecycle` for hooks. */
export function kubeUserAgent(purpose: 'probe' | 'lifecycle'): string {
  return `kube-${purpose}/${KUBE_VERSION}`;
}

export const KUBE_PROBE_USER_AGENT = kubeUserAgent('probe');
export const KUBE_LIFECYCLE_USER_AGENT = kubeUserAgent('lifecycle');

export const unknownOutcome = (output: string): ProbeOutcome => ({ result: 'Unknown', output });
export const failureOutcome = (output: string): ProbeOutcome => ({ result: 'Failure', output });

/**
 * probe.ResolveContainerPort: a number, or the name of one of the
 * container's ports, or a number written as a string; 1-65535.
 */
export function resolveContainerPort(port: number | string, container: Container): number {
  let n: number;
  if (typeof port === 'number') n = port;
  else {
    const named = container.ports?.find((p) => p.name === port);
    if (named) n = named.containerPort;
    else if (/^[+-]?\d+$/.test(port)) n = Number(port);
    else throw new Error(`port ${JSON.stringify(port)} is neither a port name of container ${JSON.stringify(container.name)} nor a number`);
  }
  if (Number.isInteger(n) && n > 0 && n < 65536) return n;
  throw new Error(`invalid port number: ${n}`);
}

/** What Go's net package says for a failed dial or read. */
export function dialErrorText(err: unknown, addr: string): string {
  const code = (err as { code?: string } | null)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${addr}: connect: no route to host`;
    case 'ENETUNREACH':
      return `dial tcp ${addr}: connect: network is unreachable`;
    case 'ETIMEDOUT':
      return `dial tcp ${addr}: i/o timeout`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${addr.replace(/:\d+$/, '')}: no such host`;
    case 'ECONNRESET':
      return 'read: connection reset by peer';
    default:
      return errorText(err);
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** format.Pod: name_namespace(uid). */
export function formatPod(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`;
}
