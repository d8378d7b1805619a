/** Hand-written fakes of the prober's ports (ports.ts, handlers/ ProbeHandler), and the handler specs' helpers, for unit tests only. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type { Container, Pod, PodRecord, PodStatus, Probe, ProbeResultMessage, ProbeResultRecord, ProbeResultValue, ProbeType } from '@app/contracts';
import { ProbeHandler, type ProbeHandlerResult, type ProbeOutcome, type ProbeTarget } from './handlers/index.js';
export type { ProbeOutcome, ProbeTarget };
import type { ProbeResultPublication } from './prober-manager.js';
import { ProbeEventSink, ProbedPodSource, ProberMetrics, ProbeResultStore, ResultSink, type KeptPodStatus, type ProbeMetricLabels, type ProbeMetricResult } from './ports.js';
import type { ProbeEvent } from './worker.js';

/** A ResultSink for tests: keeps every message; `failNext` makes the next publish reject. */
export class FakeResultSink extends ResultSink {
  readonly messages: ProbeResultPublication[] = [];
  private failures = 0;

  failNext(times = 1): this {
    this.failures += times;
    return this;
  }

  publish(msg: ProbeResultMessage): Promise<void> {
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(new Error('publish failed'));
    }
    this.messages.push(msg);
    return Promise.resolve();
  }

  /** The messages of one probe type, as `result` strings. */
  results(probeType: ProbeType, containerId?: string): ProbeResultValue[] {
    return this.messages.filter((m) => m.probeType === probeType && (containerId === undefined || m.containerId === containerId)).map((m) => m.result);
  }
}

/**
 * The `probe-results` bucket in memory, by `<uid>/<container>/<probeType>`:
 * records every write as `put <key> <result>` or `delete <key>`; `failNext`
 * makes the next puts reject (nothing is stored).
 */
export class FakeProbeResultStore extends ProbeResultStore {
  readonly records = new Map<string, ProbeResultRecord>();
  readonly writes: string[] = [];
  private failures = 0;

  constructor(initial: ProbeResultRecord[] = []) {
    super();
    for (const r of initial) this.records.set(FakeProbeResultStore.key(r.podUid, r.containerName, r.probeType), r);
  }

  static key(podUid: string, containerName: string, probeType: ProbeType): string {
    return `${podUid}/${containerName}/${probeType}`;
  }

  failNext(times = 1): this {
    this.failures += times;
    return this;
  }

  load(): Promise<ProbeResultRecord[]> {
    return Promise.resolve([...this.records.values()]);
  }

  put(record: ProbeResultRecord): Promise<void> {
    const key = FakeProbeResultStore.key(record.podUid, record.containerName, record.probeType);
    if (this.failures > 0) {
      this.failures--;
      this.writes.push(`put ${key} ${record.result} (failed)`);
      return Promise.reject(new Error('put failed'));
    }
    this.writes.push(`put ${key} ${record.result}`);
    this.records.set(key, record);
    return Promise.resolve();
  }

  delete(podUid: string, containerName: string, probeType: ProbeType): Promise<void> {
    const key = FakeProbeResultStore.key(podUid, containerName, probeType);
    this.writes.push(`delete ${key}`);
    this.records.delete(key);
    return Promise.resolve();
  }

  /** The kept result of a worker, if any. */
  result(podUid: string, containerName: string, probeType: ProbeType): ProbeResultValue | undefined {
    return this.records.get(FakeProbeResultStore.key(podUid, containerName, probeType))?.result;
  }
}

/**
 * The `pods` and `pod-status` buckets in memory: `pod` adds a desired pod
 * (admitted unless told), `status` keeps its status; `failNext` makes the
 * next read reject.
 */
export class FakeProbedPodSource extends ProbedPodSource {
  readonly desired: PodRecord[] = [];
  readonly statuses = new Map<string, KeptPodStatus>();
  private failures = 0;

  pod(pod: Pod, o: Partial<Omit<PodRecord, 'pod'>> = {}): this {
    this.desired.push({ pod, source: 'file', addedAt: 0, admitted: true, ...o });
    return this;
  }

  status(uid: string, status: PodStatus, podIsFinished = false): this {
    this.statuses.set(uid, { status, podIsFinished });
    return this;
  }

  failNext(times = 1): this {
    this.failures += times;
    return this;
  }

  desiredPods(): Promise<PodRecord[]> {
    return this.read(() => structuredClone(this.desired));
  }

  podStatuses(): Promise<Map<string, KeptPodStatus>> {
    return this.read(() => structuredClone(this.statuses));
  }

  private read<T>(value: () => T): Promise<T> {
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(new Error('read failed'));
    }
    return Promise.resolve(value());
  }
}

/** A ProberMetrics for tests: records observations and forgotten series. */
export class FakeProberMetrics extends ProberMetrics {
  readonly observed: { labels: ProbeMetricLabels; result: ProbeMetricResult; durationSeconds?: number }[] = [];
  readonly forgotten: ProbeMetricLabels[] = [];

  observe(labels: ProbeMetricLabels, result: ProbeMetricResult, durationSeconds?: number): void {
    this.observed.push({ labels, result, ...(durationSeconds !== undefined ? { durationSeconds } : {}) });
  }

  forget(labels: ProbeMetricLabels): void {
    this.forgotten.push(labels);
  }
}

/** A ProbeEventSink for tests. */
export class FakeProbeEventSink extends ProbeEventSink {
  readonly events: ProbeEvent[] = [];
  record(event: ProbeEvent): void {
    this.events.push(event);
  }
}

// The fakes are the ports: checked by the compiler.
const _ports: [ResultSink, ProbeResultStore, ProbedPodSource, ProberMetrics, ProbeEventSink] = [
  new FakeResultSink(),
  new FakeProbeResultStore(),
  new FakeProbedPodSource(),
  new FakeProberMetrics(),
  new FakeProbeEventSink(),
];
void _ports;

export interface RecordedProbe {
  probe: Probe;
  target: ProbeTarget;
  timeoutMs: number;
}

/**
 * A ProbeHandler for tests: records every run and answers from a queue of
 * outcomes (then from `otherwise`); `block()` holds the next answers until
 * released, to test probes in flight.
 */
export class FakeProbeHandler extends ProbeHandler {
  readonly runs: RecordedProbe[] = [];
  private readonly queue: ProbeOutcome[] = [];
  private gate: Promise<void> | undefined;
  private release: (() => void) | undefined;

  constructor(public otherwise: ProbeOutcome = { result: 'Success', output: '' }) {
    super();
  }

  /** The next runs answer these, in order. */
  answer(...outcomes: (ProbeOutcome | ProbeHandlerResult)[]): this {
    for (const o of outcomes) this.queue.push(typeof o === 'string' ? { result: o, output: o === 'Failure' ? 'probe says no' : '' } : o);
    return this;
  }

  /** Answers from now on hold until `unblock()`. */
  block(): this {
    this.gate ??= new Promise<void>((resolve) => (this.release = resolve));
    return this;
  }

  unblock(): void {
    this.release?.();
    this.gate = undefined;
    this.release = undefined;
  }

  async run(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
    this.runs.push({ probe, target, timeoutMs });
    const outcome = this.queue.shift() ?? this.otherwise;
    if (this.gate) await this.gate;
    return outcome;
  }
}

const _isPort: ProbeHandler = new FakeProbeHandler() satisfies ProbeHandler;
void _isPort;

// ---------------------------------------------------------------------------
// Helpers of the handler specs
// ---------------------------------------------------------------------------

/** The pod the handler specs probe. */
export const probePod: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'uid-1' }, spec: { containers: [] } };
export const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A target in probePod: container `app`, ID `abc`, pod IP 127.0.0.1 unless told. */
export function probeTarget(o: { ports?: Container['ports']; env?: Container['env']; podIP?: string } = {}): ProbeTarget {
  return {
    pod: probePod,
    container: { name: 'app', ...(o.ports ? { ports: o.ports } : {}), ...(o.env ? { env: o.env } : {}) },
    containerId: 'abc',
    podIP: o.podIP ?? '127.0.0.1',
    hostIP: '192.168.1.2',
  };
}

/** Asserts an outcome's result, output (exact or by pattern) and warning. */
export function expectOutcome(got: ProbeOutcome, want: { result: ProbeOutcome['result']; output?: string | RegExp; warning?: boolean }): void {
  assert.equal(got.result, want.result, `result (output: ${got.output})`);
  if (typeof want.output === 'string') assert.equal(got.output, want.output);
  else if (want.output) assert.match(got.output, want.output);
  assert.equal(got.warning ?? false, want.warning ?? false, 'warning');
}

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  const s = createNetServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  s.close();
  await once(s, 'close');
  return port;
}
