/**
 * What a conformant cluster has that a node does not bring, for the whole
 * conformance suite on this machine (docs/adr/0039-conformance-cluster.md):
 *
 *  - kube-proxy v1.34.4 in iptables mode. The nodes of a cluster on this
 *    machine share the host's network namespace (their bridges are on the
 *    host, as kind's are in one Docker network), so one kube-proxy programs
 *    the Services for all of them: two would rewrite each other's KUBE-*
 *    chains on every sync. Its NodePorts answer on the nodes' IPs only
 *    (`--nodeport-addresses`), its health and metrics on loopback, and it
 *    changes no sysctl (conntrack limits and timeouts left alone, no
 *    localhost NodePorts, which would need route_localnet).
 *  - CoreDNS as the cluster's DNS, the kubeadm way: a Deployment and the
 *    `kube-dns` Service with the cluster DNS IP in kube-system, answering
 *    for the cluster domain only (no `forward`: nothing leaves the machine).
 *  - HostNetState: the machine's iptables rules and the sysctls a run may
 *    touch, read before and compared after, so that a run leaves them as it
 *    found them (kube-proxy's `--cleanup` removes its chains).
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlreadyExists } from '@app/apiserver';
import { freePort, stopProcess } from '../../deploy/local/stack.js';
import { spawnLogged } from './cluster-node.js';
import type { ControlPlane } from './control-plane.js';

/** The cluster's networks: Services (the apiserver's --service-cluster-ip-range), the DNS Service's IP, the domain. */
export const CLUSTER_NETWORK = { serviceCidr: '10.96.0.0/16', dnsIp: '10.96.0.10', domain: 'cluster.local' } as const;

/** The sysctls a cluster run may change (ip_forward: the fleet's forwarding; the others: kube-proxy's, were it let). */
const WATCHED_SYSCTLS = [
  'net/ipv4/ip_forward',
  'net/ipv4/conf/all/route_localnet',
  'net/bridge/bridge-nf-call-iptables',
  'net/bridge/bridge-nf-call-ip6tables',
  'net/netfilter/nf_conntrack_max',
  'net/netfilter/nf_conntrack_tcp_timeout_established',
  'net/netfilter/nf_conntrack_tcp_timeout_close_wait',
  'net/netfilter/nf_conntrack_tcp_be_liberal',
  'net/netfilter/nf_conntrack_udp_timeout',
  'net/netfilter/nf_conntrack_udp_timeout_stream',
];

function readSysctls(): Map<string, string> {
  const values = new Map<string, string>();
  for (const name of WATCHED_SYSCTLS) {
    try {
      values.set(name, readFileSync(`/proc/sys/${name}`, 'utf8').trim());
    } catch {
      // not on this kernel (or module not loaded)
    }
  }
  return values;
}

/** A table-prefixed iptables-save line split as a shell would (double quotes keep a comment whole). */
export function splitRule(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? ''));
  return out;
}

const BUILTIN_CHAINS = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);

/**
 * The rules of every iptables table, each line prefixed with its table, without counters or the
 * save's comments. A table with no rule and only its built-in chains at ACCEPT is left out: it is
 * what an absent one is (iptables-nft makes a table when anything lists it).
 */
export function iptablesLines(save: string): string[] {
  const out: string[] = [];
  let table = '';
  let lines: string[] = [];
  const flush = () => {
    const meaningful = lines.some((l) => l.startsWith('-A ') || (l.startsWith(':') && (!BUILTIN_CHAINS.has(l.slice(1).split(' ')[0] ?? '') || !/^:\S+ ACCEPT$/.test(l))));
    if (table && meaningful) out.push(...lines.map((l) => `${table} ${l}`));
    lines = [];
  };
  for (const raw of save.split('\n')) {
    const l = raw.replace(/ \[\d+:\d+\]$/, '').trim();
    if (l === '' || l.startsWith('#')) continue;
    if (l.startsWith('*')) {
      flush();
      table = l.slice(1);
    } else if (l === 'COMMIT') {
      flush();
      table = '';
    } else lines.push(l);
  }
  flush();
  return out;
}

function iptablesRules(bin: 'iptables' | 'ip6tables'): string[] {
  try {
    return iptablesLines(execFileSync(`${bin}-save`, [], { encoding: 'utf8' }));
  } catch {
    return [];
  }
}

/** Whether `chain` exists in the filter table of `bin`. */
function chainExists(bin: 'iptables' | 'ip6tables', chain: string): boolean {
  try {
    execFileSync(bin, ['-w', '-t', 'filter', '-S', chain], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * KUBE-FIREWALL, which kube-proxy's iptables mode makes in the filter table (its INPUT and OUTPUT
 * jumps, the drop of martian traffic to 127.0.0.0/8) and `--cleanup` leaves: removed when the
 * machine did not have it before.
 */
function removeKubeFirewall(bin: 'iptables' | 'ip6tables'): void {
  for (const parent of ['INPUT', 'OUTPUT']) {
    for (let i = 0; i < 10; i++) {
      try {
        execFileSync(bin, ['-w', '-t', 'filter', '-D', parent, '-j', 'KUBE-FIREWALL'], { stdio: 'ignore' });
      } catch {
        break;
      }
    }
  }
  for (const op of ['-F', '-X']) {
    try {
      execFileSync(bin, ['-w', '-t', 'filter', op, 'KUBE-FIREWALL'], { stdio: 'ignore' });
    } catch {
      // not there
    }
  }
}

/** The machine's iptables rules and watched sysctls: read before a run, restored (sysctls) and compared after. */
export class HostNetState {
  private constructor(
    private readonly sysctls: Map<string, string>,
    private readonly rules: { v4: string[]; v6: string[] },
  ) {}

  static read(): HostNetState {
    return new HostNetState(readSysctls(), { v4: iptablesRules('iptables'), v6: iptablesRules('ip6tables') });
  }

  /** Writes back every watched sysctl that differs from its value at read(); the names written. */
  restoreSysctls(): string[] {
    const restored: string[] = [];
    for (const [name, was] of this.sysctls) {
      try {
        if (readFileSync(`/proc/sys/${name}`, 'utf8').trim() !== was) {
          writeFileSync(`/proc/sys/${name}`, was);
          restored.push(name);
        }
      } catch {
        // gone with its module
      }
    }
    return restored;
  }

  /**
   * Undoes what was added since read() to chains whose name matches `chains` (the CNI portmap
   * plugin's CNI-HOSTPORT-* chains, which it makes on a node's first hostPort pod and never removes):
   * their jumps and rules deleted, then the chains flushed and deleted. The lines undone.
   */
  undoAddedChains(chains: RegExp): string[] {
    const undone: string[] = [];
    for (const family of ['v4', 'v6'] as const) {
      const bin = family === 'v4' ? 'iptables' : 'ip6tables';
      const before = new Set(this.rules[family]);
      const added = iptablesRules(bin).filter((l) => !before.has(l));
      // Rules in such a chain, or jumping to one.
      const rules = added.filter((l) => l.split(' ')[1] === '-A' && chains.test(l));
      const declared = added.filter((l) => /^\S+ :/.test(l) && chains.test(l.split(' ')[1] ?? ''));
      for (const l of rules) {
        const [table = '', , chain = '', ...rest] = splitRule(l);
        try {
          execFileSync(bin, ['-w', '-t', table, '-D', chain, ...rest], { stdio: 'ignore' });
          undone.push(`${bin}: ${l}`);
        } catch {
          // gone already
        }
      }
      for (const l of declared) {
        const [table = '', decl = ''] = l.split(' ');
        const chain = decl.slice(1);
        for (const op of ['-F', '-X']) {
          try {
            execFileSync(bin, ['-w', '-t', table, op, chain], { stdio: 'ignore' });
          } catch {
            // gone already
          }
        }
        undone.push(`${bin}: ${l}`);
      }
    }
    return undone;
  }

  /** What differs now from read(): a line per sysctl or rule added or removed (empty: the same). */
  differences(): string[] {
    const now = HostNetState.read();
    const out: string[] = [];
    for (const [name, was] of this.sysctls) {
      const is = now.sysctls.get(name);
      if (is !== was) out.push(`sysctl ${name.replaceAll('/', '.')}: ${was} before, ${is ?? 'gone'} after`);
    }
    // Set differences of table-prefixed lines (a rule's order within its chain is not compared).
    for (const family of ['v4', 'v6'] as const) {
      const before = new Set(this.rules[family]);
      const after = new Set(now.rules[family]);
      for (const r of after) if (!before.has(r)) out.push(`ip${family === 'v4' ? '' : '6'}tables: added ${r}`);
      for (const r of before) if (!after.has(r)) out.push(`ip${family === 'v4' ? '' : '6'}tables: removed ${r}`);
    }
    return out;
  }
}

/** The user kube-proxy runs as (bound to system:node-proxier, as kubeadm binds system:kube-proxy's group). */
export const KUBE_PROXY_USER = 'system:kube-proxy';

export interface KubeProxySettings {
  cp: ControlPlane;
  /** Where deploy/conformance/build.sh put kube-proxy. */
  bin: string;
  logs: string;
  /** The node it runs for (--hostname-override): its topology hints and local endpoints. */
  node: string;
  /** The nodes' IPs: NodePorts answer there and nowhere else. */
  nodeIps: readonly string[];
  /** The pods' CIDR (traffic from outside it to a Service is masqueraded). */
  clusterCidr: string;
}

/** kube-proxy's ClusterRoleBinding of KUBE_PROXY_USER to system:node-proxier (the startControlPlane `users` entry). */
async function bindNodeProxier(cp: ControlPlane): Promise<void> {
  const body = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'kubelet-split:kube-proxy' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node-proxier' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: KUBE_PROXY_USER }],
  };
  await cp.admin.request('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { method: 'POST', body }).catch((err: unknown) => {
    if (!isAlreadyExists(err)) throw err;
  });
}

/** The flags of the one kube-proxy (iptables mode, no sysctl of its own, NodePorts on the nodes' IPs). */
export function kubeProxyArgs(s: { kubeconfig: string; node: string; nodeIps: readonly string[]; clusterCidr: string; healthzPort: number; metricsPort: number }): string[] {
  return [
    `--kubeconfig=${s.kubeconfig}`,
    `--hostname-override=${s.node}`,
    '--proxy-mode=iptables',
    `--cluster-cidr=${s.clusterCidr}`,
    `--nodeport-addresses=${s.nodeIps.map((ip) => `${ip}/32`).join(',')}`,
    '--iptables-localhost-nodeports=false',
    '--conntrack-max-per-core=0',
    '--conntrack-tcp-timeout-established=0',
    '--conntrack-tcp-timeout-close-wait=0',
    `--healthz-bind-address=127.0.0.1:${s.healthzPort}`,
    `--metrics-bind-address=127.0.0.1:${s.metricsPort}`,
    '--v=1',
  ];
}

/** kube-proxy started and healthy (its /healthz 200 once it synced); the stop stops it and removes its chains (--cleanup). */
export async function startKubeProxy(s: KubeProxySettings): Promise<{ child: ChildProcess; stop: () => Promise<void> }> {
  await bindNodeProxier(s.cp);
  const healthzPort = await freePort();
  const argv = kubeProxyArgs({ kubeconfig: s.cp.kubeconfig(KUBE_PROXY_USER), node: s.node, nodeIps: s.nodeIps, clusterCidr: s.clusterCidr, healthzPort, metricsPort: await freePort() });
  const bin = join(s.bin, 'kube-proxy');
  const families = ['iptables', 'ip6tables'] as const;
  const firewallBefore = new Map(families.map((f) => [f, chainExists(f, 'KUBE-FIREWALL')]));
  const child = spawnLogged(bin, argv, s.logs, 'kube-proxy.log');
  const stop = async () => {
    await stopProcess(child, 10_000);
    // Its KUBE-* chains and rules, in every table and both families.
    try {
      execFileSync(bin, ['--cleanup', '--proxy-mode=iptables', '--v=1'], { stdio: 'ignore' });
    } catch {
      // --cleanup exits non-zero when something was already gone
    }
    for (const f of families) if (!firewallBefore.get(f)) removeKubeFirewall(f);
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`kube-proxy exited (${child.exitCode}); see ${join(s.logs, 'kube-proxy.log')}`);
    }
    const ok = await fetch(`http://127.0.0.1:${healthzPort}/healthz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.status === 200, () => false);
    if (ok) return { child, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`kube-proxy was not healthy within 120 s; see ${join(s.logs, 'kube-proxy.log')}`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The Corefile: the cluster domain and the reverse zones from the API, nothing forwarded anywhere. */
export function corefile(domain: string): string {
  return [
    '.:53 {',
    '    errors',
    '    health {',
    '       lameduck 5s',
    '    }',
    '    ready',
    `    kubernetes ${domain} in-addr.arpa ip6.arpa {`,
    '       pods insecure',
    '       fallthrough in-addr.arpa ip6.arpa',
    '       ttl 30',
    '    }',
    '    prometheus :9153',
    '    cache 30',
    '    loop',
    '    reload',
    '    loadbalance',
    '}',
    '',
  ].join('\n');
}

/** kubeadm's CoreDNS objects (v1.34: its coredns addon manifests), with `image`, the DNS IP and the domain. */
export function coreDnsObjects(image: string, dnsIp: string, domain: string): { path: string; body: Record<string, unknown> }[] {
  const ns = 'kube-system';
  const labels = { 'k8s-app': 'kube-dns' };
  return [
    { path: `/api/v1/namespaces/${ns}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: ns } } },
    {
      path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'system:coredns' },
        rules: [
          { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
          { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
        ],
      },
    },
    {
      path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'system:coredns' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
        subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: ns }],
      },
    },
    { path: `/api/v1/namespaces/${ns}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns', namespace: ns }, data: { Corefile: corefile(domain) } } },
    {
      path: `/apis/apps/v1/namespaces/${ns}/deployments`,
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'coredns', namespace: ns, labels },
        spec: {
          replicas: 2,
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              priorityClassName: 'system-cluster-critical',
              serviceAccountName: 'coredns',
              tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }, { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
              affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchExpressions: [{ key: 'k8s-app', operator: 'In', values: ['kube-dns'] }] }, topologyKey: 'kubernetes.io/hostname' } }] } },
              nodeSelector: { 'kubernetes.io/os': 'linux' },
              dnsPolicy: 'Default',
              // Port 53 as user 65532: the image's file capability is ignored under allowPrivilegeEscalation: false
              // (no_new_privs), and containerd 1.6 does not open the low ports to unprivileged users (2.x's
              // enable_unprivileged_ports does): the pod's own network namespace does, with this safe sysctl.
              securityContext: { sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '53' }] },
              containers: [
                {
                  name: 'coredns',
                  image,
                  imagePullPolicy: 'IfNotPresent',
                  args: ['-conf', '/etc/coredns/Corefile'],
                  resources: { limits: { memory: '170Mi' }, requests: { cpu: '100m', memory: '70Mi' } },
                  volumeMounts: [{ name: 'config-volume', mountPath: '/etc/coredns', readOnly: true }],
                  ports: [
                    { containerPort: 53, name: 'dns', protocol: 'UDP' },
                    { containerPort: 53, name: 'dns-tcp', protocol: 'TCP' },
                    { containerPort: 9153, name: 'metrics', protocol: 'TCP' },
                  ],
                  securityContext: { allowPrivilegeEscalation: false, capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] }, readOnlyRootFilesystem: true },
                  livenessProbe: { httpGet: { path: '/health', port: 8080, scheme: 'HTTP' }, initialDelaySeconds: 60, timeoutSeconds: 5, successThreshold: 1, failureThreshold: 5 },
                  readinessProbe: { httpGet: { path: '/ready', port: 8181, scheme: 'HTTP' } },
                },
              ],
              volumes: [{ name: 'config-volume', configMap: { name: 'coredns', items: [{ key: 'Corefile', path: 'Corefile' }] } }],
            },
          },
        },
      },
    },
    {
      path: `/api/v1/namespaces/${ns}/services`,
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'kube-dns', namespace: ns, labels: { ...labels, 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' }, annotations: { 'prometheus.io/port': '9153', 'prometheus.io/scrape': 'true' } },
        spec: {
          selector: labels,
          clusterIP: dnsIp,
          ports: [
            { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
            { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
            { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
          ],
        },
      },
    },
  ];
}

interface DeploymentStatus {
  status?: { readyReplicas?: number; replicas?: number };
  spec?: { replicas?: number };
}

/** CoreDNS deployed and its replicas Ready (bounded); resolves with how many are. */
export async function deployCoreDns(cp: ControlPlane, image: string, dnsIp: string = CLUSTER_NETWORK.dnsIp, domain: string = CLUSTER_NETWORK.domain, timeoutMs = 180_000): Promise<number> {
  for (const { path, body } of coreDnsObjects(image, dnsIp, domain)) {
    await cp.admin.request(path, { method: 'POST', body }).catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  }
  const deadline = Date.now() + timeoutMs;
  let last = 'not created';
  for (;;) {
    const d = await cp.admin.request<DeploymentStatus>('/apis/apps/v1/namespaces/kube-system/deployments/coredns').catch((err: unknown) => ((last = (err as Error).message), undefined));
    const want = d?.spec?.replicas ?? 2;
    const ready = d?.status?.readyReplicas ?? 0;
    if (d && ready >= want) return ready;
    if (d) last = `${ready} of ${want} replicas ready`;
    if (Date.now() > deadline) throw new Error(`CoreDNS was not ready within ${timeoutMs / 1000} s: ${last}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}
