/** `kubelet-split trace POD`: resolves the pod, reads its records, prints the timeline (or follows it). */
import { Subjects, type PodList } from '@app/contracts';
import { nodeDomain } from '@app/nats';
import { buildTimeline, readPodTrace, readTraceRecords } from '@app/tracing';
import { fleetTrace } from './fleet-commands.js';
import { NatsFleetReader, type RequestManyTiming } from './fleet-reader.js';
import { TIMELINE_HEADER, looksLikeUid, podRef, printTimeline, timelineJson, timelineRow } from './trace.js';
import { joinServerViews, natsTraceProbes, printServerViews } from './nats-trace.js';
import { askServerTraces, connectCliNats, type TraceSource } from './trace-reader.js';

export interface TraceCommand {
  arg: string;
  namespace: string;
  output: string;
  follow: boolean;
  /** Also what nats-server sees of each hop's subject (its message tracing: nats-trace.ts). */
  natsTrace?: boolean;
  /** The status manager's /pods. */
  pods: () => Promise<PodList>;
  nats: TraceSource;
  /** --fleet: `nats` is the hub, the pod is looked for on every node (fleet-commands.ts fleetTrace); the request-many timing, the nodes --node adds. */
  fleet?: { timing: RequestManyTiming; nodes: string[] };
  out: (s: string) => void;
  /** Where a warning goes (stderr): records dropped because their sender is not the one they claim. */
  warn: (s: string) => void;
}

/** The warning for records whose subject's service is not their claimed sender (libs/tracing sentByItsService). */
export function rejectedWarning(rejected: number): string {
  return `warning: ${rejected} trace record(s) dropped: published under another service's name than the one they claim\n`;
}

/** The pod's UID: the argument itself when it is one, else its name looked up in /pods. */
export async function resolvePodUid(arg: string, namespace: string, pods: () => Promise<PodList>): Promise<string> {
  if (looksLikeUid(arg)) return arg;
  const ref = podRef(arg, namespace);
  const pod = (await pods()).items.find((p) => p.metadata.namespace === ref.namespace && p.metadata.name === ref.name);
  if (!pod?.metadata.uid) throw new Error(`pods "${ref.name}" not found in namespace "${ref.namespace}"`);
  return pod.metadata.uid;
}

export async function tracePod(cmd: TraceCommand): Promise<number> {
  if (cmd.output !== '' && cmd.output !== 'json') throw new Error(`unknown output format "${cmd.output}" (want json)`);
  if (cmd.natsTrace && cmd.follow) throw new Error('--nats-trace does not combine with --follow');
  if (cmd.fleet) return traceInFleet(cmd, cmd.fleet);
  const uid = await resolvePodUid(cmd.arg, cmd.namespace, cmd.pods);
  const nc = await connectCliNats(cmd.nats);
  try {
    if (cmd.follow) return await follow(cmd, uid, nc);
    const { records, rejected } = await readPodTrace(nc, uid);
    if (rejected > 0) cmd.warn(rejectedWarning(rejected));
    if (records.length === 0) throw new Error(`no trace records for pod ${uid} (unknown pod, TRACING=off, or older than TRACE_MAX_AGE)`);
    const timeline = buildTimeline(uid, records);
    if (!cmd.natsTrace) {
      cmd.out(cmd.output === 'json' ? timelineJson(timeline) : printTimeline(timeline));
      return 0;
    }
    const { server, views } = await askServerTraces(nc, natsTraceProbes(timeline.hops));
    const rows = joinServerViews(timeline.hops, views);
    cmd.out(cmd.output === 'json' ? `${JSON.stringify({ ...timeline, server, natsTrace: rows }, null, 2)}\n` : `${printTimeline(timeline)}\n${printServerViews(rows, server)}`);
    return 0;
  } finally {
    await nc.close();
  }
}

/** `trace --fleet`: the pod found on whichever node runs it, its records read in that node's JetStream domain. */
async function traceInFleet(cmd: TraceCommand, fleet: { timing: RequestManyTiming; nodes: string[] }): Promise<number> {
  if (cmd.natsTrace) throw new Error('--nats-trace does not combine with --fleet (the fleet reader may not publish on the nodes\' subjects)');
  const nc = await connectCliNats(cmd.nats);
  try {
    const found = await fleetTrace(new NatsFleetReader(nc, cmd.nats.servers.join(','), fleet.timing), cmd.arg, cmd.namespace, fleet.nodes);
    if (found.rejected > 0) cmd.warn(rejectedWarning(found.rejected));
    const domain = nodeDomain(found.node);
    if (cmd.follow) {
      if (cmd.output !== 'json') cmd.out(`node ${found.node}, JetStream domain "${domain}"\n`);
      return await follow(cmd, found.uid, nc, domain);
    }
    const timeline = buildTimeline(found.uid, found.records);
    cmd.out(cmd.output === 'json' ? timelineJson(timeline, found.node) : `node ${found.node}, JetStream domain "${domain}"\n${printTimeline(timeline, found.node)}`);
    return 0;
  } finally {
    await nc.close();
  }
}

/** Prints each hop as it is recorded, until ^C; offsets from the pod's first hop. `domain`: the JetStream domain read (--fleet). */
async function follow(cmd: TraceCommand, uid: string, nc: Awaited<ReturnType<typeof connectCliNats>>, domain?: string): Promise<number> {
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  let first: number | undefined;
  let slowest = 0;
  if (cmd.output !== 'json') cmd.out(`${TIMELINE_HEADER.replaceAll('\t', '  ')}\n`);
  await readTraceRecords(
    nc,
    Subjects.trace.forPod(uid),
    (r) => {
      first ??= r.at;
      const hop = buildTimeline(uid, [r]).hops[0];
      if (!hop) return;
      hop.offsetMs = Math.round((r.at - first) * 1000) / 1000;
      const isSlowest = r.durationMs > slowest;
      if (isSlowest) slowest = r.durationMs;
      cmd.out(cmd.output === 'json' ? `${JSON.stringify(hop)}\n` : `${timelineRow(hop, isSlowest ? hop.spanId : undefined).replaceAll('\t', '  ').replace('<- slowest', '<- slowest so far')}\n`);
    },
    { follow: true, signal: abort.signal, onRejected: () => cmd.warn(rejectedWarning(1)), ...(domain !== undefined ? { domain } : {}) },
  );
  return 0;
}
