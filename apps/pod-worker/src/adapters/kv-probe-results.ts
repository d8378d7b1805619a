import { PROBE_TYPES, probeResultKey, type Container, type Pod, type ProbeResultRecord, type ProbeType } from '@app/contracts';
import { probeResultsStore, type JsonKv, type JsonKvStore } from '@app/nats';
import { ProbeResultsReader, type ProbeResultsView } from '../ports.js';

type Known = 'Success' | 'Failure';

function hasProbe(c: Container, probeType: ProbeType): boolean {
  switch (probeType) {
    case 'liveness':
      return c.livenessProbe !== undefined;
    case 'readiness':
      return c.readinessProbe !== undefined;
    case 'startup':
      return c.startupProbe !== undefined;
  }
}

/** The prober's `probe-results` bucket, `<node>.<uid>.<container>.<probeType>`: one read per probe the pod declares. */
export class KvProbeResults extends ProbeResultsReader {
  private readonly records: JsonKvStore<ProbeResultRecord>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.records = probeResultsStore(kv, node);
  }

  async forPod(pod: Pod): Promise<ProbeResultsView> {
    const uid = pod.metadata.uid ?? '';
    const probed = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].flatMap((c) => PROBE_TYPES.filter((t) => hasProbe(c, t)).map((t) => probeResultKey(uid, c.name, t)));
    const records = await Promise.all(probed.map((key) => this.records.get(key)));
    const byType: Record<ProbeType, Map<string, Known>> = { liveness: new Map(), readiness: new Map(), startup: new Map() };
    for (const r of records) if (r && r.result !== 'Unknown') byType[r.probeType].set(r.containerId, r.result);
    return {
      liveness: (id) => byType.liveness.get(id),
      readiness: (id) => byType.readiness.get(id),
      startup: (id) => byType.startup.get(id),
    };
  }
}
