/**
 * A container's security context as the runtime gets it, pure: upstream's
 * pkg/securitycontext/util.go (DetermineEffectiveSecurityContext,
 * AddNoNewPrivileges, ConvertToRuntimeMaskedPaths / ReadonlyPaths) and
 * pkg/kubelet/kuberuntime/security_context.go
 * (determineEffectiveSecurityContext), security_context_others.go
 * (verifyRunAsNonRoot) and helpers.go (getSeccompProfile).
 *
 * The container's fields win over the pod's; the pod's only contribute
 * runAsUser, runAsGroup, runAsNonRoot and seLinuxOptions (and, on the
 * side, fsGroup and supplementalGroups as supplemental groups). When
 * neither sets runAsUser, the image's user is given (its uid, or its name
 * for the runtime to resolve; root when the image names none), as upstream
 * does, and runAsNonRoot is checked against it.
 */
import type { Container, Pod, SecurityContext } from '@app/contracts';
import type { CriInput, LinuxContainerSecurityContext, SecurityProfile } from '@app/cri';

/** The image's user as the runtime's ImageStatus gives it (getImageUser): a uid, or a name, or neither (root). */
export interface ImageUser {
  uid?: number;
  username?: string;
}

/** DetermineEffectiveSecurityContext: the container's fields over the pod's runAsUser, runAsGroup, runAsNonRoot, seLinuxOptions. */
export function determineEffectiveSecurityContext(pod: Pod, c: Container): SecurityContext {
  const psc = pod.spec.securityContext;
  const fromPod: SecurityContext = {
    ...(psc?.seLinuxOptions ? { seLinuxOptions: psc.seLinuxOptions } : {}),
    ...(psc?.runAsUser !== undefined ? { runAsUser: psc.runAsUser } : {}),
    ...(psc?.runAsGroup !== undefined ? { runAsGroup: psc.runAsGroup } : {}),
    ...(psc?.runAsNonRoot !== undefined ? { runAsNonRoot: psc.runAsNonRoot } : {}),
  };
  const own = Object.fromEntries(Object.entries(c.securityContext ?? {}).filter(([, v]) => v !== undefined && v !== null)) as SecurityContext;
  return { ...fromPod, ...own };
}

/** AddNoNewPrivileges: no_new_privs only when allowPrivilegeEscalation is explicitly false. */
export function addNoNewPrivileges(sc: SecurityContext): boolean {
  return sc.allowPrivilegeEscalation === false;
}

/** moby's defaults (oci/defaults.go), which upstream keeps in step with. */
const DEFAULT_MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/interrupts',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
const DEFAULT_READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/**
 * ConvertToRuntimeMaskedPaths: none with an Unmasked /proc, else moby's,
 * plus the host's per-CPU thermal_throttle directories that exist (the
 * caller lists them: they are the node's).
 */
export function runtimeMaskedPaths(procMount: string | undefined, hostMaskedPaths: readonly string[] = []): string[] {
  return procMount === 'Unmasked' ? [] : [...DEFAULT_MASKED_PATHS, ...hostMaskedPaths];
}

/** ConvertToRuntimeReadonlyPaths */
export function runtimeReadonlyPaths(procMount: string | undefined): string[] {
  return procMount === 'Unmasked' ? [] : [...DEFAULT_READONLY_PATHS];
}

/**
 * getSeccompProfile / fieldSeccompProfile: the container's profile, else
 * the pod's, else RuntimeDefault with SeccompDefault, else Unconfined.
 * Throws for a Localhost profile without its path.
 */
export function seccompProfile(pod: Pod, c: Container, profileRoot: string, seccompDefault = false): CriInput<SecurityProfile> {
  const field = c.securityContext?.seccompProfile ?? pod.spec.securityContext?.seccompProfile;
  if (!field) return { profileType: seccompDefault ? 'RuntimeDefault' : 'Unconfined' };
  switch (field.type) {
    case 'RuntimeDefault':
      return { profileType: 'RuntimeDefault' };
    case 'Localhost':
      if (!field.localhostProfile) throw new Error('localhostProfile must be set if seccompProfile type is Localhost.');
      return { profileType: 'Localhost', localhostRef: `${profileRoot.replace(/\/+$/, '')}/${field.localhostProfile}` };
    default:
      return { profileType: 'Unconfined' };
  }
}

/** PodSecurityContext.supplementalGroupsPolicy (v1.31, newer than the API types here). */
function supplementalGroupsPolicyOf(pod: Pod): 'Merge' | 'Strict' | undefined {
  const policy = (pod.spec.securityContext as { supplementalGroupsPolicy?: string } | undefined)?.supplementalGroupsPolicy;
  if (policy === undefined) return undefined;
  if (policy !== 'Merge' && policy !== 'Strict') throw new Error(`unsupported supplementalGroupsPolicy: ${policy}`);
  return policy;
}

/** The pod's fsGroup then supplementalGroups, as int64 strings, and its policy (the sandbox's and every container's). */
export function podSupplementalGroups(pod: Pod): { supplementalGroups: string[]; supplementalGroupsPolicy?: 'Merge' | 'Strict' } {
  const psc = pod.spec.securityContext;
  const groups = [...(psc?.fsGroup !== undefined ? [psc.fsGroup] : []), ...(psc?.supplementalGroups ?? [])].map(String);
  const policy = supplementalGroupsPolicyOf(pod);
  return { supplementalGroups: groups, ...(policy ? { supplementalGroupsPolicy: policy } : {}) };
}

/** format.Pod: `<name>_<namespace>(<uid>)`. */
function formatPod(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`;
}

const MAX_INT32 = 2147483647;

/**
 * verifyRunAsNonRoot: with runAsNonRoot, the effective runAsUser must not
 * be 0, or (none set) the image's user must be a numeric non-root uid.
 * Throws upstream's message (the container's CreateContainerConfigError).
 */
export function verifyRunAsNonRoot(pod: Pod, c: Container, image: ImageUser): void {
  const sc = determineEffectiveSecurityContext(pod, c);
  if (sc.runAsNonRoot !== true) return;
  if (sc.runAsUser !== undefined) {
    if (sc.runAsUser === 0) throw new Error(`container's runAsUser breaks non-root policy (pod: "${formatPod(pod)}", container: ${c.name})`);
    return;
  }
  const { uid, username } = effectiveImageUser(image);
  if (uid === undefined && username) {
    throw new Error(`container has runAsNonRoot and image has non-numeric user (${username}), cannot verify user is non-root (pod: "${formatPod(pod)}", container: ${c.name})`);
  }
  if (uid === undefined) return;
  if (uid === 0) throw new Error(`container has runAsNonRoot and image will run as root (pod: "${formatPod(pod)}", container: ${c.name})`);
  if (uid < 0 || uid > MAX_INT32) {
    throw new Error(
      `container has runAsNonRoot and image has an invalid user id (${uid}). (Must be 1-(${MAX_INT32})): must be between 0 and ${MAX_INT32}, inclusive (pod: "${formatPod(pod)}", container: ${c.name})`,
    );
  }
}

/** getImageUser: the uid, else the name, else root. */
function effectiveImageUser(image: ImageUser): ImageUser {
  if (image.uid !== undefined) return { uid: image.uid };
  if (image.username) return { username: image.username };
  return { uid: 0 };
}

export interface SecurityContextNode {
  /** Where Localhost seccomp profiles are (the kubelet's <root-dir>/seccomp). */
  seccompProfileRoot: string;
  /** --seccomp-default: RuntimeDefault when a pod names no profile. */
  seccompDefault?: boolean;
  /** The host's /sys/devices/system/cpu/cpu<N>/thermal_throttle that exist. */
  hostMaskedPaths?: readonly string[];
}

/**
 * determineEffectiveSecurityContext: the LinuxContainerSecurityContext of
 * the container's CreateContainer, without its namespace options (the
 * caller's). Throws for a profile or policy upstream refuses.
 */
export function containerSecurityContext(pod: Pod, c: Container, image: ImageUser, node: SecurityContextNode): CriInput<LinuxContainerSecurityContext> {
  const sc = determineEffectiveSecurityContext(pod, c);
  const caps = sc.capabilities;
  const user = effectiveImageUser(image);
  const runAsUser = sc.runAsUser ?? user.uid;
  const { supplementalGroups, supplementalGroupsPolicy } = podSupplementalGroups(pod);
  const se = sc.seLinuxOptions;
  return {
    privileged: sc.privileged === true,
    readonlyRootfs: sc.readOnlyRootFilesystem === true,
    ...(caps ? { capabilities: { addCapabilities: [...(caps.add ?? [])], dropCapabilities: [...(caps.drop ?? [])] } } : {}),
    ...(se ? { selinuxOptions: { user: se.user ?? '', role: se.role ?? '', type: se.type ?? '', level: se.level ?? '' } } : {}),
    ...(runAsUser !== undefined ? { runAsUser: { value: String(runAsUser) } } : {}),
    ...(sc.runAsUser === undefined && user.username ? { runAsUsername: user.username } : {}),
    ...(sc.runAsGroup !== undefined ? { runAsGroup: { value: String(sc.runAsGroup) } } : {}),
    supplementalGroups,
    ...(supplementalGroupsPolicy ? { supplementalGroupsPolicy } : {}),
    seccomp: seccompProfile(pod, c, node.seccompProfileRoot, node.seccompDefault),
    noNewPrivs: addNoNewPrivileges(sc),
    maskedPaths: runtimeMaskedPaths(sc.procMount, node.hostMaskedPaths),
    readonlyPaths: runtimeReadonlyPaths(sc.procMount),
  };
}
