import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, ContainerPort, NodeSelectorTerm, Pod } from '@app/contracts';
import { AdmitReason, canAdmitPod, nodeInfoFrom, type AdmitResult, type NodeInfo } from './admission.js';
import { SysctlAllowlist, safeSysctlAllowlist } from './sysctl.js';
import { QuantityError } from './quantity.js';
import { goArch } from './node-labels.js';

let seq = 0;

interface PodOpts {
  cpu?: string;
  memory?: string;
  labels?: Record<string, string>;
  os?: string;
  nodeSelector?: Record<string, string>;
  nodeName?: string;
  terms?: NodeSelectorTerm[];
  ports?: ContainerPort[];
  hostNetwork?: boolean;
  initContainers?: Container[];
}

function mkPod(o: PodOpts = {}): Pod {
  seq++;
  const requests: Record<string, string> = { ...(o.cpu !== undefined && { cpu: o.cpu }), ...(o.memory !== undefined && { memory: o.memory }) };
  const spec: Pod['spec'] = {
    containers: [{ name: 'app', image: 'busybox', resources: { requests }, ...(o.ports && { ports: o.ports }) }],
    ...(o.initContainers && { initContainers: o.initContainers }),
    ...(o.os !== undefined && { os: { name: o.os } }),
    ...(o.nodeSelector && { nodeSelector: o.nodeSelector }),
    ...(o.nodeName !== undefined && { nodeName: o.nodeName }),
    ...(o.hostNetwork !== undefined && { hostNetwork: o.hostNetwork }),
    ...(o.terms && { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: o.terms } } } }),
  };
  return { metadata: { name: `pod-${seq}`, namespace: 'default', uid: `uid-${seq}`, ...(o.labels && { labels: o.labels }) }, spec };
}

/** A 4-core, 8Gi, 3-pod node with a zone label. */
const node: NodeInfo = nodeInfoFrom({ name: 'node-a', cpu: '4', memory: '8Gi', maxPods: 3, labels: { 'topology.kubernetes.io/zone': 'z1', 'example.com/gpus': '2' } });

const ADMIT: AdmitResult = { admit: true };
const Gi = 1024 ** 3;

function rejected(reason: string, message: string): AdmitResult {
  return { admit: false, reason, message };
}

const affinityFailed = rejected('NodeAffinity', "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector");
const portsFailed = (ports: string): AdmitResult =>
  rejected('NodePorts', `Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports (${ports})`);

interface Case {
  name: string;
  active?: Pod[];
  pod: Pod;
  node?: NodeInfo;
  want: AdmitResult;
}

function run(cases: Case[]): void {
  for (const tc of cases) {
    it(tc.name, () => assert.deepEqual(canAdmitPod(tc.active ?? [], tc.pod, tc.node ?? node), tc.want));
  }
}

describe('canAdmitPod: pod OS', () => {
  run([
    { name: 'a pod with no OS opinion is admitted', pod: mkPod(), want: ADMIT },
    { name: 'kubernetes.io/os pod label naming the node OS is admitted', pod: mkPod({ labels: { 'kubernetes.io/os': 'linux' } }), want: ADMIT },
    {
      name: 'kubernetes.io/os pod label naming another OS is rejected',
      pod: mkPod({ labels: { 'kubernetes.io/os': 'windows' } }),
      want: rejected('PodOSSelectorNodeLabelDoesNotMatch', "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"),
    },
    {
      name: "the OS label is compared with the kubelet's own OS, whatever the node label says",
      pod: mkPod({ labels: { 'kubernetes.io/os': 'linux' } }),
      node: { ...node, labels: { ...node.labels, 'kubernetes.io/os': 'windows' } },
      want: ADMIT,
    },
    { name: 'spec.os naming the node OS is admitted', pod: mkPod({ os: 'linux' }), want: ADMIT },
    {
      name: 'spec.os naming another OS is rejected',
      pod: mkPod({ os: 'windows' }),
      want: rejected('PodOSNotSupported', "Failed to admit pod as the OS field doesn't match node OS"),
    },
    {
      name: 'the OS label is checked before spec.os',
      pod: mkPod({ labels: { 'kubernetes.io/os': 'windows' }, os: 'windows' }),
      want: rejected('PodOSSelectorNodeLabelDoesNotMatch', "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"),
    },
    {
      name: 'the OS is checked before resources',
      active: [mkPod(), mkPod(), mkPod()],
      pod: mkPod({ os: 'windows', cpu: '100' }),
      want: rejected('PodOSNotSupported', "Failed to admit pod as the OS field doesn't match node OS"),
    },
    {
      name: 'a kubernetes.io/os nodeSelector is node affinity, not the OS check',
      pod: mkPod({ nodeSelector: { 'kubernetes.io/os': 'windows' } }),
      want: affinityFailed,
    },
  ]);
});

describe('canAdmitPod: supplementalGroupsPolicy (rejectPodAdmissionBasedOnSupplementalGroupsPolicy)', () => {
  const withPolicy = (policy: string, o: PodOpts = {}): Pod => {
    const p = mkPod(o);
    p.spec.securityContext = { supplementalGroups: [1000], supplementalGroupsPolicy: policy } as Pod['spec']['securityContext'];
    return p;
  };
  const notSupported = rejected('SupplementalGroupsPolicyNotSupported', 'SupplementalGroupsPolicy=Strict is not supported in this node');
  run([
    { name: 'Strict on a runtime that honours it (containerd 2) is admitted', pod: withPolicy('Strict'), node: { ...node, supplementalGroupsPolicy: true }, want: ADMIT },
    { name: 'Strict on a runtime that says nothing of it (containerd 1.6) is rejected', pod: withPolicy('Strict'), node: { ...node, supplementalGroupsPolicy: false }, want: notSupported },
    { name: 'Strict where the runtime has not been heard yet is rejected, as on a Node without features', pod: withPolicy('Strict'), want: notSupported },
    { name: 'Merge needs nothing of the runtime', pod: withPolicy('Merge'), node: { ...node, supplementalGroupsPolicy: false }, want: ADMIT },
    {
      name: 'checked after the OS, before resources',
      active: [mkPod(), mkPod(), mkPod()],
      pod: withPolicy('Strict', { cpu: '100' }),
      want: notSupported,
    },
    { name: 'the OS first', pod: withPolicy('Strict', { os: 'windows' }), want: rejected('PodOSNotSupported', "Failed to admit pod as the OS field doesn't match node OS") },
  ]);
});

describe('canAdmitPod: resources', () => {
  run([
    { name: 'room for one more pod', active: [mkPod(), mkPod()], pod: mkPod(), want: ADMIT },
    {
      name: 'max pods reached',
      active: [mkPod(), mkPod(), mkPod()],
      pod: mkPod(),
      want: rejected('OutOfpods', "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"),
    },
    { name: 'cpu that exactly fits', active: [mkPod({ cpu: '3500m' })], pod: mkPod({ cpu: '500m' }), want: ADMIT },
    {
      name: 'cpu one millicore short',
      active: [mkPod({ cpu: '3500m' })],
      pod: mkPod({ cpu: '600m' }),
      want: rejected('OutOfcpu', "Node didn't have enough resource: cpu, requested: 600, used: 3500, capacity: 4000"),
    },
    { name: 'memory that exactly fits', active: [mkPod({ memory: '6Gi' })], pod: mkPod({ memory: '2Gi' }), want: ADMIT },
    {
      name: 'memory short',
      active: [mkPod({ memory: '6Gi' })],
      pod: mkPod({ memory: '3Gi' }),
      want: rejected('OutOfmemory', `Node didn't have enough resource: memory, requested: ${3 * Gi}, used: ${6 * Gi}, capacity: ${8 * Gi}`),
    },
    {
      name: 'cpu and memory both short: cpu is reported',
      active: [mkPod({ cpu: '4', memory: '8Gi' })],
      pod: mkPod({ cpu: '1', memory: '1Gi' }),
      want: rejected('OutOfcpu', "Node didn't have enough resource: cpu, requested: 1000, used: 4000, capacity: 4000"),
    },
    {
      name: 'pods and cpu both short: pods is reported',
      active: [mkPod({ cpu: '4' }), mkPod(), mkPod()],
      pod: mkPod({ cpu: '1' }),
      want: rejected('OutOfpods', "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"),
    },
    { name: 'a pod asking for nothing fits an overcommitted node', active: [mkPod({ cpu: '8', memory: '16Gi' })], pod: mkPod(), want: ADMIT },
    { name: 'a memory-only pod ignores a full cpu', active: [mkPod({ cpu: '8' })], pod: mkPod({ memory: '1Gi' }), want: ADMIT },
    {
      name: "active pods' sidecars count toward used",
      active: [mkPod({ cpu: '3', initContainers: [{ name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '500m' } } }] })],
      pod: mkPod({ cpu: '600m' }),
      want: rejected('OutOfcpu', "Node didn't have enough resource: cpu, requested: 600, used: 3500, capacity: 4000"),
    },
    {
      name: "active pods' limits count as their requests",
      active: [{ metadata: { name: 'lim', uid: 'lim' }, spec: { containers: [{ name: 'c', resources: { limits: { cpu: '3500m' } } }] } }],
      pod: mkPod({ cpu: '600m' }),
      want: rejected('OutOfcpu', "Node didn't have enough resource: cpu, requested: 600, used: 3500, capacity: 4000"),
    },
    {
      name: "the candidate's init container peak is what it requests",
      pod: mkPod({ cpu: '100m', initContainers: [{ name: 'big-init', resources: { requests: { cpu: '5' } } }] }),
      want: rejected('OutOfcpu', "Node didn't have enough resource: cpu, requested: 5000, used: 0, capacity: 4000"),
    },
  ]);

  it('throws QuantityError on a malformed request', () => {
    assert.throws(() => canAdmitPod([], mkPod({ memory: '1GB' }), node), QuantityError);
  });
});

describe('canAdmitPod: node selector and node affinity', () => {
  const expr = (key: string, operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt', values?: string[]): NodeSelectorTerm => ({
    matchExpressions: [{ key, operator, ...(values && { values }) }],
  });
  run([
    { name: 'nodeSelector matching the node labels', pod: mkPod({ nodeSelector: { 'topology.kubernetes.io/zone': 'z1', 'kubernetes.io/hostname': 'node-a' } }), want: ADMIT },
    { name: 'nodeSelector with a different value', pod: mkPod({ nodeSelector: { 'topology.kubernetes.io/zone': 'z2' } }), want: affinityFailed },
    { name: 'nodeSelector on a label the node lacks', pod: mkPod({ nodeSelector: { disktype: 'ssd' } }), want: affinityFailed },
    { name: 'nodeSelector on the default os label', pod: mkPod({ nodeSelector: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' } }), want: ADMIT },
    {
      name: 'resources are reported before node affinity',
      active: [mkPod({ cpu: '4' })],
      pod: mkPod({ cpu: '1', nodeSelector: { disktype: 'ssd' } }),
      want: rejected('OutOfcpu', "Node didn't have enough resource: cpu, requested: 1000, used: 4000, capacity: 4000"),
    },
    { name: 'In: the value is listed', pod: mkPod({ terms: [expr('topology.kubernetes.io/zone', 'In', ['z0', 'z1'])] }), want: ADMIT },
    { name: 'In: the value is not listed', pod: mkPod({ terms: [expr('topology.kubernetes.io/zone', 'In', ['z2'])] }), want: affinityFailed },
    { name: 'In: the label is missing', pod: mkPod({ terms: [expr('disktype', 'In', ['ssd'])] }), want: affinityFailed },
    { name: 'NotIn: the value is not listed', pod: mkPod({ terms: [expr('topology.kubernetes.io/zone', 'NotIn', ['z2'])] }), want: ADMIT },
    { name: 'NotIn: the label is missing', pod: mkPod({ terms: [expr('disktype', 'NotIn', ['hdd'])] }), want: ADMIT },
    { name: 'NotIn: the value is listed', pod: mkPod({ terms: [expr('topology.kubernetes.io/zone', 'NotIn', ['z1'])] }), want: affinityFailed },
    { name: 'Exists: the label is there', pod: mkPod({ terms: [expr('topology.kubernetes.io/zone', 'Exists')] }), want: ADMIT },
    { name: 'Exists: the label is missing', pod: mkPod({ terms: [expr('disktype', 'Exists')] }), want: affinityFailed },
    { name: 'DoesNotExist: the label is missing', pod: mkPod({ terms: [expr('disktype', 'DoesNotExist')] }), want: ADMIT },
    { name: 'DoesNotExist: the label is there', pod: mkPod({ terms: [expr('topology.kubernetes.io/zone', 'DoesNotExist')] }), want: affinityFailed },
    { name: 'Gt: the label is greater', pod: mkPod({ terms: [expr('example.com/gpus', 'Gt', ['1'])] }), want: ADMIT },
    { name: 'Gt: the label is not greater', pod: mkPod({ terms: [expr('example.com/gpus', 'Gt', ['2'])] }), want: affinityFailed },
    { name: 'Lt: the label is less', pod: mkPod({ terms: [expr('example.com/gpus', 'Lt', ['3'])] }), want: ADMIT },
    { name: 'Lt: the label is not a number', pod: mkPod({ terms: [expr('topology.kubernetes.io/zone', 'Lt', ['3'])] }), want: affinityFailed },
    {
      name: 'terms are ORed: one matching is enough',
      pod: mkPod({ terms: [expr('disktype', 'In', ['ssd']), expr('topology.kubernetes.io/zone', 'In', ['z1'])] }),
      want: ADMIT,
    },
    {
      name: 'expressions in a term are ANDed',
      pod: mkPod({
        terms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['z1'] }, { key: 'disktype', operator: 'Exists' }] }],
      }),
      want: affinityFailed,
    },
    { name: 'no terms match no node', pod: mkPod({ terms: [] }), want: affinityFailed },
    { name: 'an empty term matches no node', pod: mkPod({ terms: [{}] }), want: affinityFailed },
    {
      name: 'an invalid term (In without values) is skipped, the next one can still match',
      pod: mkPod({ terms: [expr('topology.kubernetes.io/zone', 'In', []), expr('kubernetes.io/hostname', 'Exists')] }),
      want: ADMIT,
    },
    { name: 'matchFields metadata.name In this node', pod: mkPod({ terms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] }] }), want: ADMIT },
    {
      name: 'matchFields metadata.name NotIn this node',
      pod: mkPod({ terms: [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-a'] }] }] }),
      want: affinityFailed,
    },
    {
      name: 'nodeSelector and affinity must both match',
      pod: mkPod({ nodeSelector: { disktype: 'ssd' }, terms: [expr('topology.kubernetes.io/zone', 'Exists')] }),
      want: affinityFailed,
    },
  ]);
});

describe('canAdmitPod: node name', () => {
  run([
    { name: 'nodeName of this node', pod: mkPod({ nodeName: 'node-a' }), want: ADMIT },
    {
      name: 'nodeName of another node',
      pod: mkPod({ nodeName: 'node-b' }),
      want: rejected('NodeName', "Predicate NodeName failed: node(s) didn't match the requested node name"),
    },
    { name: 'node affinity is reported before node name', pod: mkPod({ nodeName: 'node-b', nodeSelector: { disktype: 'ssd' } }), want: affinityFailed },
  ]);
});

describe('canAdmitPod: host ports', () => {
  const hp = (hostPort: number, more: Partial<ContainerPort> = {}): ContainerPort[] => [{ containerPort: 80, hostPort, ...more }];
  run([
    { name: 'a free host port', active: [mkPod({ ports: hp(8080) })], pod: mkPod({ ports: hp(9090) }), want: ADMIT },
    { name: 'the same port taken', active: [mkPod({ ports: hp(8080) })], pod: mkPod({ ports: hp(8080) }), want: portsFailed('8080/TCP') },
    { name: 'the same port on another protocol', active: [mkPod({ ports: hp(53) })], pod: mkPod({ ports: hp(53, { protocol: 'UDP' }) }), want: ADMIT },
    {
      name: 'the same port on two different host IPs',
      active: [mkPod({ ports: hp(8080, { hostIP: '10.0.0.1' }) })],
      pod: mkPod({ ports: hp(8080, { hostIP: '10.0.0.2' }) }),
      want: ADMIT,
    },
    {
      name: 'the same port on the same host IP',
      active: [mkPod({ ports: hp(8080, { hostIP: '10.0.0.1' }) })],
      pod: mkPod({ ports: hp(8080, { hostIP: '10.0.0.1' }) }),
      want: portsFailed('10.0.0.1:8080/TCP'),
    },
    { name: 'a specific IP against 0.0.0.0', active: [mkPod({ ports: hp(8080) })], pod: mkPod({ ports: hp(8080, { hostIP: '10.0.0.1' }) }), want: portsFailed('10.0.0.1:8080/TCP') },
    { name: '0.0.0.0 against a specific IP', active: [mkPod({ ports: hp(8080, { hostIP: '10.0.0.1' }) })], pod: mkPod({ ports: hp(8080) }), want: portsFailed('8080/TCP') },
    { name: ':: binds every address too', active: [mkPod({ ports: hp(8080, { hostIP: '10.0.0.1' }) })], pod: mkPod({ ports: hp(8080, { hostIP: '::' }) }), want: portsFailed('8080/TCP') },
    {
      name: "a hostNetwork pod's container port is taken",
      active: [mkPod({ hostNetwork: true, ports: [{ containerPort: 9100 }] })],
      pod: mkPod({ ports: hp(9100) }),
      want: portsFailed('9100/TCP'),
    },
    { name: 'a container port without a host port takes nothing', active: [mkPod({ ports: [{ containerPort: 9100 }] })], pod: mkPod({ ports: hp(9100) }), want: ADMIT },
    {
      name: "an active pod's sidecar port is taken",
      active: [mkPod({ initContainers: [{ name: 'proxy', restartPolicy: 'Always', ports: [{ containerPort: 15001, hostPort: 15001 }] }] })],
      pod: mkPod({ ports: hp(15001) }),
      want: portsFailed('15001/TCP'),
    },
    {
      name: "an active pod's finished init container holds no port",
      active: [mkPod({ initContainers: [{ name: 'setup', ports: [{ containerPort: 1, hostPort: 7000 }] }] })],
      pod: mkPod({ ports: hp(7000) }),
      want: ADMIT,
    },
    {
      name: 'every clashing port is named',
      active: [mkPod({ ports: [{ containerPort: 1, hostPort: 80 }, { containerPort: 2, hostPort: 53, protocol: 'UDP' }] })],
      pod: mkPod({ ports: [{ containerPort: 1, hostPort: 80 }, { containerPort: 2, hostPort: 443 }, { containerPort: 3, hostPort: 53, protocol: 'UDP' }] }),
      want: portsFailed('80/TCP, 53/UDP'),
    },
    {
      name: 'node name is reported before host ports',
      active: [mkPod({ ports: hp(8080) })],
      pod: mkPod({ nodeName: 'node-b', ports: hp(8080) }),
      want: rejected('NodeName', "Predicate NodeName failed: node(s) didn't match the requested node name"),
    },
  ]);
});

describe('AdmitReason', () => {
  it('spells the reasons as the kubelet does', () => {
    assert.deepEqual(Object.values(AdmitReason), [
      'PodOSSelectorNodeLabelDoesNotMatch',
      'PodOSNotSupported',
      'SysctlForbidden',
      'OutOfpods',
      'OutOfcpu',
      'OutOfmemory',
      'NodeAffinity',
      'NodeName',
      'NodePorts',
      'AppArmor',
      'SupplementalGroupsPolicyNotSupported',
    ]);
  });
});

describe('nodeInfoFrom', () => {
  const cases: { name: string; opts: Parameters<typeof nodeInfoFrom>[0]; want: NodeInfo }[] = [
    {
      name: 'default labels and parsed allocatable',
      opts: { name: 'n1', cpu: '2', memory: '4Gi', maxPods: 110 },
      want: {
        name: 'n1',
        // initialNode's labels, the beta ones included; the arch is the machine's (GOARCH).
        labels: { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': goArch(), 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': goArch() },
        allocatable: { cpuMillis: 2000, memoryBytes: 4 * Gi, pods: 110 },
        os: 'linux',
        sysctls: new SysctlAllowlist(safeSysctlAllowlist()),
      },
    },
    {
      name: 'given labels add to and override the defaults',
      opts: { name: 'n1', cpu: '1500m', memory: '1G', maxPods: 10, labels: { 'kubernetes.io/arch': 'arm64', zone: 'a' } },
      want: {
        name: 'n1',
        labels: { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'arm64', 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': goArch(), zone: 'a' },
        allocatable: { cpuMillis: 1500, memoryBytes: 1_000_000_000, pods: 10 },
        os: 'linux',
        sysctls: new SysctlAllowlist(safeSysctlAllowlist()),
      },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.deepEqual(nodeInfoFrom(tc.opts), tc.want));
  }

  it('rejects a malformed capacity', () => {
    assert.throws(() => nodeInfoFrom({ name: 'n1', cpu: 'two', memory: '1Gi', maxPods: 1 }), QuantityError);
  });
});
