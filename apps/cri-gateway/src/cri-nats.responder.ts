/**
 * The CRI over NATS, on the hot path: `cri.<node>.runtime.<Method>` and
 * `cri.<node>.image.<Method>` are answered by a plain subscription on the
 * service's connection rather than through Nest's handler pipeline (guards,
 * interceptors, observables), which cost about half a millisecond per call
 * here; see docs/adr/0003-cri-gateway-hot-path.md. Same handler as HTTP
 * (CriGateway.call), same error shape as every other reply. The caller's
 * deadline arrives in the CRI_TIMEOUT_HEADER header. A caller that asks
 * for progress (CRI_PROGRESS_HEADER) gets an empty message with that header
 * on its reply subject at that interval until the answer, so that it can
 * tell a long call from a gateway that died under it.
 */
import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { Clock, SystemClock, type Timer } from '@app/clock';
import { MessageError, Subjects, parseJson } from '@app/contracts';
import { CRI_PROGRESS_HEADER, CRI_TIMEOUT_HEADER, CriError, parseCriProgress, parseCriTimeout, type CriService } from '@app/cri';
import { continueTrace, replyHeaders } from '@app/tracing';
import { senderOf } from '@app/nats';
import type { Logger } from '@app/observability';
import { toErrorReply } from '@app/service';
import type { CriGateway } from './gateway.js';

const enc = new TextEncoder();

/** The header block of a sign of progress: made when a call first lasts an interval (most never do), then kept. */
const progressHeaderBlocks = new Map<number, MsgHdrs>();
function progressHeaders(intervalMs: number): MsgHdrs {
  let h = progressHeaderBlocks.get(intervalMs);
  if (!h) {
    h = natsHeaders();
    h.set(CRI_PROGRESS_HEADER, String(intervalMs));
    if (progressHeaderBlocks.size < 16) progressHeaderBlocks.set(intervalMs, h);
  }
  return h;
}

/** What the responder works with: the connection it subscribes on, the gateway it calls, the node's subjects. */
export interface CriNatsResponderDeps {
  nc: NatsConnection;
  gateway: Pick<CriGateway, 'call'>;
  node: string;
  logger: Logger;
  /** The queue group every replica subscribes in (default `cri-gateway`). */
  queue?: string;
  /** The keep-alive timers' clock (default the system's). */
  clock?: Clock;
}

export class CriNatsResponder {
  private readonly subs: Subscription[] = [];

  private readonly nc: NatsConnection;
  private readonly gateway: Pick<CriGateway, 'call'>;
  private readonly node: string;
  private readonly logger: Logger;
  private readonly queue: string;
  private readonly clock: Clock;

  constructor(deps: CriNatsResponderDeps) {
    ({ nc: this.nc, gateway: this.gateway, node: this.node, logger: this.logger, queue: this.queue = 'cri-gateway', clock: this.clock = new SystemClock() } = deps);
  }

  /** Subscribes; the subjects it bound. */
  start(): string[] {
    const bind = (service: CriService, subject: string) => {
      this.subs.push(this.nc.subscribe(subject, { queue: this.queue, callback: (err, msg) => (err ? this.logger.error({ err, subject }, 'subscription error') : void continueTrace(msg, () => this.serve(service, msg), this.logger)) }));
      return subject;
    };
    return [bind('runtime', Subjects.criRuntime.wildcard(this.node)), bind('image', Subjects.criImage.wildcard(this.node))];
  }

  /** Stops taking calls; those in flight still answer. */
  stop(): void {
    for (const s of this.subs.splice(0)) s.unsubscribe();
  }

  private async serve(service: CriService, msg: Msg): Promise<void> {
    let body: unknown;
    const progress = this.showProgress(msg);
    try {
      const parsed = service === 'runtime' ? Subjects.criRuntime.parse(msg.subject) : Subjects.criImage.parse(msg.subject);
      if (!parsed) throw new MessageError(`not a CRI subject: ${msg.subject}`);
      const timeout = parseCriTimeout(msg.headers?.get(CRI_TIMEOUT_HEADER));
      if (timeout.problem) throw new CriError('InvalidArgument', `${parsed.method}: ${timeout.problem}`);
      body = await this.gateway.call(service, parsed.method, msg.data.length === 0 ? {} : parseJson(msg.data), timeout.ms);
    } catch (err) {
      body = toErrorReply(err);
    } finally {
      progress?.cancel();
    }
    if (!msg.reply) return;
    try {
      const sender = senderOf(this.nc);
      msg.respond(enc.encode(JSON.stringify(body)), { headers: replyHeaders({ service: 'cri-gateway', ...(sender ? { sender } : {}) }) });
    } catch (err) {
      this.logger.error({ err, subject: msg.subject }, 'could not send a reply');
    }
  }

  /** Empty messages with CRI_PROGRESS_HEADER to the caller, at the interval it asked for, until cancelled. */
  private showProgress(msg: Msg): Timer | undefined {
    const intervalMs = parseCriProgress(msg.headers?.get(CRI_PROGRESS_HEADER));
    if (!msg.reply || intervalMs === undefined) return undefined;
    let timer: Timer | undefined;
    let cancelled = false;
    const beat = () => {
      if (cancelled) return;
      try {
        msg.respond(new Uint8Array(0), { headers: progressHeaders(intervalMs) });
      } catch {
        // The connection is closing: the caller will see the call stall.
      }
      timer = this.clock.setTimer(intervalMs, beat);
    };
    timer = this.clock.setTimer(intervalMs, beat);
    return {
      cancel: () => {
        cancelled = true;
        timer?.cancel();
      },
    };
  }
}
