/**
 * The termination order of sidecars (restartable init containers), end to
 * end on the real containerd (issue 28 item 1). Upstream v1.34 stops the
 * sidecars only once every main container has exited, in reverse order of
 * their declaration, each with what is left of the grace period
 * (kuberuntime_container.go killContainersWithSyncResult, killContainer;
 * kuberuntime_termination_order.go). A proxy or log-shipping sidecar must
 * outlive the app that drains through it.
 *
 * What a user would check: when each container got its SIGTERM and when it
 * exited. Every container appends that to one file on the host (a hostPath
 * volume), with the host's uptime: the order of the lines is the order of
 * the events, and the uptimes give the gaps.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const cs = (s: V1PodStatus, name: string): V1ContainerStatus | undefined => [...(s.containerStatuses ?? []), ...(s.initContainerStatuses ?? [])].find((c) => c.name === name);
const running = (s: V1PodStatus, name: string) => cs(s, name)?.state?.running !== undefined;

/**
 * A container that writes `<name> TERM <uptime>` to /host/<file> on SIGTERM,
 * drains for `drainSeconds`, writes `<name> EXIT <uptime>` and exits 0.
 */
function draining(name: string, file: string, drainSeconds: number, sidecar: boolean): string {
  const log = (what: string) => `read up rest < /proc/uptime; echo "${name} ${what} $up" >> /host/${file}`;
  const script = `trap '${log('TERM')}; sleep ${drainSeconds}; ${log('EXIT')}; exit 0' TERM; while true; do sleep 0.2; done`;
  return [
    `    - name: ${name}`,
    `      image: ${IMAGE}`,
    `      command: ["sh", "-c", ${JSON.stringify(script)}]`,
    ...(sidecar ? ['      restartPolicy: Always'] : []),
    '      volumeMounts:',
    '        - { name: host, mountPath: /host }',
    '',
  ].join('\n');
}

interface Line {
  name: string;
  what: 'TERM' | 'EXIT';
  at: number;
}

function readLines(path: string): Line[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [name = '', what = '', at = ''] = l.split(' ');
      return { name, what: what as Line['what'], at: Number(at) };
    });
}

describe('sidecars stop after the main containers, in reverse order (killContainersWithSyncResult, terminationOrdering)', { timeout: 300_000 }, () => {
  const stack = new NodeStack({ node: 'sidecar-order-e2e', services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'] });

  before(() => stack.start());
  after(() => stack.stop());

  it('a static pod removed: the main container drains for 2s, then side-b (declared last) gets SIGTERM, drains 1s, then side-a', async (t) => {
    const file = 'order.log';
    const path = join(stack.dir, file);
    stack.writeManifest(
      'order',
      [
        'apiVersion: v1',
        'kind: Pod',
        'metadata:',
        '  name: order',
        'spec:',
        '  hostNetwork: true',
        '  terminationGracePeriodSeconds: 30',
        '  initContainers:',
        draining('side-a', file, 0, true) + draining('side-b', file, 1, true) + '  containers:',
        draining('main', file, 2, false) + '  volumes:',
        '    - name: host',
        '      hostPath:',
        `        path: ${stack.dir}`,
        '',
      ].join('\n'),
    );
    await stack.waitForPod('order', 'all three running', (x) => running(x, 'main') && running(x, 'side-a') && running(x, 'side-b'), 60_000);
    const removedAt = Date.now();
    stack.removeManifest('order');

    // Ends once every container wrote its exit (the sidecars never get SIGKILLed: 30s of grace).
    const lines = await stack.waitFor('the three containers exited', () => {
      const got = readLines(path);
      return ['main', 'side-a', 'side-b'].every((n) => got.some((l) => l.name === n && l.what === 'EXIT')) ? got : undefined;
    }, 60_000);
    const at = (name: string, what: Line['what']) => lines.find((l) => l.name === name && l.what === what)?.at ?? NaN;
    const gapB = at('side-b', 'TERM') - at('main', 'EXIT');
    const gapA = at('side-a', 'TERM') - at('side-b', 'EXIT');
    t.diagnostic(`removed the manifest; containers reported: ${lines.map((l) => `${l.name} ${l.what} ${l.at.toFixed(2)}`).join(', ')}`);
    t.diagnostic(`side-b got SIGTERM ${gapB.toFixed(2)}s after main exited; side-a ${gapA.toFixed(2)}s after side-b exited; all exited ${((Date.now() - removedAt) / 1000).toFixed(1)}s after the manifest was removed`);

    assert.deepEqual(
      lines.map((l) => `${l.name} ${l.what}`),
      ['main TERM', 'main EXIT', 'side-b TERM', 'side-b EXIT', 'side-a TERM', 'side-a EXIT'],
      'the main container first, then the sidecars in reverse order of declaration, each only once the one before exited',
    );
    assert.ok(gapB >= 0 && gapA >= 0, `no sidecar got SIGTERM before the container it serves had exited (side-b ${gapB.toFixed(2)}s, side-a ${gapA.toFixed(2)}s)`);
    // Nothing of the pod is left running.
    await stack.waitFor('no container of the pod left running', async () => ((await stack.containers('order')).every((c) => c.state !== 'CONTAINER_RUNNING') ? true : undefined), 30_000);
  });
});
