/**
 * The labels the kubelet puts on its own Node (kubelet_node_status.go
 * initialNode and updateDefaultLabels), one home for the Node
 * (status-manager) and nodeSelector admission (sync-loop).
 */

export const LabelHostname = 'kubernetes.io/hostname';
export const LabelOSStable = 'kubernetes.io/os';
export const LabelArchStable = 'kubernetes.io/arch';
/** kubeletapis.LabelOS / LabelArch: deprecated, still set by upstream's initialNode. */
export const LabelOSBeta = 'beta.kubernetes.io/os';
export const LabelArchBeta = 'beta.kubernetes.io/arch';

/** The labels updateDefaultLabels keeps in line with the kubelet's own on an existing Node. */
export const DEFAULT_NODE_LABELS: readonly string[] = [
  LabelHostname,
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'beta.kubernetes.io/instance-type',
  LabelOSStable,
  LabelArchStable,
  'node.kubernetes.io/windows-build',
  LabelOSBeta,
  LabelArchBeta,
];

const GOARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64', loong64: 'loong64', mips: 'mips', mipsel: 'mipsle' };

/** runtime.GOARCH for Node's process.arch. */
export function goArch(arch: string = process.arch): string {
  return GOARCH[arch] ?? arch;
}

/** initialNode's labels: hostname, os and arch (stable and beta), then the configured ones over them (--node-labels). */
export function nodeLabels(hostname: string, extra: Record<string, string> = {}, arch = goArch()): Record<string, string> {
  return {
    [LabelHostname]: hostname,
    [LabelOSStable]: 'linux',
    [LabelArchStable]: arch,
    [LabelOSBeta]: 'linux',
    [LabelArchBeta]: arch,
    ...extra,
  };
}
