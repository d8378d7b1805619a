/**
 * The probe handler port (upstream prober.go's ProberAction and runProbe's
 * target): one probe run against one container, saying Success, Failure or
 * Unknown with an output.
 *
 * `Unknown` means the probe could not be run at all (a port name that is not
 * the container's, the runtime unreachable, no pod IP yet): upstream returns
 * an error there, retries it and throws the result away. A probe that ran
 * and did not pass is a `Failure` with the reason in the output, timeouts
 * included, as upstream converts transport errors into failures.
 */
import type { Container, Pod, Probe } from '@app/contracts';
import { formatPod, type ProbeOutcome, type ProbeResult } from '@app/probe';

export type ProbeHandlerResult = ProbeResult;
export type { ProbeOutcome };

/** What a probe is run against. */
export interface ProbeTarget {
  pod: Pod;
  container: Container;
  /** The runtime's container ID, without the `containerd://` prefix. */
  containerId: string;
  /** status.podIP (the host IP for a hostNetwork pod); '' when the pod has none yet. */
  podIP: string;
  hostIP: string;
}

/** Runs one probe (upstream ProberAction.Run). Never rejects. */
export abstract class ProbeHandler {
  abstract run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome>;
}

/** The host a probe without its own host goes to: the pod IP (the host IP for a hostNetwork pod). */
export function probeHost(target: ProbeTarget): string {
  const host = target.podIP || (target.pod.spec.hostNetwork ? target.hostIP : '');
  if (!host) throw new Error(`pod ${formatPod(target.pod)} has no IP to probe yet`);
  return host;
}
