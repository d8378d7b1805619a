/** The stats ports' fakes, for unit tests. */
import { HostStats, type HostFs, type HostNodeStats } from './ports.js';

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
