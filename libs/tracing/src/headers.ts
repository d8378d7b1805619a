/**
 * Message headers that let one pod's flow be traced across services:
 * W3C `traceparent` (https://www.w3.org/TR/trace-context/), the pod UID and
 * the sending service. nats-server 2.9 has no message tracing of its own.
 */
import { randomFillSync } from 'node:crypto';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { parseContractVersion } from '@app/contracts';
import { activeContractVersion, currentTrace } from './trace-context.js';

export const Headers = {
  traceparent: 'traceparent',
  podUid: 'Kubelet-Pod-UID',
  service: 'Kubelet-Service',
  /** The sender's leader fencing token (its lease revision), on what a leader sends (docs/adr/0011-leader-election.md). */
  leaderRevision: 'Kubelet-Leader-Revision',
  /** The sending instance, its connection name `<service>@<node>#<instance>` (docs/adr/0015-tracing.md). */
  sender: 'Kubelet-Sender',
  /** The contract version the sender speaks (docs/adr/0034-version-skew-policy.md), on every message and reply. */
  contract: 'Kubelet-Contract',
} as const;

export interface TraceContext {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export function parseTraceparent(value: string | undefined): TraceContext | undefined {
  if (!value) return undefined;
  const m = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!m || /^0+$/.test(m[1] ?? '') || /^0+$/.test(m[2] ?? '')) return undefined;
  return { traceId: m[1] ?? '', spanId: m[2] ?? '', sampled: (Number.parseInt(m[3] ?? '0', 16) & 1) === 1 };
}

export function formatTraceparent(ctx: TraceContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.sampled ? '01' : '00'}`;
}

/**
 * Random ids, as hex, cut from a pool filled 4 KiB at a time: a
 * randomBytes() call per id cost a few microseconds, and every NATS message
 * sent or handled takes one or two (a CRI call over NATS, three).
 */
const idPool = Buffer.alloc(4096);
let idPoolUsed = idPool.length;
function randomHex(bytes: number): string {
  if (idPoolUsed + bytes > idPool.length) {
    randomFillSync(idPool);
    idPoolUsed = 0;
  }
  idPoolUsed += bytes;
  return idPool.toString('hex', idPoolUsed - bytes, idPoolUsed);
}

/** A new trace, or a new span in `parent`'s trace. */
export function nextSpan(parent?: TraceContext): TraceContext {
  return {
    traceId: parent?.traceId ?? randomHex(16),
    spanId: randomHex(8),
    sampled: parent?.sampled ?? true,
  };
}

export interface MessageMeta {
  /** The trace this message continues; when absent, the current one (currentTrace), else a new one. */
  trace?: TraceContext;
  podUid?: string;
  service?: string;
  /** The sending instance's connection name, `<service>@<node>#<instance>`. */
  sender?: string;
  /** The fencing token of the sender's leadership term. */
  leaderRevision?: number;
  /** The contract version the sender speaks (sent: the process's or module's, installContractWitness). */
  contract?: number;
}

/**
 * Headers for an outgoing message: a child span of `meta.trace` (or of the
 * trace of the work running now, so a handler's sends continue the trace of
 * the message it handles), the pod UID (or the current work's), the sender.
 */
export function messageHeaders(meta: MessageMeta = {}): MsgHdrs {
  const h = natsHeaders();
  h.set(Headers.traceparent, formatTraceparent(nextSpan(meta.trace ?? currentTrace()?.trace)));
  const podUid = meta.podUid ?? currentTrace()?.podUid;
  if (podUid) h.set(Headers.podUid, podUid);
  if (meta.service) h.set(Headers.service, meta.service);
  if (meta.sender) h.set(Headers.sender, meta.sender);
  if (meta.leaderRevision !== undefined) h.set(Headers.leaderRevision, String(meta.leaderRevision));
  h.set(Headers.contract, String(meta.contract ?? activeContractVersion()));
  return h;
}

/** Headers for a reply: who answers and the contract version it speaks, so a requester learns its peer's version too. */
export function replyHeaders(meta: Pick<MessageMeta, 'service' | 'sender'>): MsgHdrs {
  const h = natsHeaders();
  if (meta.service) h.set(Headers.service, meta.service);
  if (meta.sender) h.set(Headers.sender, meta.sender);
  h.set(Headers.contract, String(activeContractVersion()));
  return h;
}

/** What an incoming message's headers say of its trace and pod. */
export function readMeta(h: MsgHdrs | undefined): MessageMeta {
  if (!h) return {};
  const meta: MessageMeta = {};
  const trace = parseTraceparent(h.get(Headers.traceparent));
  if (trace) meta.trace = trace;
  const podUid = h.get(Headers.podUid);
  if (podUid) meta.podUid = podUid;
  const service = h.get(Headers.service);
  if (service) meta.service = service;
  const sender = h.get(Headers.sender);
  if (sender) meta.sender = sender;
  const revision = Number(h.get(Headers.leaderRevision) || Number.NaN);
  if (Number.isSafeInteger(revision) && revision > 0) meta.leaderRevision = revision;
  const contract = parseContractVersion(h.get(Headers.contract) || undefined);
  if (contract !== undefined) meta.contract = contract;
  return meta;
}
