/**
 * The kubelet API server in a real cluster: the real control plane
 * (test/support/control-plane.ts), its apiserver reaching the node's kubelet
 * port with its client certificate (`--kubelet-client-certificate`, the
 * kubelet server's client CA), and the stack on the real containerd, with a
 * pod bound to the node. What a user checks, with kubectl as admin:
 *  - `kubectl logs` prints what the container wrote;
 *  - `kubectl exec -- echo hi` prints hi; `kubectl exec -i` feeds stdin
 *    (both SPDY from the apiserver to the kubelet, proxied to containerd's
 *    streaming server);
 *  - an exec over a websocket through the apiserver (what the upstream e2e
 *    "should support remote command execution over websockets" does);
 *  - `kubectl attach` streams a running container's output;
 *  - `kubectl port-forward` to the busybox httpd in the pod, fetched
 *    through the forwarded local port;
 *  - the kubelet port itself: 401 without credentials, 403 for a user
 *    without RBAC to nodes/proxy, 200 on /pods for admin's token
 *    (TokenReview, SubjectAccessReview), `/run` through ExecSync; the Node
 *    advertises the port.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import type { ApiServer } from '@app/apiserver';
import type { Node, Pod, PodList } from '@app/contracts';
import { REPO_ROOT, freePort } from '../deploy/local/stack.js';
import { controlPlaneBinaries, startControlPlane, type ControlPlane } from './support/control-plane.js';
import { NodeStack } from './support/node-stack.js';

const NODE = 'node-kubelet-api';
const NS = 'kubelet-api';
const IMAGE = 'localhost/kubelet-split/busybox:1.35';

describe('the kubelet API server: kubectl logs, exec and port-forward through the apiserver', { timeout: 240_000 }, () => {
  let cp: ControlPlane;
  let admin: ApiServer;
  let stack: NodeStack;
  let kubectlBin: string;
  let kubeletPort: number;
  // What /logs/ serves (SYSTEM_LOG_DIR, the kubelet's /var/log): a directory of the test's own.
  const systemLogs = mkdtempSync(join(tmpdir(), 'ks-e2e-var-log-'));

  const kubectl = (args: string[], input?: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(kubectlBin, ['--kubeconfig', cp.kubeconfig('admin'), '-n', NS, '--request-timeout=30s', ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      if (input !== undefined) child.stdin?.end(input);
    });

  /** A request straight to the kubelet port (its self-signed certificate not checked, as the apiserver does not). */
  const kubelet = (path: string, token?: string, method = 'GET') =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: kubeletPort, path, method, rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

  before(async () => {
    writeFileSync(join(systemLogs, 'syslog'), 'Dec  2 00:00:00 node kernel: booted\n');
    const bin = await controlPlaneBinaries();
    kubectlBin = join(bin, 'kubectl');
    if (!existsSync(kubectlBin)) kubectlBin = join(execFileSync('bash', [join(REPO_ROOT, 'deploy', 'control-plane', 'build.sh'), 'kubectl'], { encoding: 'utf8' }).trim().split('\n').pop() ?? '', 'kubectl');
    cp = await startControlPlane({ nodes: [NODE], users: ['nobody'], kubeletClient: true });
    admin = cp.admin;
    stack = new NodeStack({
      node: NODE,
      services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
      kubeconfig: cp.kubeconfig(NODE),
      // The stack gives the kubelet API server a port of its own (stack.kubeletPort) and its cert dir (<stack.dir>/pki).
      env: { 'status-manager': { KUBELET_CLIENT_CA_FILE: cp.caFile, SYSTEM_LOG_DIR: systemLogs } },
    });
    await stack.start();
    kubeletPort = stack.kubeletPort;
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
    await admin.request(`/api/v1/namespaces/${NS}/pods`, { method: 'POST', body: pod });
    await stack.waitFor('web Running in the apiserver', async () => {
      const p = await admin.request<Pod>(`/api/v1/namespaces/${NS}/pods/web`);
      return p.status?.containerStatuses?.length === 2 && p.status.containerStatuses.every((c) => c.state?.running) ? p : undefined;
    }, 90_000);
  });

  after(async () => {
    try {
      if (admin) {
        await admin.request(`/api/v1/namespaces/${NS}/pods/web`, { method: 'DELETE' }).catch(() => undefined);
        await stack.waitFor('the pod gone from the apiserver', async () => ((await admin.request<PodList>(`/api/v1/namespaces/${NS}/pods`)).items.length === 0 ? true : undefined), 60_000).catch(() => undefined);
      }
    } finally {
      try {
        await stack?.stop();
      } finally {
        await cp?.stop();
        rmSync(systemLogs, { recursive: true, force: true });
      }
    }
  });

  it('the Node advertises the kubelet port (daemonEndpoints.kubeletEndpoint.Port)', async () => {
    const node = await admin.request<Node>(`/api/v1/nodes/${NODE}`);
    assert.equal(node.status?.daemonEndpoints?.kubeletEndpoint?.Port, kubeletPort);
  });

  it('kubectl logs prints what the container wrote', async () => {
    const r = await kubectl(['logs', 'web', '-c', 'app']);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, 'started in the pod\n', '']);
  });

  it('kubectl exec -- echo hi', async () => {
    const r = await kubectl(['exec', 'web', '-c', 'app', '--', 'echo', 'hi']);
    assert.deepEqual([r.code, r.stdout], [0, 'hi\n'], r.stderr);
  });

  it('kubectl exec -i feeds stdin to the command, and its exit code comes back', async () => {
    const r = await kubectl(['exec', '-i', 'web', '-c', 'app', '--', 'sh', '-c', 'tr a-z A-Z; exit 3'], 'from stdin\n');
    assert.deepEqual([r.stdout, r.code], ['FROM STDIN\n', 3], r.stderr);
  });

  it('an exec over a websocket through the apiserver (channel v4): the stdout channel carries the output', async () => {
    const out = await websocketExec(cp, `/api/v1/namespaces/${NS}/pods/web/exec?container=app&command=echo&command=over-websocket&stdout=1&stderr=1`);
    assert.equal(out.stdout, 'over-websocket\n');
    assert.match(out.status, /"status":"Success"/);
  });

  it('the same with the plain channel.k8s.io protocol, as upstream\'s "should support remote command execution over websockets" opens it', async () => {
    const out = await websocketExec(cp, `/api/v1/namespaces/${NS}/pods/web/exec?container=app&command=echo&command=remote%20execution%20test&stdout=1&stderr=1`, 'channel.k8s.io');
    assert.equal(out.stdout, 'remote execution test\n');
  });

  it('kubectl attach streams what the running container writes from now on', async () => {
    const child = spawn(kubectlBin, ['--kubeconfig', cp.kubeconfig('admin'), '-n', NS, 'attach', 'web', '-c', 'ticker'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      // Two new ticks through the attach: the stream is live, not the log replayed.
      const ticks = await stack.waitFor('two ticks through kubectl attach', () => {
        const seen = [...out.matchAll(/^tick (\d+)$/gm)].map((m) => Number(m[1]));
        return seen.length >= 2 ? seen : undefined;
      }, 30_000);
      assert.equal((ticks[1] ?? 0) - (ticks[0] ?? 0), 1);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('kubectl port-forward: the httpd in the pod answers through the forwarded local port', async () => {
    const local = await freePort();
    const child = spawn(kubectlBin, ['--kubeconfig', cp.kubeconfig('admin'), '-n', NS, 'port-forward', 'pod/web', `${local}:8080`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    child.stdout.on('data', (d: Buffer) => (said += d.toString()));
    child.stderr.on('data', (d: Buffer) => (said += d.toString()));
    try {
      await stack.waitFor('kubectl port-forward to listen', () => (said.includes('Forwarding from') ? true : undefined), 30_000);
      const body = await stack.waitFor('the page through the forwarded port', async () => {
        const res = await fetch(`http://127.0.0.1:${local}/index.html`, { signal: AbortSignal.timeout(5000) });
        return res.status === 200 ? res.text() : undefined;
      }, 30_000);
      assert.equal(body, 'hello through port-forward\n');
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('the kubelet port: 401 without credentials, 403 for a user without nodes/proxy, 200 on /pods for admin', async () => {
    assert.deepEqual(await kubelet('/pods'), { status: 401, body: 'Unauthorized' });
    assert.deepEqual(await kubelet('/pods', cp.token('nobody')), { status: 403, body: `Forbidden (user=nobody, verb=get, resource=nodes, subresource(s)=[pods proxy])\n` });
    // /run: the command through CRI ExecSync, its output the answer.
    assert.deepEqual(await kubelet(`/run/${NS}/web/app?cmd=echo%20run%20ok`, cp.token('admin'), 'POST'), { status: 200, body: 'run ok\n' });
    assert.deepEqual(await kubelet(`/run/${NS}/web/nope?cmd=true`, cp.token('admin'), 'POST'), { status: 404, body: 'container not found ("nope")' });
    const ok = await kubelet('/pods', cp.token('admin'));
    assert.equal(ok.status, 200);
    const list = JSON.parse(ok.body) as PodList;
    assert.deepEqual([list.kind, list.items.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`)], ['PodList', [`${NS}/web`]]);
    // The serving certificate was made once, its key readable by root only.
    const key = join(stack.dir, 'pki', 'kubelet.key');
    assert.ok(readFileSync(key).length > 0);
    assert.equal(execFileSync('stat', ['-c', '%a', key], { encoding: 'utf8' }).trim(), '600');
  });

  it('the node\'s log files at /logs/ on the kubelet port (the apiserver\'s node proxy refuses a loopback node), to nodes/log only', async () => {
    const list = await kubelet('/logs/', cp.token('admin'));
    assert.equal(list.status, 200, list.body);
    assert.match(list.body, /<pre>\n<a href="syslog">syslog<\/a>\n<\/pre>/);
    assert.deepEqual(await kubelet('/logs/syslog', cp.token('admin')), { status: 200, body: 'Dec  2 00:00:00 node kernel: booted\n' });
    assert.deepEqual(await kubelet('/logs/syslog', cp.token('nobody')), { status: 403, body: `Forbidden (user=nobody, verb=get, resource=nodes, subresource(s)=[log])\n` });
    assert.equal((await kubelet('/logs/nope', cp.token('admin'))).status, 404);
  });
});

/**
 * A websocket exec through the apiserver as the upstream e2e makes it: GET
 * with `Sec-WebSocket-Protocol: <protocol>`, the admin's token; then
 * the server's frames read until it closes (channel 1 stdout, 3 the status).
 */
function websocketExec(cp: ControlPlane, path: string, protocol = 'v4.channel.k8s.io'): Promise<{ stdout: string; status: string }> {
  const url = new URL(cp.url);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: readFileSync(cp.caFile), servername: 'localhost' }, () => {
      socket.write(
        [
          `GET ${path} HTTP/1.1`,
          `Host: ${url.host}`,
          'Connection: Upgrade',
          'Upgrade: websocket',
          'Sec-WebSocket-Version: 13',
          `Sec-WebSocket-Key: ${Buffer.from('kubelet-split-e2e').toString('base64')}`,
          `Sec-WebSocket-Protocol: ${protocol}`,
          `Authorization: Bearer ${cp.token('admin')}`,
          '',
          '',
        ].join('\r\n'),
      );
    });
    let buf = Buffer.alloc(0);
    let upgraded = false;
    const channels = new Map<number, string>();
    const timer = setTimeout(() => socket.destroy(new Error(`no end of the websocket exec within 30 s; got ${JSON.stringify([...channels])}`)), 30_000);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString();
        if (!head.startsWith('HTTP/1.1 101')) return socket.destroy(new Error(`the apiserver did not upgrade: ${buf.toString().slice(0, 500)}`));
        upgraded = true;
        buf = buf.subarray(end + 4);
      }
      // Server frames are not masked: FIN/opcode, length (7 bits, 16 or 64), payload.
      for (;;) {
        if (buf.length < 2) return;
        const opcode = (buf[0] ?? 0) & 0x0f;
        let len = (buf[1] ?? 0) & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        const payload = buf.subarray(off, off + len);
        buf = buf.subarray(off + len);
        if (opcode === 0x8) return socket.end();
        if ((opcode === 0x1 || opcode === 0x2) && payload.length > 0) channels.set(payload[0] ?? 0, (channels.get(payload[0] ?? 0) ?? '') + payload.subarray(1).toString());
      }
    });
    socket.on('error', (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ stdout: channels.get(1) ?? '', status: channels.get(3) ?? '' });
    });
  });
}
