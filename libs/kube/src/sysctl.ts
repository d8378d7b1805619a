/**
 * Pod sysctls on the node (pkg/kubelet/sysctl: allowlist.go, safe_sysctls.go,
 * util.go; component-helpers node/util/sysctl: NormalizeName, GetNamespace):
 * the kubelet admits a pod's sysctls only when each is safe or allowed by
 * --allowed-unsafe-sysctls, and never one of the host's network or IPC
 * namespace for a pod sharing it; it hands them to the runtime with dots as
 * separators.
 */
import type { Pod } from '@app/contracts';

/** allowlist.go ForbiddenReason */
export const SYSCTL_FORBIDDEN_REASON = 'SysctlForbidden';

type SysctlNamespace = 'IPC' | 'Net';

/**
 * NormalizeName: a name whose first separator is '/' (`kernel/shm_rmid_forced`,
 * `net/ipv4/conf/eno2.100/rp_filter`) has its '.' and '/' swapped
 * (`kernel.shm_rmid_forced`, `net.ipv4.conf.eno2/100.rp_filter`).
 */
export function normalizeSysctlName(name: string): string {
  const first = name.search(/[./]/);
  if (first === -1 || name[first] === '.') return name;
  return name.replace(/[./]/g, (ch) => (ch === '.' ? '/' : '.'));
}

const NAME_TO_NAMESPACE: Record<string, SysctlNamespace> = {
  'kernel.sem': 'IPC',
  'kernel.shmall': 'IPC',
  'kernel.shmmax': 'IPC',
  'kernel.shmmni': 'IPC',
  'kernel.shm_rmid_forced': 'IPC',
  'kernel.shm': 'IPC',
  'kernel.msgmax': 'IPC',
  'kernel.msgmnb': 'IPC',
  'kernel.msgmni': 'IPC',
  'kernel.msg': 'IPC',
};
const PREFIX_TO_NAMESPACE: [string, SysctlNamespace][] = [
  ['net', 'Net'],
  ['fs.mqueue', 'IPC'],
];

function namespaceOf(name: string): SysctlNamespace | undefined {
  return NAME_TO_NAMESPACE[name] ?? PREFIX_TO_NAMESPACE.find(([p]) => name.startsWith(`${p}.`))?.[1];
}

/** safe_sysctls.go: the safe sysctls, each with the kernel that namespaced it. */
const SAFE_SYSCTLS: { name: string; kernel?: [number, number] }[] = [
  { name: 'kernel.shm_rmid_forced' },
  { name: 'net.ipv4.ip_local_port_range' },
  { name: 'net.ipv4.tcp_syncookies' },
  { name: 'net.ipv4.ping_group_range' },
  { name: 'net.ipv4.ip_unprivileged_port_start' },
  { name: 'net.ipv4.ip_local_reserved_ports', kernel: [3, 16] },
  { name: 'net.ipv4.tcp_keepalive_time', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_fin_timeout', kernel: [4, 6] },
  { name: 'net.ipv4.tcp_keepalive_intvl', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_keepalive_probes', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_rmem', kernel: [4, 15] },
  { name: 'net.ipv4.tcp_wmem', kernel: [4, 15] },
];

/** SafeSysctlAllowlist: the safe sysctls this kernel (its release, `6.8.0-...`) namespaces; all when the release cannot be read. */
export function safeSysctlAllowlist(kernelRelease?: string): string[] {
  const m = /^(\d+)\.(\d+)/.exec(kernelRelease ?? '');
  const version = m ? [Number(m[1]), Number(m[2])] : undefined;
  return SAFE_SYSCTLS.filter(({ kernel }) => {
    if (!kernel) return true;
    // Upstream drops them when it cannot tell; a kernel this project runs on (cgroup v2) is newer than all of them.
    if (!version) return true;
    const [major = 0, minor = 0] = version;
    return major > kernel[0] || (major === kernel[0] && minor >= kernel[1]);
  }).map((s) => s.name);
}

/**
 * The kubelet's sysctl allowlist (NewAllowlist, patternAllowlist.Admit):
 * exact names and `prefix*` patterns, each known to be namespaced.
 */
export class SysctlAllowlist {
  private readonly sysctls = new Map<string, SysctlNamespace>();
  private readonly prefixes = new Map<string, SysctlNamespace>();

  /** Throws for a pattern that is not a namespaced sysctl (the kubelet refuses to start). */
  constructor(patterns: readonly string[]) {
    for (const pattern of patterns) {
      let name = normalizeSysctlName(pattern);
      const star = name.indexOf('*');
      const prefixed = star !== -1;
      if (prefixed) name = name.slice(0, star);
      const ns = namespaceOf(name);
      if (!ns) throw new Error(`the sysctls "${name}" are not known to be namespaced`);
      (prefixed ? this.prefixes : this.sysctls).set(name, ns);
    }
  }

  /** validateSysctl: undefined when allowed, else why not. */
  private validate(name: string, hostNet: boolean, hostIPC: boolean): string | undefined {
    const sysctl = normalizeSysctlName(name);
    const ns = this.sysctls.get(sysctl) ?? [...this.prefixes].find(([p]) => sysctl.startsWith(p))?.[1];
    if (!ns) return `"${sysctl}" not allowlisted`;
    if ((ns === 'IPC' && hostIPC) || (ns === 'Net' && hostNet)) return `"${sysctl}" not allowed with host ${ns} enabled`;
    return undefined;
  }

  /** Admit: the first sysctl of the pod that is not allowed, as upstream's rejection. */
  admit(pod: Pod): { admit: true } | { admit: false; reason: string; message: string } {
    for (const s of pod.spec.securityContext?.sysctls ?? []) {
      const why = this.validate(s.name, pod.spec.hostNetwork === true, pod.spec.hostIPC === true);
      if (why) return { admit: false, reason: SYSCTL_FORBIDDEN_REASON, message: `forbidden sysctl: ${why}` };
    }
    return { admit: true };
  }
}
