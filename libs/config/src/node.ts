import { readFileSync, readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { env } from './env.js';

/**
 * The node's resources as configured, read by every service that needs the
 * node's capacity or allocatable: sync-loop (admission) and status-manager
 * (the Node's status). One schema, so both compute the same allocatable
 * (@app/kube nodeAllocatable) from the same settings.
 */
export const nodeResourcesSchema = {
  NODE_CPU: env.string({ default: String(cpus().length), describe: 'the node\'s CPU capacity, as a quantity ("2", "1500m"); allocatable is this less the reservations', pattern: /^\d+(\.\d+)?m?$/, patternHint: 'a CPU quantity like 2, 0.5 or 1500m' }),
  NODE_MEMORY: env.string({ default: String(totalmem()), describe: 'the node\'s memory capacity, as a quantity ("8Gi"); allocatable is this less the reservations, the hard eviction threshold and the huge pages', pattern: /^\d+(\.\d+)?([kMGTPE]i?|e\d+)?$/, patternHint: 'a memory quantity like 8Gi, 512Mi or 1000000000' }),
  NODE_MAX_PODS: env.int({ default: 110, min: 1, describe: 'the most pods the node admits, like --max-pods (the pods capacity)' }),
  NODE_LABELS: env.optionalString({ describe: 'extra node labels (nodeSelector admission; the Node\'s labels), "key=value" pairs separated by ",", like --node-labels' }),
  KUBE_RESERVED: env.optionalString({ describe: 'resources reserved for the node agent, like --kube-reserved: "cpu=100m,memory=256Mi,ephemeral-storage=1Gi,pid=1000"' }),
  SYSTEM_RESERVED: env.optionalString({ describe: 'resources reserved for the system, like --system-reserved (same form as KUBE_RESERVED)' }),
  EVICTION_HARD: env.string({
    default: 'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%',
    describe: 'hard eviction thresholds, like --eviction-hard: kept out of allocatable, and the Node\'s pressure conditions',
  }),
};

/**
 * The pod cgroups' settings, read by the two services that touch the
 * kubepods tree (ADR 0014): pod-worker makes each pod's cgroup there, and
 * sync-loop's housekeeping removes those of pods no one knows any more.
 */
export const cgroupsSchema = {
  CGROUPS_PER_QOS: env.string({ default: 'true', pattern: /^(true|false)$/, patternHint: 'true or false', describe: 'one cgroup per pod under the kubepods QoS tree, passed to the sandbox as its cgroup parent, like --cgroups-per-qos' }),
  CGROUP_ROOT: env.string({ default: '/', describe: 'where the kubepods cgroup tree goes, like --cgroup-root' }),
  CGROUP_MOUNT: env.string({ default: '/sys/fs/cgroup', describe: 'where the host\'s cgroup file systems are mounted (v1 hierarchies below it, or cgroup2 itself)' }),
};

/**
 * The huge pages this machine has pre-allocated, by resource name
 * (`hugepages-2Mi`) in bytes, as cadvisor's MachineInfo reports them
 * (/sys/kernel/mm/hugepages/hugepages-<kB>kB/nr_hugepages): part of the
 * node's capacity, and kept out of its memory allocatable. Read like the
 * CPU and memory defaults above, from the machine; empty where the kernel
 * has none.
 */
export function machineHugePages(root = '/sys/kernel/mm/hugepages'): Record<string, number> {
  const out: Record<string, number> = {};
  let dirs: string[];
  try {
    dirs = readdirSync(root);
  } catch {
    return out;
  }
  for (const d of dirs) {
    const kb = Number(/^hugepages-(\d+)kB$/.exec(d)?.[1]);
    if (!kb) continue;
    let pages = 0;
    try {
      pages = Number(readFileSync(`${root}/${d}/nr_hugepages`, 'utf8').trim()) || 0;
    } catch {
      // unreadable: none
    }
    const name = kb % 1_048_576 === 0 ? `${kb / 1_048_576}Gi` : kb % 1024 === 0 ? `${kb / 1024}Mi` : `${kb}Ki`;
    out[`hugepages-${name}`] = pages * kb * 1024;
  }
  return out;
}

/**
 * Whether the machine enforces AppArmor, as the kubelet's AppArmor
 * validator asks once at start (pkg/security/apparmor validateHost, over
 * libcontainer's apparmor.IsEnabled: /sys/kernel/security/apparmor exists
 * and /sys/module/apparmor/parameters/enabled starts with "Y"): its error
 * when it does not, for the sync loop's admission.
 */
export function machineAppArmor(securityfs = '/sys/kernel/security/apparmor', enabledFile = '/sys/module/apparmor/parameters/enabled'): { hostError?: string } {
  try {
    readdirSync(securityfs);
    if (readFileSync(enabledFile, 'utf8').startsWith('Y')) return {};
  } catch {
    // no AppArmor filesystem or module parameter: not enabled
  }
  return { hostError: 'AppArmor is not enabled on the host' };
}
