/** The stats ports' fakes, for unit tests. */
import type { Pod, PodRecord } from '@app/contracts';
import { HostStats, StatsPods, type HostFs, type HostNodeStats } from './ports.js';

/** Desired pods the test adds. */
export class FakeStatsPods extends StatsPods {
  readonly records = new Map<string, PodRecord>();
  add(pod: Pod, source = 'api'): void {
    this.records.set(pod.metadata.uid ?? '', { pod: structuredClone(pod), source, addedAt: 0, admitted: true });
  }
  all(): Promise<PodRecord[]> {
    return Promise.resolve([...this.records.values()].map((r) => structuredClone(r)));
  }
}
FakeStatsPods satisfies new () => StatsPods;

/** A host whose figures the test sets. */
export class FakeHostStats extends HostStats {
  nodeStats: HostNodeStats = { startTimeMs: Date.UTC(2025, 11, 31) };
  fs = new Map<string, HostFs>();
  dirs = new Map<string, { usedBytes: number; inodesUsed: number }>();
  failNode = false;

  node(): Promise<HostNodeStats> {
    return this.failNode ? Promise.reject(new Error('no /proc')) : Promise.resolve(structuredClone(this.nodeStats));
  }
  fsInfo(path: string): Promise<HostFs | undefined> {
    return Promise.resolve(this.fs.get(path));
  }
  dirUsage(path: string): Promise<{ usedBytes: number; inodesUsed: number } | undefined> {
    return Promise.resolve(this.dirs.get(path));
  }
}
FakeHostStats satisfies new () => HostStats;
