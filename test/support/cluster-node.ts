/**
 * The building blocks of a cluster on this machine, shared by the
 * conformance runner (test/conformance/conformance.ts) and the fleet runner
 * (test/fleet/fleet.ts): a node's bridge with its IP, the scheduler and
 * the controller-manager beside a control plane, kubelet-split's services
 * joined as the launcher runs them, and the wait for a Node to be Ready.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_NAMES, STATUS_GROUP, type ServiceName } from '@app/service';
import type { Node } from 'kubernetes-types/core/v1.js';
import { freePort, freePorts, startModules, startService, stopProcess, type ServiceProcess } from '../../deploy/local/stack.js';
import type { ControlPlane } from './control-plane.js';

/** A node's pod network: its bridge, the subnet its containerd's CNI hands out, and the node's IP on the bridge. */
export interface NodeNetwork {
  bridge: string;
  subnet: string;
  ip: string;
}

const ipCommand = (...a: string[]) => execFileSync('ip', a, { stdio: ['ignore', 'pipe', 'pipe'] });

/** The bridge and the node's IP on it, made before the node starts: the kubelet's server binds that IP. */
export function ensureBridge(net: NodeNetwork): void {
  try {
    ipCommand('link', 'show', net.bridge);
  } catch {
    ipCommand('link', 'add', net.bridge, 'type', 'bridge');
  }
  const have = execFileSync('ip', ['-o', '-4', 'addr', 'show', 'dev', net.bridge], { encoding: 'utf8' });
  if (!have.includes(`${net.ip}/`)) ipCommand('addr', 'add', `${net.ip}/${net.subnet.split('/')[1] ?? '24'}`, 'dev', net.bridge);
  ipCommand('link', 'set', net.bridge, 'up');
}

export function deleteBridge(net: NodeNetwork): void {
  execFileSync('ip', ['link', 'del', net.bridge], { stdio: 'ignore' });
}

/** A child whose output goes to `logs/<log>`. */
export function spawnLogged(bin: string, argv: string[], logs: string, log: string, env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const fd = openSync(join(logs, log), 'a');
  try {
    return spawn(bin, argv, { stdio: ['ignore', fd, fd], env });
  } finally {
    closeSync(fd);
  }
}

export const lineSink = (logs: string, file: string) => (line: string) => appendFileSync(join(logs, file), `${line}\n`);

/** kube-controller-manager and kube-scheduler beside `cp` (deploy/conformance/build.sh builds them into `bin`); the stop stops both. */
export async function startControllers(cp: ControlPlane, bin: string, logs: string, controllerArgs: readonly string[] = []): Promise<() => Promise<void>> {
  const kubeconfig = cp.kubeconfig('admin');
  const pki = join(cp.dir, 'pki');
  const cm = spawnLogged(join(bin, 'kube-controller-manager'), [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${await freePort()}`,
    `--service-account-private-key-file=${join(pki, 'sa.key')}`,
    `--root-ca-file=${cp.caFile}`,
    '--use-service-account-credentials=false',
    '--leader-elect=false',
    '--v=1',
    ...controllerArgs,
  ], logs, 'kube-controller-manager.log');
  const scheduler = spawnLogged(join(bin, 'kube-scheduler'), [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${await freePort()}`,
    '--leader-elect=false',
    '--v=1',
  ], logs, 'kube-scheduler.log');
  const stop = async () => {
    await stopProcess(scheduler, 10_000);
    await stopProcess(cm, 10_000);
  };
  await new Promise((r) => setTimeout(r, 2000));
  for (const [name, child] of [['kube-controller-manager', cm], ['kube-scheduler', scheduler]] as const) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`${name} exited (${child.exitCode}); see ${join(logs, `${name}.log`)}`);
    }
  }
  return stop;
}

export interface SplitNodeSettings {
  node: string;
  natsUrl: string;
  kubeconfig: string;
  clientCaFile: string;
  ip: string;
  runtimeSocket: string;
  /** Where the node keeps pods' directories, logs and the kubelet server's certificates. */
  work: string;
  logs: string;
  /** The log file names' prefix (the fleet's nodes share one logs directory). */
  logPrefix?: string;
  cgroupRoot: string;
  podWorkerReplicas?: number;
  /** The kubelet's clusterDNS and clusterDomain, for the pod workers (CLUSTER_DNS, CLUSTER_DOMAIN); none: the node's DNS. */
  clusterDns?: { servers: readonly string[]; domain: string };
  /** The console's fleet page: the hub's client URLs and the fleet reader's password file (FLEET_NATS_URL, FLEET_NATS_PASSWORD_FILE). */
  fleet?: { urls: readonly string[]; passwordFile: string };
}

/**
 * kubelet-split joined to a control plane as the launcher runs it: one
 * process per service (`podWorkerReplicas` pod workers, default 2) but the
 * status group (STATUS_GROUP), which is one process of four modules. In
 * start order; stop them in reverse (dependents first, cri-gateway last).
 */
export async function startSplitNode(s: SplitNodeSettings): Promise<ServiceProcess[]> {
  const prefix = s.logPrefix ?? '';
  const dirs = { POD_ROOT_DIR: join(s.work, 'pods'), POD_LOGS_DIR: join(s.work, 'pod-logs'), LEGACY_CONTAINER_LOGS_DIR: join(s.work, 'containers') };
  const group: readonly ServiceName[] = STATUS_GROUP;
  const ports: Partial<Record<ServiceName, number>> = {};
  const free = await freePorts(group.length);
  group.forEach((svc, i) => (ports[svc] = free[i]));
  // The group's modules as once one service: the kubeconfig, the node's address, the kubelet server's certificates,
  // the pod directories (logs and stats), and where each finds the others' ports.
  const groupEnv = {
    KUBECONFIG: s.kubeconfig,
    KUBELET_CLIENT_CA_FILE: s.clientCaFile,
    KUBELET_CERT_DIR: join(s.work, 'pki'),
    NODE_IP: s.ip,
    CONSOLE_URL: `http://127.0.0.1:${ports.console ?? 0}`,
    KUBELET_READ_URL: `http://127.0.0.1:${ports['kubelet-server'] ?? 0}`,
    ...(s.fleet ? { FLEET_NATS_URL: s.fleet.urls.join(','), FLEET_NATS_PASSWORD_FILE: s.fleet.passwordFile } : {}),
    ...dirs,
  };
  const envOf = (service: ServiceName): Record<string, string> => ({
    NODE_NAME: s.node,
    NATS_URL: s.natsUrl,
    LOG_LEVEL: 'info',
    ...(service === 'config-source' ? { KUBECONFIG: s.kubeconfig } : {}),
    ...(group.includes(service) ? groupEnv : {}),
    ...(service === 'cri-gateway' ? { CONTAINER_RUNTIME_ENDPOINT: `unix://${s.runtimeSocket}` } : {}),
    ...(service === 'pod-worker' || service === 'sync-loop' ? { CGROUP_ROOT: s.cgroupRoot, ...dirs } : {}),
    ...(service === 'pod-worker' || service === 'prober' ? { NODE_IP: s.ip } : {}),
    ...(service === 'pod-worker' && s.clusterDns ? { CLUSTER_DNS: s.clusterDns.servers.join(','), CLUSTER_DOMAIN: s.clusterDns.domain } : {}),
  });
  const started: ServiceProcess[] = [];
  try {
    const order: ServiceName[] = ['cri-gateway', ...SERVICE_NAMES.filter((svc) => svc !== 'cri-gateway' && !group.includes(svc))];
    for (const service of order) {
      const replicas = service === 'pod-worker' ? (s.podWorkerReplicas ?? 2) : 1;
      for (let r = 0; r < replicas; r++) {
        started.push(await startService(service, envOf(service), { port: await freePort(), instance: String(r), sink: lineSink(s.logs, `${prefix}${service}-${r}.log`), timeoutMs: 60_000 }));
      }
    }
    started.push(...(await startModules(group, envOf, { ports, instance: '0', sink: lineSink(s.logs, `${prefix}status-group-0.log`), timeoutMs: 60_000 })));
  } catch (err) {
    for (const sp of [...started].reverse()) await sp.stop(15_000).catch(() => undefined);
    throw err;
  }
  return started;
}

/** The Node's Ready condition, and whether it is schedulable (no NoSchedule taint). */
export async function nodeReadiness(cp: ControlPlane, node: string): Promise<{ ready: string; schedulable: boolean; message: string; taints: string }> {
  const n = await cp.admin.request<Node>(`/api/v1/nodes/${node}`);
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
  const taints = n.spec?.taints ?? [];
  return { ready: ready?.status ?? '?', schedulable: !taints.some((t) => t.effect === 'NoSchedule'), message: ready?.message ?? '', taints: JSON.stringify(taints) };
}

export async function waitNodeReady(cp: ControlPlane, node: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not registered';
  while (Date.now() < deadline) {
    try {
      const r = await nodeReadiness(cp, node);
      if (r.ready === 'True' && r.schedulable) return;
      last = `Ready=${r.ready} (${r.message}), taints ${r.taints}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`the Node ${node} was not Ready and schedulable within ${timeoutMs / 1000} s: ${last}`);
}

/** Unmounts what is left mounted under `dir` (the volumes of pods still there when a node stopped), deepest first. */
export function unmountUnder(dir: string): void {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => (line.split(' ')[4] ?? '').replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((m) => m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) execFileSync('umount', [m], { stdio: 'ignore' });
}
