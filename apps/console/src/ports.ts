/**
 * What the console reads besides the pods (ConsolePods, console-feed.ts)
 * and the trace records and NATS monitoring (console-views.ts): the narrow
 * ports of the pod pages. The adapters are in adapters/.
 */
import type { EventMessage } from '@app/contracts';

/** A pod's latest events, as the status manager keeps them. */
export abstract class PodEvents {
  abstract eventsOf(namespace: string, name: string): Promise<{ items: EventMessage[] }>;
}

/** A container's latest log lines, as the kubelet server serves them. */
export abstract class ContainerLogTail {
  /** The text of `/containerLogs/<namespace>/<pod>/<container>?tailLines=<lines>`, and its HTTP status. */
  abstract tail(namespace: string, pod: string, container: string, lines: number): Promise<{ status: number; text: string }>;
}
