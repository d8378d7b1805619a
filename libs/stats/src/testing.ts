/** The stats ports' fakes, for unit tests. */
import type { Pod, PodRecord } from '@app/contracts';
import { SummaryProvider } from './cri-stats-provider.js';
import { HostStats, StatsPods, type HostFs, type HostNodeStats } from './ports.js';
import type { Summary } from './summary-types.js';

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

/** A summary the test sets (or a failure), as the eviction manager's summaryProvider. */
export class FakeSummaryProvider extends SummaryProvider {
  current: Summary = { node: { nodeName: 'node-a', startTime: '2026-01-01T00:00:00Z' }, pods: [] };
  fail = false;
  calls = 0;
  summary(): Promise<Summary> {
    this.calls++;
    return this.fail ? Promise.reject(new Error('runtime not answering')) : Promise.resolve(structuredClone(this.current));
  }
}
FakeSummaryProvider satisfies new () => SummaryProvider;
