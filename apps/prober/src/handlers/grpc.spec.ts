import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { SystemClock } from '@app/clock';
import { FakeClock } from '@app/clock/testing';
import type { Probe } from '@app/contracts';
import { closedPort, expectOutcome, probeTarget as target, type ProbeOutcome } from '../testing.js';
import { HealthService, type HealthCheckResponse_ServingStatus, type HealthServer } from '../generated/grpc/health/v1/health.js';
import { GrpcProbeHandler } from './grpc.js';

describe('GrpcProbeHandler (loopback grpc.health.v1 server)', () => {
  const statuses: Record<string, HealthCheckResponse_ServingStatus> = { '': 'SERVING', down: 'NOT_SERVING', unknown: 'SERVICE_UNKNOWN' };
  const userAgents: string[] = [];
  let server: grpc.Server;
  let bare: grpc.Server;
  let port = 0;
  let barePort = 0;

  const bind = (s: grpc.Server) =>
    new Promise<number>((resolve, reject) => s.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));

  before(async () => {
    server = new grpc.Server();
    const check: HealthServer['check'] = (call, callback) => {
      userAgents.push(String(call.metadata.get('user-agent')[0] ?? ''));
      const status = statuses[call.request.service];
      if (status === undefined) callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
      else callback(null, { status });
    };
    server.addService(HealthService, { check }); // Watch and List: Unimplemented
    port = await bind(server);
    bare = new grpc.Server(); // implements nothing: Unimplemented
    barePort = await bind(bare);
  });
  after(() => {
    server.forceShutdown();
    bare.forceShutdown();
  });

  const run = (grpcAction: NonNullable<Probe['grpc']>, clock = new SystemClock()) => new GrpcProbeHandler(clock).run({ grpc: grpcAction }, target(), 5000);

  const cases: { name: string; action: () => NonNullable<Probe['grpc']>; want: { result: ProbeOutcome['result']; output: string | RegExp } }[] = [
    { name: 'SERVING is a success', action: () => ({ port, service: '' }), want: { result: 'Success', output: 'service healthy' } },
    { name: 'no service means the server overall', action: () => ({ port }), want: { result: 'Success', output: 'service healthy' } },
    { name: 'NOT_SERVING is a failure', action: () => ({ port, service: 'down' }), want: { result: 'Failure', output: 'service unhealthy (responded with "NOT_SERVING")' } },
    { name: 'SERVICE_UNKNOWN is a failure', action: () => ({ port, service: 'unknown' }), want: { result: 'Failure', output: 'service unhealthy (responded with "SERVICE_UNKNOWN")' } },
    { name: 'an error from the server is a failure', action: () => ({ port, service: 'nope' }), want: { result: 'Failure', output: 'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service' } },
    {
      name: 'a server without the health service is a failure',
      action: () => ({ port: barePort }),
      want: { result: 'Failure', output: /^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): / },
    },
  ];
  for (const tc of cases) it(tc.name, async () => expectOutcome(await run(tc.action()), tc.want));

  it('identifies itself as kube-probe', async () => {
    await run({ port });
    assert.match(userAgents.at(-1) ?? '', /^kube-probe\/\d+\.\d+ /);
  });

  it('nothing listening: a failure once the timeout passes (fake clock)', async () => {
    const clock = new FakeClock();
    const closed = await closedPort();
    const pending = new GrpcProbeHandler(clock).run({ grpc: { port: closed } }, target(), 1000);
    await clock.step(1000);
    expectOutcome(await pending, { result: 'Failure', output: `timeout: failed to connect service "127.0.0.1:${closed}" within 1s: context deadline exceeded` });
  });
});
