/**
 * Probes on the real stack: an exec liveness probe that starts failing
 * restarts its container; an httpGet readiness probe on busybox httpd flips
 * Ready when the served file is removed and put back; a startup probe holds
 * liveness off; tcpSocket and grpc probes (against a grpc.health.v1 server
 * the test runs on loopback).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Pod, PodStatus } from '@app/contracts';
import { HealthService, type HealthCheckResponse_ServingStatus, type HealthServer } from '../apps/prober/src/generated/grpc/health/v1/health.js';
import { freePort } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const ready = (s: PodStatus) => s.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

describe('probes on the real stack', { timeout: 300_000 }, () => {
  const stack = new NodeStack({
    node: 'pr-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'prober', 'pod-worker', 'config-source'],
    env: { 'pod-worker': { CRASHLOOP_BACKOFF_INITIAL: '1s', SYNC_FREQUENCY: '10s', POD_SYNC_BACKOFF: '2s' } },
  });
  let api = '';
  const www = () => join(stack.dir, 'www');
  let grpcServer: grpc.Server | undefined;
  let grpcPort = 0;
  const serving = new Map<string, HealthCheckResponse_ServingStatus>([['', 'SERVING']]);

  /** The pod as the status manager serves it (readiness merged in). */
  async function apiPod(name: string): Promise<Pod | undefined> {
    const res = await fetch(`${api}/pods/default/${stack.podName(name)}`);
    return res.status === 200 ? ((await res.json()) as Pod) : undefined;
  }
  const waitApi = (name: string, what: string, pred: (s: PodStatus) => boolean, timeoutMs = 30_000) =>
    stack.waitFor(`${name} ${what}`, async () => {
      const p = await apiPod(name);
      return p?.status && pred(p.status) ? p.status : undefined;
    }, timeoutMs);

  before(async () => {
    await stack.start();
    api = `http://127.0.0.1:${[...stack.procs.entries()].find(([k]) => k.startsWith('status-manager'))?.[1].port ?? 0}`;
    mkdirSync(www(), { recursive: true });
    writeFileSync(join(www(), 'index.html'), 'ok\n');
    const check: HealthServer['check'] = (call, cb) => cb(null, { status: serving.get(call.request.service) ?? 'SERVICE_UNKNOWN' });
    grpcServer = new grpc.Server();
    grpcServer.addService(HealthService, { check });
    grpcPort = await new Promise<number>((res, rej) => grpcServer?.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? rej(err) : res(port))));
  });
  after(async () => {
    grpcServer?.forceShutdown();
    await stack.stop();
  });

  it('an exec liveness probe that starts failing restarts the container and counts a restart', async () => {
    stack.writeManifest(
      'liveness',
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: liveness\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "touch /tmp/healthy; sleep 4; rm /tmp/healthy; sleep 3600"]\n      livenessProbe:\n        exec:\n          command: ["cat", "/tmp/healthy"]\n        periodSeconds: 1\n        failureThreshold: 2\n`,
    );
    const s = await waitApi('liveness', 'restarted', (x) => (x.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 60_000);
    assert.equal(s.containerStatuses?.[0]?.lastState?.terminated !== undefined, true);
    const unhealthy = stack.eventsOf('liveness').filter((e) => e.reason === 'Unhealthy');
    assert.ok(unhealthy.some((e) => e.message.startsWith('Liveness probe failed:')), unhealthy.map((e) => e.message).join('\n'));
    assert.ok(stack.eventsOf('liveness').some((e) => e.reason === 'Killing' && /failed liveness probe, will be restarted/.test(e.message)));
  });

  it('an httpGet readiness probe on busybox httpd flips Ready when the file is removed and put back', async () => {
    const port = await freePort();
    stack.writeManifest(
      'web',
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: httpd\n      image: ${IMAGE}\n      command: ["httpd", "-f", "-p", "127.0.0.1:${port}", "-h", "/www"]\n      readinessProbe:\n        httpGet:\n          host: 127.0.0.1\n          path: /index.html\n          port: ${port}\n        periodSeconds: 1\n      volumeMounts:\n        - { name: www, mountPath: /www }\n  volumes:\n    - name: www\n      hostPath:\n        path: ${www()}\n`,
    );
    await waitApi('web', 'Ready', ready);
    rmSync(join(www(), 'index.html'));
    let t0 = Date.now();
    await waitApi('web', 'not Ready', (x) => !ready(x), 15_000);
    const down = Date.now() - t0;
    writeFileSync(join(www(), 'index.html'), 'ok again\n');
    t0 = Date.now();
    await waitApi('web', 'Ready again', ready, 15_000);
    const up = Date.now() - t0;
    // One period is 1s; allow for the probe in flight and the status hop.
    assert.ok(down < 4000 && up < 4000, `Ready flipped after ${down}ms and ${up}ms`);
  });

  it('a startup probe holds liveness off until it succeeds', async () => {
    stack.writeManifest(
      'startup',
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: startup\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "sleep 6; touch /tmp/started; sleep 3600"]\n      startupProbe:\n        exec:\n          command: ["test", "-f", "/tmp/started"]\n        periodSeconds: 1\n        failureThreshold: 60\n      livenessProbe:\n        exec:\n          command: ["false"]\n        periodSeconds: 1\n        failureThreshold: 1\n`,
    );
    const early = await waitApi('startup', 'running, not started', (x) => x.containerStatuses?.[0]?.state?.running !== undefined && x.containerStatuses[0].started === false);
    assert.equal(early.containerStatuses?.[0]?.restartCount, 0);
    await new Promise((r) => setTimeout(r, 3000)); // liveness would have killed it three times over by now
    const held = await apiPod('startup');
    assert.equal(held?.status?.containerStatuses?.[0]?.restartCount, 0, 'no restart while the startup probe has not succeeded');
    // Once started, the always-failing liveness probe restarts it.
    await waitApi('startup', 'restarted after starting', (x) => (x.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 60_000);
  });

  it('a tcpSocket probe: Ready on an open port, not Ready on a closed one', async () => {
    const open = await freePort();
    const closed = await freePort();
    const spec = (name: string, port: number, command: string) =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ${command}\n      readinessProbe:\n        tcpSocket:\n          host: 127.0.0.1\n          port: ${port}\n        periodSeconds: 1\n`;
    stack.writeManifest('tcpopen', spec('tcpopen', open, `["httpd", "-f", "-p", "127.0.0.1:${open}"]`));
    stack.writeManifest('tcpclosed', spec('tcpclosed', closed, '["sleep", "3600"]'));
    await waitApi('tcpopen', 'Ready', ready);
    const s = await waitApi('tcpclosed', 'running', (x) => x.containerStatuses?.[0]?.state?.running !== undefined);
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(ready((await apiPod('tcpclosed'))?.status ?? s), false);
  });

  it('a grpc probe against a health server on loopback', async () => {
    stack.writeManifest(
      'grpc',
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: grpc\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n      readinessProbe:\n        grpc:\n          port: ${grpcPort}\n        periodSeconds: 1\n`,
    );
    await waitApi('grpc', 'Ready', ready);
    serving.set('', 'NOT_SERVING');
    await waitApi('grpc', 'not Ready when NOT_SERVING', (x) => !ready(x), 15_000);
    serving.set('', 'SERVING');
    await waitApi('grpc', 'Ready again', ready, 15_000);
  });

  it('the prober exports prober_probe_total and prober_probe_duration_seconds', async () => {
    const port = [...stack.procs.entries()].find(([k]) => k.startsWith('prober'))?.[1].port ?? 0;
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(text, /prober_probe_total\{[^}]*probe_type="Readiness"[^}]*result="successful"[^}]*\} [1-9]/);
    assert.match(text, /prober_probe_total\{[^}]*probe_type="Liveness"[^}]*result="failed"[^}]*\} [1-9]/);
    assert.match(text, /prober_probe_duration_seconds_count\{[^}]*\} [1-9]/);
  });
});
