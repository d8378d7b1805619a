/** The runtime manager's ports besides the CRI: events, hooks, directories. */
import type { Container, LifecycleHandler, Pod } from '@app/contracts';

/** recorder.Eventf: `kubelet.<node>.events.<uid>`. */
export abstract class EventRecorder {
  abstract event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath?: string): void;
}

/** Runs a lifecycle hook (postStart, preStop): exec in the container, or an HTTP GET. */
export abstract class HookRunner {
  /** Resolves with an error message, or undefined when the hook succeeded. */
  abstract run(pod: Pod, container: Container, containerId: string, handler: LifecycleHandler, podIPs: string[], timeoutSeconds: number): Promise<string | undefined>;
}

/** The pod's directories on the node (makePodDataDirs, the log directory, emptyDir volumes). */
export abstract class PodDirectories {
  abstract ensure(pod: Pod): Promise<void>;
  abstract remove(pod: Pod): Promise<void>;
}
