/** The runtime manager's ports besides the CRI: events, hooks, directories. */
import type { Container, LifecycleHandler, Pod } from '@app/contracts';

/** recorder.Eventf: `kubelet.<node>.events.<uid>`. */
export abstract class EventRecorder {
  abstract event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath?: string): void;
}

/**
 * Runs a lifecycle hook (postStart, preStop): exec in the container, an HTTP
 * GET, or a sleep; a tcpSocket hook is refused (upstream handlerRunner.Run).
 */
export abstract class HookRunner {
  /**
   * Resolves with upstream's failure message (it may carry the hook's
   * output: it belongs in the container status and the log, never in an
   * event), or undefined when the hook succeeded. `podIPs` are the pod's
   * IPs when the caller knows them; otherwise the runner finds them.
   */
  abstract run(pod: Pod, container: Container, containerId: string, handler: LifecycleHandler, podIPs: string[], timeoutSeconds: number): Promise<string | undefined>;
}

/** The pod's directories on the node (makePodDataDirs, the log directory, emptyDir volumes). */
export abstract class PodDirectories {
  abstract ensure(pod: Pod): Promise<void>;
  abstract remove(pod: Pod): Promise<void>;
}
