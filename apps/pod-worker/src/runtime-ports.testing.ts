/** Fakes of the runtime manager's ports besides the CRI, for unit tests: each records what it was asked. */
import type { Container, LifecycleHandler, Pod } from '@app/contracts';
import { EventRecorder, HookRunner, PodDirectories } from './runtime-ports.js';

/** Records each event as `Type/Reason` (and the whole of it in `all`). */
export class RecordingEvents extends EventRecorder {
  readonly seen: string[] = [];
  readonly all: { pod: string; type: 'Normal' | 'Warning'; reason: string; message: string; fieldPath?: string }[] = [];
  event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath?: string): void {
    this.seen.push(`${type}/${reason}`);
    this.all.push({ pod: pod.metadata.uid ?? '', type, reason, message, ...(fieldPath !== undefined ? { fieldPath } : {}) });
  }
}

/** Records each hook run as `<container> <containerId>`; `fail` makes every run fail with that message. */
export class FakeHookRunner extends HookRunner {
  readonly runs: string[] = [];
  fail?: string;
  run(_pod: Pod, container: Container, containerId: string, _handler: LifecycleHandler, _podIPs: string[], _timeoutSeconds: number): Promise<string | undefined> {
    this.runs.push(`${container.name} ${containerId}`);
    return Promise.resolve(this.fail);
  }
}

/** Records `dirs ensure <uid>` and `dirs remove <uid>` into `calls` (which a test may share with other fakes). */
export class FakePodDirectories extends PodDirectories {
  constructor(readonly calls: string[] = []) {
    super();
  }
  ensure(pod: Pod): Promise<void> {
    this.calls.push(`dirs ensure ${pod.metadata.uid ?? ''}`);
    return Promise.resolve();
  }
  remove(pod: Pod): Promise<void> {
    this.calls.push(`dirs remove ${pod.metadata.uid ?? ''}`);
    return Promise.resolve();
  }
}

// Each fake is its port, checked by the compiler.
const _ports: [EventRecorder, HookRunner, PodDirectories] = [new RecordingEvents(), new FakeHookRunner(), new FakePodDirectories()];
void _ports;
