/**
 * canRunPod (kubelet.go): the soft admission handlers a pod must pass each
 * time it syncs. The one that applies on this node is AppArmor
 * (pkg/kubelet/lifecycle: the AppArmor admit handler): containerd runs here
 * with AppArmor disabled, so a pod that asks for an AppArmor profile other
 * than unconfined cannot be enforced, and must not run unconfined instead.
 */
import type { Pod } from '@app/contracts';

export interface RunVerdict {
  admit: boolean;
  reason?: string;
  message?: string;
}

export interface NodeSecurity {
  appArmorEnabled: boolean;
}

const LEGACY_APPARMOR_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

/** The AppArmor profiles the pod asks for, by container name ('' for the pod level). */
function appArmorRequests(pod: Pod): { container: string; profile: string }[] {
  const out: { container: string; profile: string }[] = [];
  const podLevel = pod.spec.securityContext?.appArmorProfile;
  if (podLevel && podLevel.type !== 'Unconfined') out.push({ container: '', profile: podLevel.type });
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    const p = c.securityContext?.appArmorProfile;
    if (p && p.type !== 'Unconfined') out.push({ container: c.name, profile: p.type });
    const legacy = pod.metadata.annotations?.[`${LEGACY_APPARMOR_PREFIX}${c.name}`];
    if (legacy && legacy !== 'unconfined') out.push({ container: c.name, profile: legacy });
  }
  return out;
}

export function canRunPod(pod: Pod, node: NodeSecurity): RunVerdict {
  const wants = appArmorRequests(pod);
  if (wants.length > 0 && !node.appArmorEnabled) {
    return { admit: false, reason: 'AppArmor', message: 'Cannot enforce AppArmor: AppArmor is not enabled on the host' };
  }
  return { admit: true };
}
