/**
 * What the console reads besides the pods (ConsolePods, console-feed.ts)
 * and the trace records and NATS monitoring (console-views.ts): the narrow
 * ports of the pod pages, and the fleet page's (FleetReads). The adapters are in adapters/.
 */
import type { EventMessage, NodeConditionsMessage, PodList, ServiceInfo } from '@app/contracts';

/** A pod's latest events, as the status manager keeps them. */
export abstract class PodEvents {
  abstract eventsOf(namespace: string, name: string): Promise<{ items: EventMessage[] }>;
}

/** A container's latest log lines, as the kubelet server serves them. */
export abstract class ContainerLogTail {
  /** The text of `/containerLogs/<namespace>/<pod>/<container>?tailLines=<lines>`, and its HTTP status. */
  abstract tail(namespace: string, pod: string, container: string, lines: number): Promise<{ status: number; text: string }>;
}

/** One answer to a request-many on the hub: its body, and who sent it (Kubelet-Sender: `<service>@<node>#<instance>`). */
export interface FleetAnswer<T> {
  sender: string | undefined;
  body: T;
}

/**
 * What the fleet page reads from the hub, as the fleet reader (libs/nats
 * fleet.ts). NATS delivers a request to the subscriptions that match its
 * subject, and a subject published with `*` in it matches none of theirs:
 * so the nodes are the hub's leaf links (LEAFZ), and each node is asked by
 * name. Every read is a request-many, the answers that came back within the
 * adapter's bound; a node cut off from the hub is simply not among them.
 * Rejects when the hub cannot be asked at all.
 */
export abstract class FleetReads {
  /** The bound each read waits for answers (ms): a node slower than that is unreachable. */
  abstract readonly boundMs: number;
  /** The nodes whose leaf nodes are linked to the hub now (`$SYS.REQ.SERVER.PING.LEAFZ`), by name. */
  abstract linkedNodes(): Promise<string[]>;
  /** Every instance of the node's services that answered `kubelet.<node>.service.<service>.info`. */
  abstract serviceInfos(node: string): Promise<ServiceInfo[]>;
  /** Every status manager's PodList of the node (`kubelet.<node>.service.status-manager.pods`): a standby's too. */
  abstract podLists(node: string): Promise<FleetAnswer<PodList>[]>;
  /** Every node-status instance's NodeConditionsMessage (`kubelet.<node>.service.node-status.conditions`). */
  abstract nodeConditions(node: string): Promise<NodeConditionsMessage[]>;
}
