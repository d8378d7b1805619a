/** The grpc probe (pkg/probe/grpc): grpc.health.v1.Health/Check on the pod IP. Only probes have it. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Clock } from '@app/clock';
import type { Probe } from '@app/contracts';
import { grpcCodeName } from '@app/cri';
import { joinHostPort } from '@app/kube';
import { KUBE_PROBE_USER_AGENT, errorText, failureOutcome, unknownOutcome, type ProbeOutcome } from '@app/probe';
import { ProbeHandler, probeHost, type ProbeTarget } from './probe-handler.js';

const unknown = unknownOutcome;
const failure = failureOutcome;

export interface GrpcProbeOptions {
  userAgent?: string;
  protoPath?: string;
}

interface HealthCheckResponse {
  status: string;
}
type HealthClient = grpc.Client & {
  Check(request: { service: string }, metadata: grpc.Metadata, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null, value?: HealthCheckResponse) => void): grpc.ClientUnaryCall;
};
type HealthClientConstructor = new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => HealthClient;

/** Where proto/grpc/health/v1/health.proto is: the first `proto/` directory walking up from this module. */
export function healthProtoPath(from: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    const candidate = join(dir, 'proto', 'grpc', 'health', 'v1', 'health.proto');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`proto/grpc/health/v1/health.proto not found above ${fileURLToPath(from)}`);
    dir = parent;
  }
}

/** Loads grpc.health.v1.Health from a proto file (shared by the handler and tests' servers). */
export function loadHealthService(protoPath: string = healthProtoPath()): { client: HealthClientConstructor; service: grpc.ServiceDefinition } {
  const definition = protoLoader.loadSync(protoPath, { keepCase: false, enums: String, defaults: true, longs: String });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as { grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } } };
  const Health = pkg.grpc.health.v1.Health;
  return { client: Health as unknown as HealthClientConstructor, service: Health.service };
}

/**
 * Connects to the pod IP and port (plaintext, as upstream: no credentials)
 * and calls Health/Check with the probe's service. SERVING is a success;
 * any other status, a connection that is not ready within the timeout or a
 * failed call is a failure, as grpc_health_probe does.
 */
export class GrpcProbeHandler extends ProbeHandler {
  private readonly userAgent: string;
  private readonly protoPath: string | undefined;
  private client?: HealthClientConstructor;

  constructor(
    private readonly clock: Clock,
    options: GrpcProbeOptions = {},
  ) {
    super();
    this.userAgent = options.userAgent ?? KUBE_PROBE_USER_AGENT;
    this.protoPath = options.protoPath;
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    const action = probe.grpc;
    if (!action) return unknown('probe has no grpc action');
    let addr: string;
    let Health: HealthClientConstructor;
    try {
      if (!Number.isInteger(action.port) || action.port <= 0 || action.port >= 65536) throw new Error(`invalid port number: ${action.port}`);
      addr = joinHostPort(probeHost(target), action.port);
      Health = this.client ??= loadHealthService(this.protoPath).client;
    } catch (err) {
      return unknown(errorText(err));
    }
    const service = action.service ?? '';
    const within = formatSeconds(timeoutMs);
    const client = new Health(addr, grpc.credentials.createInsecure(), {
      'grpc.primary_user_agent': this.userAgent,
      'grpc.enable_retries': 0,
      'grpc.enable_channelz': 0,
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
    });
    return new Promise<ProbeOutcome>((resolve) => {
      let settled = false;
      let connected = false;
      let call: grpc.ClientUnaryCall | undefined;
      const finish = (o: ProbeOutcome) => {
        if (settled) return;
        settled = true;
        timer.cancel();
        call?.cancel();
        client.close();
        resolve(o);
      };
      const timer = this.clock.setTimer(timeoutMs, () =>
        finish(
          connected
            ? failure(`timeout: health rpc did not complete within ${within}`)
            : failure(`timeout: failed to connect service ${JSON.stringify(addr)} within ${within}: context deadline exceeded`),
        ),
      );
      // WithBlock: wait for the connection (the timer bounds it), then the call.
      client.waitForReady(Infinity, (err) => {
        if (settled) return;
        if (err) {
          finish(failure(`error: failed to connect service at ${JSON.stringify(addr)}: ${err.message}`));
          return;
        }
        connected = true;
        call = client.Check({ service }, new grpc.Metadata(), {}, (callErr, response) => {
          if (callErr) {
            finish(failure(grpcCallFailure(callErr, within)));
            return;
          }
          const status = response?.status ?? 'UNKNOWN';
          finish(status === 'SERVING' ? { result: 'Success', output: 'service healthy' } : failure(`service unhealthy (responded with ${JSON.stringify(status)})`));
        });
      });
    });
  }
}

function grpcCallFailure(err: grpc.ServiceError, within: string): string {
  switch (err.code) {
    case grpc.status.UNIMPLEMENTED:
      return `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}`;
    case grpc.status.DEADLINE_EXCEEDED:
      return `timeout: health rpc did not complete within ${within}`;
    default:
      return `error: health rpc probe failed: rpc error: code = ${grpcCodeName(err.code)} desc = ${err.details}`;
  }
}

/** A timeout as Go prints a time.Duration of whole or fractional seconds (1s, 1.5s, 500ms). */
function formatSeconds(ms: number): string {
  return ms >= 1000 || ms === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
