/**
 * The gateway's one handler: every CRI call, whether it came over NATS or
 * HTTP, is checked against the generated CRI messages (libs/cri's codec:
 * unknown fields and wrong types are errors that name the field), given its
 * deadline, sent on the one gRPC connection, measured with the kubelet's
 * runtime metrics, and answered with the result or a CriError that keeps the
 * gRPC code.
 *
 * The deadline is the caller's when it sends one (the CRI_TIMEOUT_HEADER of a
 * NatsCriClient call: the kubelet's own request and pull timeouts travel with
 * the call, as a Go context's deadline does in grpc-timeout); the gateway's
 * own timeouts only serve callers that send none (curl over HTTP).
 *
 * Calls that make sandboxes and containers wait for one of a few
 * slots first (runtime-change-queue.ts): the node's bound on them.
 */
import { Clock } from '@app/clock';
import { CriError, checkRequest, deadlineMs, decodeRequest, encodeResponse, methodInfo, type CriService, type CriTimeouts } from '@app/cri';
import { RuntimeConnection, RuntimeMetrics } from './ports.js';
import type { RuntimeChangeQueue } from './runtime-change-queue.js';


export class CriGateway {
  /** @param timeouts the deadlines of calls whose caller sent none. */
  constructor(
    private readonly connection: RuntimeConnection,
    private readonly timeouts: CriTimeouts,
    private readonly metrics: RuntimeMetrics,
    private readonly clock: Clock,
    /** The bound on runtime changes in flight (none when not given). */
    private readonly changeQueue?: RuntimeChangeQueue,
  ) {}

  /**
   * Serves one call; throws CriError.
   * @param request the request as JSON (parsed).
   * @param callerTimeoutMs the caller's deadline, in ms from now, when it sent one.
   * @returns the reply as JSON (bytes as base64 text).
   */
  async call(service: CriService, method: string, request: unknown, callerTimeoutMs?: number): Promise<unknown> {
    const info = methodInfo(service, method);
    if (!info || !this.connection.hasMethod(service, method)) {
      throw new CriError('Unimplemented', `unknown ${service} method "${method}"`);
    }
    const problem = checkRequest(service, method, request);
    if (problem) throw new CriError('InvalidArgument', `${method}: ${problem}`);
    const message = decodeRequest(service, method, request);
    const deadline = callerTimeoutMs ?? deadlineMs(info, message, this.timeouts);

    const started = this.clock.now();
    let failed = false;
    try {
      const send = (ms: number) => this.connection.unary(service, method, message, ms);
      return encodeResponse(service, method, await (this.changeQueue ? this.changeQueue.run(method, deadline, send) : send(deadline)));
    } catch (err) {
      failed = true;
      throw err instanceof CriError ? err : new CriError('Unknown', (err as Error).message);
    } finally {
      const seconds = (this.clock.now() - started) / 1000;
      this.metrics.observe(info.operation, seconds, failed);
      if (method === 'RunPodSandbox') {
        const handler = (request as { runtimeHandler?: unknown }).runtimeHandler;
        this.metrics.observeRunPodSandbox(typeof handler === 'string' ? handler : '', seconds, failed);
      }
    }
  }
}
