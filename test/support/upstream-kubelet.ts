/**
 * The upstream kubelet v1.34.4 as this project runs it beside kubelet-split
 * (the bench, `npm run conformance --kubelet upstream`), through
 * deploy/upstream-kubelet/run.sh in a private mount namespace with a containerd of its
 * own: what every such KubeletConfiguration holds for this kind of machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, freePort, stopProcess } from '../../deploy/local/stack.js';

/**
 * The machine's settings: cgroupfs with no QoS tree and no node allocatable
 * enforcement (kubelet-split's own pod cgroups are elsewhere), swap and
 * cgroup v1 allowed, no iptables chains and no oom_score_adj of its own (the
 * sandbox has no CAP_SYS_RESOURCE).
 */
export const UPSTREAM_KUBELET_MACHINE_SETTINGS = {
  apiVersion: 'kubelet.config.k8s.io/v1beta1',
  kind: 'KubeletConfiguration',
  cgroupDriver: 'cgroupfs',
  cgroupsPerQOS: false,
  enforceNodeAllocatable: [],
  failSwapOn: false,
  failCgroupV1: false,
  makeIPTablesUtilChains: false,
  oomScoreAdj: 0,
} as const;

/** A KubeletConfiguration as run.sh reads it (DIR/kubelet-config.yaml): JSON is YAML, no YAML writer needed. */
export function kubeletConfigYaml(settings: Record<string, unknown>): string {
  return `${JSON.stringify({ ...UPSTREAM_KUBELET_MACHINE_SETTINGS, ...settings }, null, 2)}\n`;
}

export interface UpstreamNodeSettings {
  /** The kubelet binary (deploy/upstream-kubelet/build.sh). */
  kubelet: string;
  node: string;
  /** The node's own directory: its config, root dir, pod logs, containerd. */
  dir: string;
  kubeconfig: string;
  /** The CA of the apiserver's client certificate to kubelets. */
  clientCaFile: string;
  /** The node's IP (on its bridge): the kubelet's server and the Node's InternalIP. */
  ip: string;
  bridge: string;
  subnet: string;
  /** Pods' routes through the bridge (runtime.sh KS_CNI_ROUTES). */
  routes?: readonly string[];
  /** The kubelet's clusterDNS and clusterDomain (none: the node's DNS for every pod). */
  clusterDns?: readonly string[];
  clusterDomain?: string;
  /** Where the kubelet's (and its containerd's) output goes. */
  log: string;
}

/**
 * The upstream kubelet v1.34.4 joined to a control plane, in its private mount namespace with its
 * own containerd on the node's bridge (deploy/upstream-kubelet/run.sh); resolves with its process
 * and its containerd's socket once that answers. Stop it with stopProcess (run.sh stops the kubelet,
 * then every task of its containerd and containerd).
 */
export async function startUpstreamNode(s: UpstreamNodeSettings): Promise<{ child: ChildProcess; socket: string }> {
  mkdirSync(join(s.dir, 'manifests'), { recursive: true });
  const config = {
    staticPodPath: join(s.dir, 'manifests'),
    address: s.ip,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: await freePort(),
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: s.clientCaFile } },
    authorization: { mode: 'Webhook' },
    podLogsDir: join(s.dir, 'pod-logs'),
    volumePluginDir: join(s.dir, 'volume-plugins'),
    containerRuntimeEndpoint: `unix://${join(s.dir, 'containerd.sock')}`,
    ...(s.clusterDns?.length ? { clusterDNS: s.clusterDns, clusterDomain: s.clusterDomain ?? 'cluster.local' } : {}),
  };
  writeFileSync(join(s.dir, 'kubelet-config.yaml'), kubeletConfigYaml(config));
  const fd = openSync(s.log, 'a');
  let child: ChildProcess;
  try {
    child = spawn('bash', [join(REPO_ROOT, 'deploy', 'upstream-kubelet', 'run.sh'), s.dir, s.kubelet, s.node, `--kubeconfig=${s.kubeconfig}`, `--node-ip=${s.ip}`], {
      stdio: ['ignore', fd, fd],
      env: { ...process.env, KS_CNI_BRIDGE: s.bridge, KS_CNI_SUBNET: s.subnet, KS_CNI_ROUTES: (s.routes ?? []).join(',') },
    });
  } finally {
    closeSync(fd);
  }
  const socket = join(s.dir, 'containerd.sock');
  const deadline = Date.now() + 120_000;
  while (!existsSync(socket)) {
    if (child.exitCode !== null) throw new Error(`deploy/upstream-kubelet/run.sh exited (${child.exitCode}); see ${s.log}`);
    if (Date.now() > deadline) {
      await stopProcess(child, 30_000);
      throw new Error(`no containerd socket at ${socket} after 120 s; see ${s.log}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return { child, socket };
}
