/**
 * The web console's live feed (ours; upstream has no console): what
 * `/console/events` pushes to each open page, as server-sent events.
 *
 *  - `pods`: the node's PodList as `/pods` serves it, sent on connect and
 *    again whenever it changes. A status version stored by the status
 *    manager (onStatusChanged) or an event heard asks for a fresh list at
 *    once (debounced); a poll every `pollMs` catches what no listener
 *    announces: a pod desired but not yet given a status, and a standby's
 *    statuses, which change in `pod-status` under it.
 *  - `event`: every event heard (recorder.Eventf), as it comes, for the pod
 *    pages.
 *
 * One reader serves every subscriber: a list is read once per change, not
 * once per open page, and none is read while no page is open.
 */
import { Clock, type Timer } from '@app/clock';
import type { EventMessage, PodList } from '@app/contracts';

/** What the feed reads: the narrow port of the status manager it needs. */
export abstract class ConsolePods {
  /** The node's pods as `/pods` serves them (a standby's read afresh). */
  abstract listPods(): Promise<PodList>;
  /** Calls `listener` each time a pod's status gets a new version. Returns the unsubscribe. */
  abstract onStatusChanged(listener: (uid: string) => void): () => void;
  /** Calls `listener` with each event heard. Returns the unsubscribe. */
  abstract onEvent(listener: (e: EventMessage) => void): () => void;
}

/** One server-sent event: its name and its JSON data. */
export type ConsoleMessage = { event: 'pods'; data: PodList } | { event: 'event'; data: EventMessage } | { event: 'error'; data: { message: string } };

export interface ConsoleFeedOptions {
  /** How often the pod list is read while a page is open, changed or not. */
  pollMs?: number;
  /** How long a burst of changes is gathered before the list is read. */
  debounceMs?: number;
}

export class ConsoleFeed {
  private readonly subscribers = new Set<(m: ConsoleMessage) => void>();
  private readonly pollMs: number;
  private readonly debounceMs: number;
  private last: { json: string; list: PodList } | undefined;
  private poll: Timer | undefined;
  private soon: Timer | undefined;
  private reading = false;
  private again = false;
  private unlisten: (() => void)[] = [];

  constructor(
    private readonly pods: ConsolePods,
    private readonly clock: Clock,
    options: ConsoleFeedOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 2000;
    this.debounceMs = options.debounceMs ?? 100;
  }

  /** Sends `send` the current pod list, then every change. Returns the unsubscribe. */
  subscribe(send: (m: ConsoleMessage) => void): () => void {
    this.subscribers.add(send);
    if (this.subscribers.size === 1) this.start();
    if (this.last) send({ event: 'pods', data: this.last.list });
    else this.refreshSoon(0);
    return () => {
      this.subscribers.delete(send);
      if (this.subscribers.size === 0) this.stop();
    };
  }

  get open(): number {
    return this.subscribers.size;
  }

  private start(): void {
    this.unlisten = [
      this.pods.onStatusChanged(() => this.refreshSoon(this.debounceMs)),
      this.pods.onEvent((e) => {
        this.broadcast({ event: 'event', data: e });
        this.refreshSoon(this.debounceMs);
      }),
    ];
    this.schedulePoll();
  }

  private stop(): void {
    for (const u of this.unlisten) u();
    this.unlisten = [];
    this.poll?.cancel();
    this.soon?.cancel();
    this.poll = this.soon = undefined;
    this.last = undefined;
  }

  private schedulePoll(): void {
    this.poll = this.clock.setTimer(this.pollMs, () => {
      this.refreshSoon(0);
      this.schedulePoll();
    });
  }

  private refreshSoon(ms: number): void {
    if (this.soon) return;
    this.soon = this.clock.setTimer(ms, () => {
      this.soon = undefined;
      void this.refresh();
    });
  }

  /** Reads the list (one read at a time; a change during a read reads again after it) and sends it if it changed. */
  private async refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        if (this.subscribers.size === 0) return;
        let list: PodList;
        try {
          list = await this.pods.listPods();
        } catch (err) {
          this.broadcast({ event: 'error', data: { message: `reading the node's pods: ${(err as Error).message}` } });
          continue;
        }
        const json = JSON.stringify(list.items);
        if (this.last?.json === json) continue;
        this.last = { json, list };
        this.broadcast({ event: 'pods', data: list });
      } while (this.again);
    } finally {
      this.reading = false;
    }
  }

  private broadcast(m: ConsoleMessage): void {
    for (const send of this.subscribers) send(m);
  }
}

/** A message in the text/event-stream format. */
export function serverSentEvent(m: ConsoleMessage): string {
  return `event: ${m.event}\ndata: ${JSON.stringify(m.data)}\n\n`;
}
