/**
 * `kubelet-split topology`'s table (the topology itself is @app/nats
 * buildTopology, shared with the console).
 */
import type { Topology } from '@app/nats';
import { TABLE_TABWRITER, tabwrite } from './tabwriter.js';

const rate = (r: number) => (r >= 10 ? r.toFixed(0) : r.toFixed(1));

/** The default output: the connections with their counts and rates, then one row per subject each instance subscribes or publishes to. */
export function printTopologyTable(t: Topology): string {
  const conns = ['SERVICE\tINSTANCE\tNODE\tCID\tIN MSGS\tOUT MSGS\tIN/S\tOUT/S'];
  for (const i of t.instances) conns.push([i.service, i.instance, i.node, i.cid, i.inMsgs, i.outMsgs, rate(i.inRate), rate(i.outRate)].join('\t'));
  const subjects = ['SERVICE\tINSTANCE\tDIRECTION\tFAMILY\tSUBJECT\tMSGS'];
  for (const i of t.instances) {
    for (const s of i.subscribes) if (s.family !== 'inbox') subjects.push([i.service, i.instance, 'subscribes', s.family, s.subject + (s.queue ? ` (queue ${s.queue})` : ''), s.msgs].join('\t'));
    for (const p of i.publishes) subjects.push([i.service, i.instance, `${p.how}*`, p.family, p.subject, '-'].join('\t'));
  }
  const notes = [
    `* derived from the design's subject table (libs/nats NATS_ACCESS): NATS monitoring counts no publishes per subject; rates over ${t.intervalSeconds.toFixed(1)}s.`,
    ...(t.others.length > 0 ? [`other connections: ${t.others.map((o) => `${o.name || '(unnamed)'} (cid ${o.cid})`).join(', ')}`] : []),
    ...(t.totals.subscriptions !== undefined ? [`server: ${t.totals.subscriptions} subscriptions; JetStream: ${t.totals.streams ?? 0} streams, ${t.totals.consumers ?? 0} consumers, ${t.totals.messages !== undefined ? `${t.totals.messages} messages, ` : ''}${t.totals.bytes ?? 0} bytes`] : []),
    ...t.undocumented.map((u) => `UNDOCUMENTED: ${u.instance} subscribes to ${u.subject}, which no subject family of libs/contracts covers`),
  ];
  return `${tabwrite(`${conns.join('\n')}\n`, TABLE_TABWRITER)}\n${tabwrite(`${subjects.join('\n')}\n`, TABLE_TABWRITER)}\n${notes.join('\n')}\n`;
}
