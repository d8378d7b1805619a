/** Fakes of KubeletSync's ports for unit tests: each records what it was told, as one line per call. */
import type { Pod, PodStatus, ProberVerb, StatusVerb } from '@app/contracts';
import { PodWorkerOutbox, ProbeResultsView } from './kubelet-sync.js';

/** Records `status <verb> <phase>[/<reason>]` and `prober <verb>`, into `log` (which a test may share with other fakes). */
export class RecordingOutbox extends PodWorkerOutbox {
  readonly statuses: { verb: StatusVerb; pod: Pod; status: PodStatus }[] = [];
  constructor(readonly log: string[] = []) {
    super();
  }
  status(verb: StatusVerb, pod: Pod, args: Record<string, unknown>): void {
    const status = (args['status'] ?? {}) as PodStatus;
    this.statuses.push({ verb, pod, status });
    this.log.push(`status ${verb} ${status.phase ?? ''}${status.reason ? `/${status.reason}` : ''}`);
  }
  prober(verb: ProberVerb, _pod: Pod): void {
    this.log.push(`prober ${verb}`);
  }
  /** The last status sent. */
  get last(): PodStatus | undefined {
    return this.statuses.at(-1)?.status;
  }
}

/** Probe results the test sets, by container ID; none by default. */
export class FakeProbeResults extends ProbeResultsView {
  readonly results = { liveness: new Map<string, 'Success' | 'Failure'>(), startup: new Map<string, 'Success' | 'Failure'>(), readiness: new Map<string, 'Success' | 'Failure'>() };
  liveness(id: string) {
    return this.results.liveness.get(id);
  }
  startup(id: string) {
    return this.results.startup.get(id);
  }
  readiness(id: string) {
    return this.results.readiness.get(id);
  }
}

// Each fake is its port, checked by the compiler.
const _ports: [PodWorkerOutbox, ProbeResultsView] = [new RecordingOutbox(), new FakeProbeResults()];
void _ports;
