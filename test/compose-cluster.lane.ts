/**
 * The compose stack as a cluster node (part of the compose lane: deploy/compose/test.sh
 * runs this file after its own checks; not an npm test file, it needs the images
 * the lane builds). A real control plane (test/support/control-plane.ts: etcd and
 * kube-apiserver, the apiserver reaching kubelets with its client certificate),
 * the compose node joined to it as a user joins one (test/support/compose-node.ts:
 * NODE_KUBECONFIG and the kubelet server's client CA in NODE_KUBE_DIR, mounted
 * read-only; `bash deploy/compose/up.sh`), on NODE_IP 127.0.0.2, a loopback
 * address that is not 127.0.0.1, so that "the kubelet server and nothing else on
 * the node's address" can fail. What a user checks:
 *  - the Node registers, Ready, with InternalIP NODE_IP and the kubelet port;
 *  - an API pod bound to it runs (Running in the apiserver, its containers in containerd);
 *  - `kubectl logs`, `kubectl exec`, `kubectl attach`, `kubectl port-forward` reach it
 *    through the compose node's kubelet server;
 *  - every port the project's processes listen on is on 127.0.0.1 but the kubelet
 *    server's, on NODE_IP only.
 * Environment (deploy/compose/test.sh sets it): KS_COMPOSE_IMAGE_TAG, DOCKER_HOST,
 * KS_RUNTIME_ADDRESS (the containerd socket), KS_COMPOSE_RUNTIME_ROOT (its root),
 * KS_CONTROL_PLANE_BIN (etcd, kube-apiserver, kubectl).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Node, Pod, PodList } from '@app/contracts';
import { freePort } from '../deploy/local/stack.js';
import { ComposeNode, laneEnv, waitFor } from './support/compose-node.js';
import { controlPlaneBinaries, startControlPlane, type ControlPlane } from './support/control-plane.js';

const NODE = `ks-compose-node-${Math.random().toString(16).slice(2, 8)}`;
const NODE_IP = '127.0.0.2';
const NS = 'compose-node';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';



describe('compose as a cluster node: the Node, an API pod, kubectl logs and exec through its kubelet server', { timeout: 420_000 }, () => {
  let cp: ControlPlane;
  let node: ComposeNode;
  let kubectlBin: string;
  const t0 = Date.now();
  const took = () => `${((Date.now() - t0) / 1000).toFixed(0)} s`;

  const kubectl = (args: string[], input?: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(kubectlBin, ['--kubeconfig', cp.kubeconfig('admin'), '-n', NS, '--request-timeout=30s', ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      if (input !== undefined) child.stdin?.end(input);
    });

  before(async () => {
    kubectlBin = join(await controlPlaneBinaries(), 'kubectl');
    if (!existsSync(kubectlBin)) throw new Error(`no kubectl in ${kubectlBin} (bash deploy/control-plane/build.sh kubectl)`);
    cp = await startControlPlane({ nodes: [NODE], kubeletClient: true });
    node = new ComposeNode({
      project: 'ks-compose-cluster',
      node: NODE,
      imageTag: process.env['KS_COMPOSE_IMAGE_TAG'] ?? 'ks-compose-test',
      runtimeSocket: laneEnv('KS_RUNTIME_ADDRESS'),
      runtimeRoot: laneEnv('KS_COMPOSE_RUNTIME_ROOT'),
      nodeIp: NODE_IP,
      cluster: { server: cp.url, caFile: cp.caFile, token: cp.token(NODE), clientCaFile: cp.caFile },
    });
    await node.start();
    process.stdout.write(`# compose node ${NODE} healthy after ${took()}\n`);
    await cp.createNamespace(NS);
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: NS },
      spec: {
        nodeName: NODE,
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'app',
            image: IMAGE,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', 'echo started in the pod; mkdir -p /www && echo hello through port-forward > /www/index.html && exec httpd -f -p 8080 -h /www'],
          },
          { name: 'ticker', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done'] },
        ],
      },
    };
    await cp.admin.request(`/api/v1/namespaces/${NS}/pods`, { method: 'POST', body: pod });
  });

  after(async () => {
    try {
      if (cp && node) {
        await cp.admin.request(`/api/v1/namespaces/${NS}/pods/web`, { method: 'DELETE' }).catch(() => undefined);
        await waitFor('the pod gone from the apiserver', async () => ((await cp.admin.request<PodList>(`/api/v1/namespaces/${NS}/pods`)).items.length === 0 ? true : undefined), 90_000).catch(() => undefined);
      }
    } finally {
      try {
        await node?.stop();
      } finally {
        await cp?.stop();
      }
    }
  });

  it('the Node registers, Ready, with InternalIP NODE_IP and the kubelet server\'s port', async () => {
    const n = await waitFor('the Node Ready', async () => {
      const got = await cp.admin.request<Node>(`/api/v1/nodes/${NODE}`);
      return got.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? got : undefined;
    }, 120_000);
    assert.deepEqual(n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address, NODE_IP);
    assert.equal(n.status?.daemonEndpoints?.kubeletEndpoint?.Port, node.kubeletPort);
    process.stdout.write(`# Node Ready after ${took()}\n`);
  });

  it('an API pod bound to it runs: Running in the apiserver, both containers running', async () => {
    const p = await waitFor('web Running in the apiserver', async () => {
      const got = await cp.admin.request<Pod>(`/api/v1/namespaces/${NS}/pods/web`);
      return got.status?.phase === 'Running' && got.status.containerStatuses?.length === 2 && got.status.containerStatuses.every((c) => c.state?.running) ? got : undefined;
    }, 120_000);
    assert.equal(p.status?.hostIP, NODE_IP);
    // The node's own view on its read port (127.0.0.1) says the same.
    const local = (await (await fetch(`http://127.0.0.1:${node.readPort}/pods`)).json()) as PodList;
    assert.deepEqual(local.items.filter((x) => x.metadata?.namespace === NS).map((x) => [x.metadata?.name, x.status?.phase]), [['web', 'Running']]);
    process.stdout.write(`# the API pod Running after ${took()}\n`);
  });

  it('kubectl logs prints what the container wrote', async () => {
    const r = await kubectl(['logs', 'web', '-c', 'app']);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, 'started in the pod\n', '']);
  });

  it('kubectl exec -- echo hi, and exec -i with stdin and an exit code', async () => {
    const r = await kubectl(['exec', 'web', '-c', 'app', '--', 'echo', 'hi']);
    assert.deepEqual([r.code, r.stdout], [0, 'hi\n'], r.stderr);
    const i = await kubectl(['exec', '-i', 'web', '-c', 'app', '--', 'sh', '-c', 'tr a-z A-Z; exit 3'], 'from stdin\n');
    assert.deepEqual([i.stdout, i.code], ['FROM STDIN\n', 3], i.stderr);
  });

  it('kubectl attach streams what the running container writes', async () => {
    const child = spawn(kubectlBin, ['--kubeconfig', cp.kubeconfig('admin'), '-n', NS, 'attach', 'web', '-c', 'ticker'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const ticks = await waitFor('two ticks through kubectl attach', async () => {
        const seen = [...out.matchAll(/^tick (\d+)$/gm)].map((m) => Number(m[1]));
        return Promise.resolve(seen.length >= 2 ? seen : undefined);
      }, 30_000);
      assert.equal((ticks[1] ?? 0) - (ticks[0] ?? 0), 1);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('kubectl port-forward: the httpd in the pod answers through the forwarded port', async () => {
    const local = await freePort();
    const child = spawn(kubectlBin, ['--kubeconfig', cp.kubeconfig('admin'), '-n', NS, 'port-forward', 'pod/web', `${local}:8080`], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const body = await waitFor('the page through the forwarded port', async () => {
        const res = await fetch(`http://127.0.0.1:${local}/index.html`, { signal: AbortSignal.timeout(5000) });
        return res.status === 200 ? res.text() : undefined;
      }, 30_000);
      assert.equal(body, 'hello through port-forward\n');
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('every port of the node is on 127.0.0.1 but the kubelet server\'s, on NODE_IP only', async () => {
    const listeners = await node.listeners();
    const off = listeners.filter((l) => l.address !== '127.0.0.1').map((l) => `${l.service} ${l.address}:${l.port}`);
    assert.deepEqual(off, [`status-manager ${NODE_IP}:${node.kubeletPort}`]);
    // nats, the six services and both pod-worker replicas each listen on loopback.
    assert.deepEqual([...new Set(listeners.filter((l) => l.address === '127.0.0.1').map((l) => l.service))].sort(), ['config-source', 'cri-gateway', 'nats', 'pleg', 'pod-worker', 'prober', 'status-manager', 'sync-loop']);
    process.stdout.write(`# listeners: ${listeners.map((l) => `${l.service}@${l.address}:${l.port}`).join(' ')}\n`);
  });
});
