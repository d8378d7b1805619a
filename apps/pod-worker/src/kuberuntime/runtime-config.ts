/**
 * The CRI configs the kubelet's runtime manager builds from a pod
 * (kuberuntime_sandbox.go generatePodSandboxConfig, kuberuntime_container.go
 * generateContainerConfig, kubelet_pods.go makeEnvironmentVariables), pure:
 * everything that depends on the node comes in as arguments.
 */
import { join } from 'node:path';
import type { Container, Pod } from '@app/contracts';
import type { ContainerConfig, CriInput, KeyValue, PodSandboxConfig, PortMapping } from '@app/cri';
import { KubeletAnnotations, KubeletLabels, checkSubPath, cpuMillis, expand, expandContainerVolumeMounts, extractFieldPathAsString, isObjectFieldPath, mappingFuncFor, memoryBytes, normalizeSysctlName } from '@app/kube';
import { ETC_HOSTS_PATH, containerMountsEtcHosts, podHostnameAndDomain } from '../etc-hosts.js';
import { getPodDNS, type DNSConfig } from '../network/dns.js';
import type { ApiObjectPayload } from '../ports.js';
import { containerSecurityContext, podSupplementalGroups, type ImageUser } from './security-context.js';
import { resourceFieldValue, volumeHostPath, type NodeAllocatable } from '../volumemanager/volumes.js';

/** The kubelet's defaults for CFS (quota period 100ms) and shares. */
const CPU_PERIOD_US = 100_000;
const MIN_SHARES = 2;
const SHARES_PER_CPU = 1024;

export interface NodeFacts {
  nodeName: string;
  hostIP: string;
  /** Where pod log directories go (the kubelet's /var/log/pods). */
  logRoot: string;
  /** Where each pod's directory is (the kubelet's /var/lib/kubelet/pods). */
  podRoot: string;
  /** The host's resolv.conf, for pods that use the node's DNS (and the search paths after the cluster's). */
  hostDns: DNSConfig;
  /** runtimeHelper.GetPodCgroupParent: the pod's cgroup (`/kubepods/burstable/pod<uid>`), the sandbox's cgroup parent; none: the runtime's default. */
  podCgroupParent?: (pod: Pod) => string;
  /** --cluster-dns (clusterDNS): the nameservers of ClusterFirst pods; none or empty: they use the node's DNS (MissingClusterDNS). */
  clusterDns?: readonly string[];
  /** --cluster-domain (clusterDomain): ClusterFirst pods' search paths, a pod's subdomain in its /etc/hosts; none: neither. */
  clusterDomain?: string;
  /** Where Localhost seccomp profiles are (the kubelet's <root-dir>/seccomp); default: `seccomp` beside podRoot. */
  seccompProfileRoot?: string;
  /** The host's /sys/devices/system/cpu/cpu<N>/thermal_throttle that exist, masked in every unprivileged container as upstream does. */
  hostMaskedPaths?: readonly string[];
  /** What a container's unset CPU or memory limit reads as in a resourceFieldRef env variable (the node's allocatable amounts). */
  allocatable?: NodeAllocatable;
}

/** A container's directory in its pod's (upstream's PodContainerDir: `<pod dir>/containers/<name>`), where its termination message files go. */
export function podContainerDirectory(pod: Pod, container: string, podRoot: string): string {
  return join(podRoot, pod.metadata.uid ?? '', 'containers', container);
}

/** `/var/log/pods/<namespace>_<name>_<uid>` */
export function podLogDirectory(pod: Pod, logRoot: string): string {
  return join(logRoot, `${pod.metadata.namespace ?? 'default'}_${pod.metadata.name ?? ''}_${pod.metadata.uid ?? ''}`);
}

/** The directory of an emptyDir volume of a pod. */
export function emptyDirPath(pod: Pod, volume: string, podRoot: string): string {
  return join(podRoot, pod.metadata.uid ?? '', 'volumes', 'kubernetes.io~empty-dir', volume);
}

export function podLabels(pod: Pod, nodeName: string): Record<string, string> {
  return {
    ...(pod.metadata.labels ?? {}),
    [KubeletLabels.node]: nodeName,
    [KubeletLabels.podName]: pod.metadata.name ?? '',
    [KubeletLabels.podNamespace]: pod.metadata.namespace ?? '',
    [KubeletLabels.podUid]: pod.metadata.uid ?? '',
  };
}

function namespaceOptions(pod: Pod) {
  return {
    network: pod.spec.hostNetwork ? ('NODE' as const) : ('POD' as const),
    pid: pod.spec.hostPID ? ('NODE' as const) : ('CONTAINER' as const),
    ipc: pod.spec.hostIPC ? ('NODE' as const) : ('POD' as const),
  };
}

/**
 * generatePodSandboxConfig; `dns`: the pod's (GetPodDNS), made here when the caller has not (it records GetPodDNS's warnings).
 * Throws when the pod's FQDN hostname is too long (GetNodenameForKernel).
 */
export function generatePodSandboxConfig(pod: Pod, attempt: number, node: NodeFacts, dns: DNSConfig = getPodDNS(pod, node).config): CriInput<PodSandboxConfig> {
  const portMappings: CriInput<PortMapping>[] = [];
  for (const c of pod.spec.containers) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      portMappings.push({ protocol: toRuntimeProtocol(p.protocol), containerPort: p.containerPort, hostPort: p.hostPort, ...(p.hostIP ? { hostIp: p.hostIP } : {}) });
    }
  }
  // HasPrivilegedContainer: every kind of container, ephemeral ones included.
  const privileged = [...pod.spec.containers, ...(pod.spec.initContainers ?? []), ...(pod.spec.ephemeralContainers ?? [])].some((c) => c.securityContext?.privileged === true);
  const psc = pod.spec.securityContext;
  return {
    metadata: { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid: pod.metadata.uid ?? '', attempt },
    // A hostNetwork sandbox shares the node's UTS namespace: runc refuses a hostname there, and so does the kubelet.
    ...(pod.spec.hostNetwork ? {} : { hostname: nodenameForKernel(pod, node.clusterDomain) }),
    logDirectory: podLogDirectory(pod, node.logRoot),
    dnsConfig: dns,
    portMappings,
    labels: podLabels(pod, node.nodeName),
    annotations: { ...(pod.metadata.annotations ?? {}) },
    linux: {
      cgroupParent: node.podCgroupParent?.(pod) ?? '',
      securityContext: {
        namespaceOptions: namespaceOptions(pod),
        privileged,
        // Forced to RuntimeDefault, so that pods may use least-privileged profiles (kubernetes#84623).
        seccomp: { profileType: 'RuntimeDefault' },
        ...(psc?.runAsUser !== undefined ? { runAsUser: { value: String(psc.runAsUser) } } : {}),
        ...(psc?.runAsGroup !== undefined ? { runAsGroup: { value: String(psc.runAsGroup) } } : {}),
        ...podSupplementalGroups(pod),
        ...(psc?.seLinuxOptions ? { selinuxOptions: { user: psc.seLinuxOptions.user ?? '', role: psc.seLinuxOptions.role ?? '', type: psc.seLinuxOptions.type ?? '', level: psc.seLinuxOptions.level ?? '' } } : {}),
      },
      // ConvertPodSysctlsVariableToDotsSeparator: runc checks a sysctl's namespace by its dotted name.
      sysctls: Object.fromEntries((psc?.sysctls ?? []).map((s) => [normalizeSysctlName(s.name), s.value])),
    },
  };
}

/** FQDN has to fit the Linux nodename kernel field (64 characters and the terminating NUL). */
const FQDN_MAX_LEN = 64;

/**
 * GetNodenameForKernel: the sandbox's hostname, `<hostname>.<subdomain>.<ns>.svc.<cluster domain>`
 * with setHostnameAsFQDN and a subdomain. Throws when that FQDN is over 64 characters.
 */
function nodenameForKernel(pod: Pod, clusterDomain: string | undefined): string {
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  if (!domain || pod.spec.setHostnameAsFQDN !== true) return hostname;
  const fqdn = `${hostname}.${domain}`;
  if (fqdn.length > FQDN_MAX_LEN) throw new Error(`failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${FQDN_MAX_LEN} characters is the max, ${fqdn.length} characters requested)`);
  return fqdn;
}

/** kuberuntime toRuntimeProtocol: validation admits only these three; the API defaults to TCP. */
function toRuntimeProtocol(protocol: string | undefined): NonNullable<PortMapping['protocol']> {
  return protocol === 'UDP' || protocol === 'SCTP' ? protocol : 'TCP';
}

/**
 * The configMaps and secrets a container's env and envFrom name, as read
 * for this start (through config-source): undefined when it does not exist.
 */
export interface EnvObjects {
  configMaps: ReadonlyMap<string, ApiObjectPayload | undefined>;
  secrets: ReadonlyMap<string, ApiObjectPayload | undefined>;
  /** The service environment variables (getServiceEnvVarMap); none: no services (a node without an apiserver). */
  services?: ReadonlyMap<string, string>;
}

const NO_ENV_OBJECTS: EnvObjects = { configMaps: new Map(), secrets: new Map() };

/** The configMaps and secrets a container's env and envFrom name, to be read before its config is made. */
export function envObjectNames(c: Container): { configMaps: string[]; secrets: string[] } {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  for (const f of c.envFrom ?? []) {
    if (f.configMapRef) configMaps.add(f.configMapRef.name ?? '');
    if (f.secretRef) secrets.add(f.secretRef.name ?? '');
  }
  for (const e of c.env ?? []) {
    if (e.value) continue;
    if (e.valueFrom?.configMapKeyRef) configMaps.add(e.valueFrom.configMapKeyRef.name ?? '');
    if (e.valueFrom?.secretKeyRef) secrets.add(e.valueFrom.secretKeyRef.name ?? '');
  }
  return { configMaps: [...configMaps], secrets: [...secrets] };
}

/**
 * makeEnvironmentVariables: envFrom first (a configMap's data, a secret's
 * decoded data, each key with the prefix), then env in order, which
 * overrides: a value with $(VAR) expanded (from the container's variables,
 * then the services'), or a fieldRef, a resourceFieldRef (the container's own
 * when it names none; an unset limit is the node's allocatable), a configMapKeyRef
 * or a secretKeyRef. A missing object or key is upstream's error unless the
 * reference is optional (then the variable is left out). Then the service
 * variables the container does not set itself. Throws the error.
 */
export function containerEnv(pod: Pod, c: Container, podIPs: string[], node: NodeFacts, objects: EnvObjects = NO_ENV_OBJECTS): KeyValue[] {
  const ns = pod.metadata.namespace ?? 'default';
  const resolved = new Map<string, string>();
  const lookup = (kind: 'ConfigMap' | 'Secret', name: string, optional: boolean): ApiObjectPayload | undefined => {
    const obj = (kind === 'ConfigMap' ? objects.configMaps : objects.secrets).get(name);
    if (obj || optional) return obj;
    throw new Error(`${kind === 'ConfigMap' ? 'configmap' : 'secret'} "${name}" not found`);
  };
  const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
  const serviceEnv = objects.services ?? new Map<string, string>();
  for (const f of c.envFrom ?? []) {
    const prefix = f.prefix ?? '';
    if (f.configMapRef) {
      const cm = lookup('ConfigMap', f.configMapRef.name ?? '', f.configMapRef.optional === true);
      for (const [k, v] of Object.entries(cm?.data ?? {})) resolved.set(prefix + k, v);
    } else if (f.secretRef) {
      const secret = lookup('Secret', f.secretRef.name ?? '', f.secretRef.optional === true);
      for (const [k, v] of Object.entries(secret?.data ?? {})) resolved.set(prefix + k, decode(v));
    }
  }
  for (const e of c.env ?? []) {
    let value = e.value ?? '';
    const from = e.valueFrom;
    if (value !== '' || !from) value = expand(value, mappingFuncFor(resolved, serviceEnv));
    else if (from.fieldRef) value = fieldValue(pod, from.fieldRef.fieldPath, podIPs, node) ?? '';
    else if (from.resourceFieldRef) {
      const ref = from.resourceFieldRef;
      value = resourceFieldValue(pod, { ...ref, containerName: ref.containerName || c.name }, node.allocatable ?? { cpuMillis: 0, memoryBytes: 0 });
    }
    else if (from.configMapKeyRef) {
      const ref = from.configMapKeyRef;
      const cm = lookup('ConfigMap', ref.name ?? '', ref.optional === true);
      if (!cm) continue;
      const v = cm.data[ref.key];
      if (v === undefined) {
        if (ref.optional === true) continue;
        throw new Error(`couldn't find key ${ref.key} in ConfigMap ${ns}/${ref.name ?? ''}`);
      }
      value = v;
    } else if (from.secretKeyRef) {
      const ref = from.secretKeyRef;
      const secret = lookup('Secret', ref.name ?? '', ref.optional === true);
      if (!secret) continue;
      const v = secret.data[ref.key];
      if (v === undefined) {
        if (ref.optional === true) continue;
        throw new Error(`couldn't find key ${ref.key} in Secret ${ns}/${ref.name ?? ''}`);
      }
      value = decode(v);
    }
    resolved.set(e.name, value);
  }
  // "Append remaining service env vars": the container's own of the same name win.
  const services = [...serviceEnv].filter(([key]) => !resolved.has(key));
  return [...resolved, ...services].map(([key, value]) => ({ key, value }));
}

function fieldValue(pod: Pod, path: string, podIPs: string[], node: NodeFacts): string | undefined {
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name;
    case 'metadata.namespace':
      return pod.metadata.namespace;
    case 'metadata.uid':
      return pod.metadata.uid;
    case 'spec.nodeName':
      return pod.spec.nodeName ?? node.nodeName;
    case 'status.podIP':
      return podIPs[0] ?? '';
    case 'status.podIPs':
      return podIPs.join(',');
    case 'status.hostIP':
      return node.hostIP;
    default:
      // One label or annotation (the whole maps are not an env var's: validation refuses them).
      return path.includes('[') && isObjectFieldPath(path) ? extractFieldPathAsString(pod, path) : undefined;
  }
}

/** The container's cgroup resources from its requests and limits (the kubelet's CFS quota and shares). */
export function containerResources(c: Container) {
  const req = c.resources?.requests ?? {};
  const lim = c.resources?.limits ?? {};
  const cpuRequest = req['cpu'] ?? lim['cpu'];
  const cpuLimit = lim['cpu'];
  const memLimit = lim['memory'];
  const shares = cpuRequest ? Math.max(MIN_SHARES, Math.floor((cpuMillis(cpuRequest) * SHARES_PER_CPU) / 1000)) : MIN_SHARES;
  return {
    // int64 fields: decimal strings, as the CRI's JSON carries them.
    cpuShares: String(shares),
    cpuPeriod: String(cpuLimit ? CPU_PERIOD_US : 0),
    cpuQuota: String(cpuLimit ? Math.max(1000, Math.floor((cpuMillis(cpuLimit) * CPU_PERIOD_US) / 1000)) : 0),
    memoryLimitInBytes: String(memLimit ? memoryBytes(memLimit) : 0),
  };
}

export interface ContainerConfigInput {
  pod: Pod;
  container: Container;
  restartCount: number;
  imageRef: string;
  podIPs: string[];
  hash: string;
  node: NodeFacts;
  /** The configMaps and secrets its env names (envObjectNames), read for this start. */
  envObjects?: EnvObjects;
  /** The image's user (ImageStatus), given as runAsUser when the pod names none; none: root. */
  imageUser?: ImageUser;
  /** The kubelet-managed hosts file on the host, written for this start (../etc-hosts.ts); none: the runtime's /etc/hosts. */
  etcHostsFile?: string;
  /** The empty file made for this instance's termination message (makeMounts), bind-mounted at terminationMessagePath. */
  terminationMessageFile?: string;
}

/**
 * generateContainerConfig. Throws when the container's env cannot be made
 * (a missing configMap or secret) or its security context is refused
 * (verifyRunAsNonRoot is the caller's): CreateContainerConfigError.
 */
export function generateContainerConfig(input: ContainerConfigInput): CriInput<ContainerConfig> {
  const { pod, container: c, restartCount, node } = input;
  const envs = containerEnv(pod, c, input.podIPs, node, input.envObjects);
  const envMap = new Map(envs.map((e) => [e.key ?? '', e.value ?? '']));
  const mapping = mappingFuncFor(envMap);
  const volumes = new Map((pod.spec.volumes ?? []).map((v) => [v.name, v]));
  const mounts = (c.volumeMounts ?? []).map((m) => {
    const v = volumes.get(m.name);
    // volumeHostPath is undefined only for a volume the volume manager refused: the container is never started then.
    const hostPath = (v ? volumeHostPath(pod, v, node.podRoot) : undefined) ?? emptyDirPath(pod, m.name, node.podRoot);
    // makeMounts: subPathExpr expanded with the container's variables, then the subPath checked (CreateContainerConfigError).
    const subPath = m.subPathExpr ? expandContainerVolumeMounts(m.subPathExpr, envMap) : (m.subPath ?? '');
    if (subPath) checkSubPath(subPath);
    return { containerPath: m.mountPath, hostPath: subPath ? join(hostPath, subPath) : hostPath, readonly: m.readOnly === true };
  });
  if (input.etcHostsFile && !containerMountsEtcHosts(c)) mounts.push({ containerPath: ETC_HOSTS_PATH, hostPath: input.etcHostsFile, readonly: false });
  if (input.terminationMessageFile && c.terminationMessagePath) mounts.push({ containerPath: c.terminationMessagePath, hostPath: input.terminationMessageFile, readonly: false });
  const securityContext = containerSecurityContext(pod, c, input.imageUser ?? {}, {
    seccompProfileRoot: node.seccompProfileRoot ?? join(node.podRoot, '..', 'seccomp'),
    ...(node.hostMaskedPaths ? { hostMaskedPaths: node.hostMaskedPaths } : {}),
  });
  return {
    metadata: { name: c.name, attempt: restartCount },
    image: { image: input.imageRef || (c.image ?? ''), userSpecifiedImage: c.image ?? '' },
    ...(c.command ? { command: c.command.map((x) => expand(x, mapping)) } : {}),
    ...(c.args ? { args: c.args.map((x) => expand(x, mapping)) } : {}),
    ...(c.workingDir ? { workingDir: c.workingDir } : {}),
    envs,
    mounts,
    labels: {
      [KubeletLabels.node]: node.nodeName,
      [KubeletLabels.podName]: pod.metadata.name ?? '',
      [KubeletLabels.podNamespace]: pod.metadata.namespace ?? '',
      [KubeletLabels.podUid]: pod.metadata.uid ?? '',
      [KubeletLabels.containerName]: c.name,
    },
    annotations: {
      [KubeletAnnotations.containerHash]: input.hash,
      [KubeletAnnotations.restartCount]: String(restartCount),
      [KubeletAnnotations.terminationMessagePath]: c.terminationMessagePath ?? '/dev/termination-log',
      [KubeletAnnotations.terminationMessagePolicy]: c.terminationMessagePolicy ?? 'File',
      [KubeletAnnotations.podTerminationGracePeriod]: String(pod.spec.terminationGracePeriodSeconds ?? 30),
      ...(c.lifecycle?.preStop ? { [KubeletAnnotations.preStopHandler]: JSON.stringify(c.lifecycle.preStop) } : {}),
      ...(c.ports?.length ? { [KubeletAnnotations.ports]: JSON.stringify(c.ports) } : {}),
    },
    logPath: join(c.name, `${restartCount}.log`),
    stdin: c.stdin === true,
    stdinOnce: c.stdinOnce === true,
    tty: c.tty === true,
    linux: {
      resources: containerResources(c),
      securityContext: { ...securityContext, namespaceOptions: namespaceOptions(pod) },
    },
  };
}

/**
 * generateLinuxContainerConfig's nsTarget: an ephemeral container with a
 * targetContainerName joins that container's process namespace (pid
 * TARGET, the target's runtime ID), unless the pod shares one namespace
 * across its containers already (shareProcessNamespace, hostPID).
 */
export function withNamespaceTarget(config: CriInput<ContainerConfig>, targetContainerId: string | undefined): CriInput<ContainerConfig> {
  const ns = config.linux?.securityContext?.namespaceOptions;
  if (!targetContainerId || !ns || ns.pid !== 'CONTAINER') return config;
  return { ...config, linux: { ...config.linux, securityContext: { ...config.linux?.securityContext, namespaceOptions: { ...ns, pid: 'TARGET', targetId: targetContainerId } } } };
}
