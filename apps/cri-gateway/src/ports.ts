/**
 * The cri-gateway's ports: what its logic (CriGateway, the event relay, the
 * runtime status poller) needs from the outside, each with its adapter in
 * adapters/.
 */
import type { ContainerEventResponse, CriService } from '@app/cri';

export interface EventStream {
  /** Settles when the stream ends: resolves on a clean end, rejects with a CriError. */
  readonly done: Promise<void>;
  cancel(): void;
}

/** The one connection to the CRI socket (adapters/grpc-runtime-connection.ts). */
export abstract class RuntimeConnection {
  /**
   * One unary call with a deadline: `request` is the generated request message
   * (libs/cri decodeRequest), the answer the generated response message;
   * rejects with CriError (gRPC code kept).
   */
  abstract unary(service: CriService, method: string, request: unknown, deadlineMs: number): Promise<unknown>;
  /** RuntimeService.GetContainerEvents, a server stream. */
  abstract containerEvents(onEvent: (event: ContainerEventResponse) => void): EventStream;
  /** Whether the service has this unary method. */
  abstract hasMethod(service: CriService, method: string): boolean;
  abstract close(): void;
}

/** The metrics the gateway records (kubelet's names; see RuntimeMetricsRecorder). */
export abstract class RuntimeMetrics {
  abstract observe(operation: string, seconds: number, failed: boolean): void;
  abstract observeRunPodSandbox(runtimeHandler: string, seconds: number, failed: boolean): void;
}
