/**
 * The gateway's one handler: every CRI call, whether it came over NATS or
 * HTTP, is checked, given its deadline, sent on the one gRPC connection,
 * measured with the kubelet's runtime metrics, and answered with the result
 * or a CriError that keeps the gRPC code.
 */
import { Clock } from '@app/clock';
import { CriError, deadlineMs, methodInfo, type CriService, type CriTimeouts } from '@app/cri';
import { RuntimeConnection } from './runtime-connection.js';
import type { RequestSchema } from './request-schema.js';

/** The metrics the gateway records (kubelet's names; see RuntimeMetricsRecorder). */
export abstract class RuntimeMetrics {
  abstract observe(operation: string, seconds: number, failed: boolean): void;
  abstract observeRunPodSandbox(runtimeHandler: string, seconds: number, failed: boolean): void;
}

export class CriGateway {
  constructor(
    private readonly connection: RuntimeConnection,
    private readonly schema: Pick<RequestSchema, 'check'>,
    private readonly timeouts: CriTimeouts,
    private readonly metrics: RuntimeMetrics,
    private readonly clock: Clock,
  ) {}

  /** Serves one call; throws CriError. */
  async call(service: CriService, method: string, request: unknown): Promise<unknown> {
    const info = methodInfo(service, method);
    if (!info || !this.connection.hasMethod(service, method)) {
      throw new CriError('Unimplemented', `unknown ${service} method "${method}"`);
    }
    const problem = this.schema.check(service, method, request);
    if (problem) throw new CriError('InvalidArgument', `${method}: ${problem}`);

    const started = this.clock.now();
    let failed = false;
    try {
      return await this.connection.unary(service, method, request, deadlineMs(info, request, this.timeouts));
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
