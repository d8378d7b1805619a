import type { ProbeResultMessage } from '@app/contracts';
import { ProbeResultsView } from '../ports.js';

/** The results managers' latest values, from `kubelet.<node>.probe.<type>.<uid>`. */
export class ProbeResultsCache extends ProbeResultsView {
  private readonly results = { liveness: new Map<string, 'Success' | 'Failure'>(), readiness: new Map<string, 'Success' | 'Failure'>(), startup: new Map<string, 'Success' | 'Failure'>() };
  observe(m: ProbeResultMessage): void {
    if (m.result === 'Unknown') this.results[m.probeType].delete(m.containerId);
    else this.results[m.probeType].set(m.containerId, m.result);
  }
  liveness(id: string) {
    return this.results.liveness.get(id);
  }
  readiness(id: string) {
    return this.results.readiness.get(id);
  }
  startup(id: string) {
    return this.results.startup.get(id);
  }
}
