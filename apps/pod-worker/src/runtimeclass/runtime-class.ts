/**
 * The kubelet's RuntimeClass manager (pkg/kubelet/runtimeclass
 * runtimeclass_manager.go LookupRuntimeHandler) over config-source's
 * objects: a pod's runtimeClassName becomes RunPodSandbox's runtime_handler.
 *
 *   no runtimeClassName            -> '' (the runtime's default handler)
 *   joined, RuntimeClass found     -> its `handler`
 *   joined, not found              -> `runtimeclass.node.k8s.io "x" not found`
 *                                     (the sandbox is not created: FailedCreatePodSandBox, retried)
 *   joined, not readable           -> `failed to lookup RuntimeClass x: <why>`
 *   not joined (no apiserver)      -> the name itself is the handler (ADR 0014:
 *                                     containerd refuses a handler it does not know, clearly)
 */
import { ApiObjects, ApiObjectsError } from '../ports.js';

export class RuntimeClassManager {
  constructor(private readonly objects: ApiObjects) {}

  /** The runtime handler of `runtimeClassName`; rejects with upstream's error when it cannot be resolved. */
  async lookupRuntimeHandler(runtimeClassName: string | undefined): Promise<string> {
    if (!runtimeClassName) return '';
    let rc;
    try {
      rc = await this.objects.get('RuntimeClass', '', runtimeClassName);
    } catch (err) {
      if (err instanceof ApiObjectsError && err.code === 'NotJoined') return runtimeClassName;
      throw new Error(`failed to lookup RuntimeClass ${runtimeClassName}: ${(err as Error).message}`);
    }
    if (!rc) throw new Error(`runtimeclass.node.k8s.io "${runtimeClassName}" not found`);
    return rc.handler ?? '';
  }
}
