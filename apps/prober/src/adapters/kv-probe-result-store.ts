import { probeResultKey, type ProbeResultRecord, type ProbeType } from '@app/contracts';
import { probeResultsStore, type JsonKv, type JsonKvStore } from '@app/nats';
import { ProbeResultStore } from '../ports.js';

/** The `probe-results` bucket: `<node>.<uid>.<container>.<probeType>`. */
export class KvProbeResultStore extends ProbeResultStore {
  private readonly records: JsonKvStore<ProbeResultRecord>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.records = probeResultsStore(kv, node);
  }
  async load(): Promise<ProbeResultRecord[]> {
    return this.records.values();
  }
  put(record: ProbeResultRecord): Promise<void> {
    return this.records.put(probeResultKey(record.podUid, record.containerName, record.probeType), record);
  }
  delete(podUid: string, containerName: string, probeType: ProbeType): Promise<void> {
    return this.records.delete(probeResultKey(podUid, containerName, probeType));
  }
}
