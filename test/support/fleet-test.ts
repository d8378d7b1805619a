/**
 * What the fleet's tests share (test/fleet.e2e.spec.ts, test/fleet-faults.fleet.ts):
 * a fleet of their own in a temporary directory, a Deployment, where its
 * pods run, kubectl against the control plane, the CLI against the hub.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NatsCriClient } from '@app/cri';
import { KubeletLabels } from '@app/kube';
import { FLEET_READER_USER } from '@app/nats';
import type { Pod, PodList } from 'kubernetes-types/core/v1.js';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import { REPO_ROOT } from '../../deploy/local/stack.js';
import { Fleet, type FleetNode } from '../fleet/fleet-cluster.js';
import type { Hub } from '../fleet/hub.js';

export const BUSYBOX = 'localhost/kubelet-split/busybox:1.35';

/** A fleet of `nodes` for a test file, its output in KS_E2E_LOGS (or the temporary directory) for a failure's post-mortem. */
export async function testFleet(nodes: number, extra: { controllerArgs?: string[] } = {}): Promise<Fleet> {
  const logs = process.env['KS_E2E_LOGS'];
  if (logs) mkdirSync(logs, { recursive: true });
  const dir = mkdtempSync(join(logs ?? tmpdir(), 'ks-fleet-'));
  return Fleet.start({ nodes, dir, say: (line) => process.stdout.write(`fleet | ${line}\n`), ...extra });
}

/**
 * A Deployment of `replicas` busybox pods on the pod network, each serving its own name over HTTP on 8080 and
 * Ready once it does; `tolerationSeconds` for the not-ready and unreachable taints (default: the cluster's 300 s).
 */
export function httpDeployment(name: string, namespace: string, replicas: number, tolerationSeconds?: number): Deployment {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: 1,
          ...(tolerationSeconds !== undefined
            ? {
                tolerations: ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'].map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds })),
              }
            : {}),
          containers: [
            {
              name: 'web',
              image: BUSYBOX,
              imagePullPolicy: 'IfNotPresent',
              command: ['sh', '-c', 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www'],
              ports: [{ containerPort: 8080 }],
              readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      },
    },
  };
}

export async function createNamespace(fleet: Fleet, namespace: string): Promise<void> {
  await fleet.cp.createNamespace(namespace);
}

export async function createDeployment(fleet: Fleet, d: Deployment): Promise<void> {
  await fleet.cp.admin.request(`/apis/apps/v1/namespaces/${d.metadata?.namespace ?? 'default'}/deployments`, { method: 'POST', body: d });
}

/** The Deployment's pods the apiserver has (not being deleted). */
export async function podsOf(fleet: Fleet, namespace: string, app: string): Promise<Pod[]> {
  const list = await fleet.cp.admin.request<PodList>(`/api/v1/namespaces/${namespace}/pods?labelSelector=app%3D${app}`);
  return list.items.filter((p) => !p.metadata?.deletionTimestamp);
}

export const isReady = (p: Pod): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** The node's READY sandboxes in containerd (through its cri-gateway, as the node's admin), by pod UID. */
export async function runningSandboxes(node: FleetNode): Promise<Map<string, number>> {
  const nc = await connect({ servers: node.nats.url, name: 'fleet-test', ...node.nats.auth() });
  try {
    const cri = new NatsCriClient(nc, node.name, 'fleet-test');
    const { items } = await cri.runtime('ListPodSandbox', { filter: { state: { state: 'SANDBOX_READY' } } });
    const byUid = new Map<string, number>();
    for (const s of items) {
      const uid = s.metadata?.uid ?? s.labels?.[KubeletLabels.podUid] ?? '';
      byUid.set(uid, (byUid.get(uid) ?? 0) + 1);
    }
    return byUid;
  } finally {
    await nc.close();
  }
}

function run(bin: string, argv: string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 60_000): Promise<{ code: number; out: string; err: string }> {
  return new Promise((res) => {
    execFile(bin, argv, { encoding: 'utf8', env, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      res({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });
}

/** kubectl (deploy/control-plane/build.sh builds it beside the apiserver) as the cluster's admin. */
export function kubectl(fleet: Fleet, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  return run(join(process.env['KS_CONTROL_PLANE_BIN'] ?? '', 'kubectl'), [`--kubeconfig=${fleet.cp.kubeconfig('admin')}`, ...argv]);
}

/** The kubelet-split CLI against the hub, as the fleet reader. */
export function fleetCli(hubOf: Hub, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const hub = hubOf.credentials;
  return run(process.execPath, [join(REPO_ROOT, 'dist', 'apps', 'cli', 'src', 'cli.js'), ...argv, '--fleet', '--nats', hub.clientUrls.join(','), '--nats-password-file', hub.passwordFile(FLEET_READER_USER)]);
}

/** A connection to a node's leaf nats-server as one of its users (default its admin). */
export async function connectLeaf(node: FleetNode, user?: string): Promise<NatsConnection> {
  return connect({ servers: node.nats.url, name: `fleet-test-${user ?? 'admin'}`, ...node.nats.auth(user) });
}

/** Polls `probe` until it gives a value (the wait ends on the condition the caller then asserts). */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s${last ? ` (last: ${last})` : ''}`);
}

/** The node's own view of its pods: its status manager's /pods, asked over its leaf nats-server (as its admin). */
export async function nodePods(node: FleetNode): Promise<Pod[]> {
  const nc = await connectLeaf(node);
  try {
    const m = await nc.request(`kubelet.${node.name}.service.status-manager.pods`, new TextEncoder().encode('{}'), { timeout: 5000 });
    return (JSON.parse(new TextDecoder().decode(m.data)) as { items: Pod[] }).items;
  } finally {
    await nc.close();
  }
}

/** Stops a running container of pod `uid` in the node's containerd directly (not through the pod worker): a kill behind the node's back. */
export async function killContainerBehindItsBack(node: FleetNode, uid: string): Promise<string> {
  const nc = await connectLeaf(node);
  try {
    const cri = new NatsCriClient(nc, node.name, 'fleet-test');
    const { containers } = await cri.runtime('ListContainers', { filter: { state: { state: 'CONTAINER_RUNNING' }, labelSelector: { [KubeletLabels.podUid]: uid } } });
    const c = containers[0];
    if (!c) throw new Error(`no running container of pod ${uid} on ${node.name}`);
    await cri.runtime('StopContainer', { containerId: c.id, timeout: '0' });
    return c.id;
  } finally {
    await nc.close();
  }
}

/** The node's sandboxes and containers of the pods `uids`, whatever their state. */
export async function remainsOf(node: FleetNode, uids: ReadonlySet<string>): Promise<string[]> {
  const nc = await connectLeaf(node);
  try {
    const cri = new NatsCriClient(nc, node.name, 'fleet-test');
    const [{ items }, { containers }] = await Promise.all([cri.runtime('ListPodSandbox', {}), cri.runtime('ListContainers', {})]);
    return [
      ...items.filter((s) => uids.has(s.metadata?.uid ?? '')).map((s) => `sandbox ${s.metadata?.name} (${s.state})`),
      ...containers.filter((c) => uids.has(c.labels[KubeletLabels.podUid] ?? '')).map((c) => `container ${c.labels[KubeletLabels.podName]}/${c.metadata?.name} (${c.state})`),
    ];
  } finally {
    await nc.close();
  }
}

export const restartsOf = (p: Pod): number => (p.status?.containerStatuses ?? []).reduce((n, c) => n + c.restartCount, 0);
