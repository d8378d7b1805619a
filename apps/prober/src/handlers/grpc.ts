/**
 * The grpc probe (pkg/probe/grpc): grpc.health.v1.Health/Check on the pod IP,
 * with the client ts-proto generates from proto/grpc/health/v1/health.proto
 * (apps/prober/src/generated/, `npm run gen`). Only probes have it.
 */
import * as grpc from '@grpc/grpc-js';
import type { Clock } from '@app/clock';
import type { Probe } from '@app/contracts';
import { grpcCodeName } from '@app/cri/client';
import { joinHostPort } from '@app/kube';
import { KUBE_PROBE_USER_AGENT, errorText, failureOutcome, unknownOutcome, type ProbeOutcome } from '@app/probe';
import { HealthClient } from '../generated/grpc/health/v1/health.js';
import { ProbeHandler, probeHost, type ProbeTarget } from './probe-handler.js';

const unknown = unknownOutcome;
const failure = failureOutcome;

export interface GrpcProbeOptions {
  userAgent?: string;
}

/**
 * Connects to the pod IP and port (plaintext, as upstream: no credentials)
 * and calls Health/Check with the probe's service. SERVING is a success;
 * any other status, a connection that is not ready within the timeout or a
 * failed call is a failure, as grpc_health_probe does.
 */
export class GrpcProbeHandler extends ProbeHandler {
  private readonly userAgent: string;

  constructor(
    private readonly clock: Clock,
    options: GrpcProbeOptions = {},
  ) {
    super();
    this.userAgent = options.userAgent ?? KUBE_PROBE_USER_AGENT;
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    const action = probe.grpc;
    if (!action) return unknown('probe has no grpc action');
    let addr: string;
    try {
      if (!Number.isInteger(action.port) || action.port <= 0 || action.port >= 65536) throw new Error(`invalid port number: ${action.port}`);
      addr = joinHostPort(probeHost(target), action.port);
    } catch (err) {
      return unknown(errorText(err));
    }
    const service = action.service ?? '';
    const within = formatSeconds(timeoutMs);
    const client = new HealthClient(addr, grpc.credentials.createInsecure(), {
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
        call = client.check({ service }, new grpc.Metadata(), {}, (callErr, response) => {
          if (callErr) {
            finish(failure(grpcCallFailure(callErr, within)));
            return;
          }
          const status = response.status;
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
