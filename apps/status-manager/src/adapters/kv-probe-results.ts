import type { ProbeResultRecord } from '@app/contracts';
import { probeResultsStore, type JsonKv, type JsonKvStore } from '@app/nats';
import { ProbeResultsReader } from '../ports.js';

/** The prober's `probe-results` bucket, read only: `<node>.<uid>.<container>.<probeType>`. */
export class KvProbeResults extends ProbeResultsReader {
  private readonly records: JsonKvStore<ProbeResultRecord>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.records = probeResultsStore(kv, node);
  }
  all(): Promise<ProbeResultRecord[]> {
    return this.records.values();
  }
}
