/**
 * The kubelet's container helpers (pkg/kubelet/container, `kubecontainer`):
 * helpers.go ShouldContainerBeRestarted and ExpandContainerCommandOnlyStatic,
 * runtime.go ParseContainerID. The pod worker's computePodActions and the
 * status generation ask the same question, whether the next SyncPod starts a
 * container again, so both ask it here.
 */
import type { Container, EnvVar, Pod } from '@app/contracts';
import { expand, mappingFuncFor } from './expansion.js';
import { findContainerStatus, type RuntimePodStatus } from './runtime-status.js';

/**
 * ShouldContainerBeRestarted: whether the next SyncPod (re)starts the
 * container, from its newest instance: never once the pod is being deleted;
 * always when it never ran (or every instance was garbage-collected), or is
 * created or unknown; never while it runs; else as the pod's restart policy
 * says for the exit code.
 *
 * This is upstream with the ContainerRestartRules gate off (alpha, off by
 * default in v1.34): the pod's policy applies to a sidecar too. The runtime
 * manager restarts a sidecar whatever that policy (computeInitContainerActions),
 * so an exited sidecar of a Never pod shows its terminated state, not its
 * back-off, until it runs again.
 */
export function shouldContainerBeRestarted(container: Container, pod: Pod, podStatus: RuntimePodStatus): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  const status = findContainerStatus(podStatus, container.name);
  // "If all historical containers were GC'd, we'll also return true here."
  if (!status) return true;
  if (status.state === 'running') return false;
  if (status.state === 'unknown' || status.state === 'created') return true;
  if (pod.spec.restartPolicy === 'Never') return false;
  if (pod.spec.restartPolicy === 'OnFailure' && status.exitCode === 0) return false;
  return true;
}

/** kubecontainer.ContainerID: a `<type>://<id>` string taken apart. */
export interface ContainerID {
  /** The runtime, e.g. `containerd`; '' when the string had no type. */
  type: string;
  /** The runtime's own container ID. */
  id: string;
}

/**
 * ParseContainerID: `containerd://abc` is { type: containerd, id: abc }.
 * Upstream logs a string without `://` and returns an empty ID; here the
 * string is taken for a bare runtime ID, which is what the pod cache holds.
 */
export function parseContainerID(containerID: string): ContainerID {
  const at = containerID.indexOf('://');
  return at < 0 ? { type: '', id: containerID } : { type: containerID.slice(0, at), id: containerID.slice(at + 3) };
}

/**
 * ExpandContainerCommandOnlyStatic: `$(VAR)` in the command becomes the
 * value of the container's env var VAR, the literal value only (a var set
 * from a source, valueFrom, is ''); what expansion leaves as written stays.
 * Exec probes run their command this way.
 */
export function expandContainerCommandOnlyStatic(containerCommand: readonly string[], envs: readonly EnvVar[] | undefined): string[] {
  const mapping = mappingFuncFor(new Map((envs ?? []).map((e) => [e.name, e.value ?? ''])));
  return containerCommand.map((cmd) => expand(cmd, mapping));
}

/**
 * ExpandContainerVolumeMounts: a mount's subPathExpr with the container's
 * variables; a variable it names that is missing or empty is an error
 * ("missing value for A, B", sorted), not an empty path element.
 */
export function expandContainerVolumeMounts(subPathExpr: string, envs: ReadonlyMap<string, string>): string {
  const missing = new Set<string>();
  const expanded = expand(subPathExpr, (key) => {
    const value = envs.get(key);
    if (value === undefined || value === '') missing.add(key);
    return value ?? '';
  });
  if (missing.size > 0) throw new Error(`missing value for ${[...missing].sort().join(', ')}`);
  return expanded;
}

/**
 * makeMounts' checks of a mount's subPath (after expansion): not absolute,
 * and no `..` element (volumevalidation.ValidatePathNoBacksteps); the error
 * is upstream's text.
 */
export function checkSubPath(subPath: string): void {
  if (subPath.startsWith('/')) throw new Error(`error SubPath \`${subPath}\` must not be an absolute path`);
  if (subPath.split('/').includes('..')) throw new Error(`unable to provision SubPath \`${subPath}\`: must not contain '..'`);
}
