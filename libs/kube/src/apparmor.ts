/**
 * The kubelet's AppArmor admission (pkg/kubelet/lifecycle/handlers.go
 * appArmorAdmitHandler, over pkg/security/apparmor validate.go and
 * helpers.go): a Pending pod that asks for an AppArmor profile other than
 * unconfined, on a node that cannot enforce AppArmor, is rejected at
 * admission (Failed, reason AppArmor), never run unconfined instead. The
 * kubelet asks it after the predicates (kubelet.go NewMainKubelet appends
 * it after the predicate admit handler).
 */
import type { AppArmorProfile, Container, Pod } from '@app/contracts';

/** v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix. */
const BETA_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
/** v1.DeprecatedAppArmorBetaProfileNameUnconfined, ...RuntimeDefault, ...NamePrefix. */
const BETA_UNCONFINED = 'unconfined';
const BETA_RUNTIME_DEFAULT = 'runtime/default';
const BETA_LOCALHOST_PREFIX = 'localhost/';

/** What the node can enforce (apparmor.validateHost): its error, or none when AppArmor is enabled. */
export interface AppArmorHost {
  /** e.g. "AppArmor is not enabled on the host"; undefined: the host enforces AppArmor profiles. */
  hostError?: string;
}

/** validateHost's message when the kernel has no AppArmor (IsEnabled false). */
export const APPARMOR_NOT_ENABLED = 'AppArmor is not enabled on the host';

/** isRequired: a pod-level or container-level profile that is not Unconfined, or a beta annotation that is not unconfined. */
export function isAppArmorRequired(pod: Pod): boolean {
  const podProfile = pod.spec.securityContext?.appArmorProfile;
  if (podProfile && podProfile.type !== 'Unconfined') return true;
  if (allContainers(pod).some((c) => c.securityContext?.appArmorProfile && c.securityContext.appArmorProfile.type !== 'Unconfined')) return true;
  return Object.entries(pod.metadata.annotations ?? {}).some(([key, value]) => key.startsWith(BETA_ANNOTATION_PREFIX) && value !== BETA_UNCONFINED);
}

/** GetProfile: the container's own profile, else its beta annotation, else the pod's. */
export function appArmorProfileOf(pod: Pod, c: ContainerSecurity): AppArmorProfile | undefined {
  if (c.securityContext?.appArmorProfile) return c.securityContext.appArmorProfile;
  const beta = pod.metadata.annotations?.[`${BETA_ANNOTATION_PREFIX}${c.name}`];
  if (beta !== undefined) {
    if (beta === BETA_RUNTIME_DEFAULT) return { type: 'RuntimeDefault' };
    if (beta === BETA_UNCONFINED) return { type: 'Unconfined' };
    if (beta.startsWith(BETA_LOCALHOST_PREFIX)) return { type: 'Localhost', localhostProfile: beta.slice(BETA_LOCALHOST_PREFIX.length) };
  }
  return pod.spec.securityContext?.appArmorProfile;
}

/** validator.Validate: why the pod's AppArmor profiles cannot be used on this host, or undefined. */
export function validateAppArmor(pod: Pod, host: AppArmorHost): string | undefined {
  if (!isAppArmorRequired(pod)) return undefined;
  if (host.hostError !== undefined) return host.hostError;
  for (const c of allContainers(pod)) {
    const profile = appArmorProfileOf(pod, c);
    if (profile?.type === 'Localhost' && (profile.localhostProfile ?? '').trim() === '') return `invalid empty AppArmor profile name: ${JSON.stringify(profile)}`;
  }
  return undefined;
}

/**
 * appArmorAdmitHandler.Admit: why the pod is refused (its message, under
 * reason AppArmor, AdmitReason.AppArmor), or undefined when it is admitted.
 * A pod already past Pending is not checked again.
 */
export function appArmorRefusal(pod: Pod, host: AppArmorHost): string | undefined {
  if (pod.status?.phase !== 'Pending') return undefined;
  const err = validateAppArmor(pod, host);
  return err === undefined ? undefined : `Cannot enforce AppArmor: ${err}`;
}

/** podutil.AllContainers: init, regular and ephemeral containers. */
function allContainers(pod: Pod): ContainerSecurity[] {
  return [...(pod.spec.initContainers ?? []), ...pod.spec.containers, ...(pod.spec.ephemeralContainers ?? [])];
}

/** What of a container (init, regular or ephemeral) the AppArmor checks read. */
type ContainerSecurity = Pick<Container, 'name' | 'securityContext'>;
