/**
 * What a standby status manager heard, for the moment it takes over.
 *
 * A standby receives every status call and probe result the leader does
 * (they are plain events, no queue group) but must not act on them. Those
 * that reached no leader (between the leader's death and the takeover, up to
 * a lease duration and a retry period) would be lost: a status changes only
 * when the pod worker next syncs the pod, a readiness result only when it
 * changes. So the standby keeps, for `windowMs`, the latest call per key
 * (the pod's status; one container's readiness; its startup), and the new
 * leader replays them, in the order they came, after loading `pod-status`.
 * A call the old leader had applied already changes nothing the second time
 * (the status store compares statuses before it versions one, and refuses
 * illegal container transitions), so replaying is safe; a call superseded
 * by a later one of the same key is not replayed.
 */
import { Clock } from '@app/clock';
import type { StatusVerb } from '@app/contracts';

/**
 * What a replayed call supersedes: a pod's later status, one container's
 * later readiness or startup. TerminatePod has its own key: the status
 * manager builds the terminated status from the one it holds, so the pod
 * worker's last SetPodStatus before it (the final status, SyncTerminatedPod)
 * must be replayed too, before it, or the containers that exited by
 * themselves would read 137 ContainerStatusUnknown after a takeover.
 */
export function replayKey(verb: StatusVerb, uid: string, containerId: unknown): string {
  switch (verb) {
    case 'SetContainerReadiness':
      return `readiness/${uid}/${String(containerId)}`;
    case 'SetContainerStartup':
      return `startup/${uid}/${String(containerId)}`;
    case 'TerminatePod':
      return `terminate/${uid}`;
    case 'SetPodStatus':
    case 'RemoveOrphanedStatuses':
      return `status/${uid}`;
  }
}

interface Heard {
  at: number;
  apply: () => Promise<unknown>;
}

export class TakeoverReplay {
  /** By key; a Map keeps insertion order, and a key heard again moves to the end, so it stays ordered by time. */
  private readonly heard = new Map<string, Heard>();

  constructor(
    private readonly clock: Clock,
    /** How far back a new leader replays: comfortably more than a lease duration plus a retry period. */
    private readonly windowMs: number,
  ) {}

  /** Keeps `apply` as the latest call of `key`. */
  remember(key: string, apply: () => Promise<unknown>): void {
    const now = this.clock.now();
    this.heard.delete(key);
    this.heard.set(key, { at: now, apply });
    this.forgetBefore(now - this.windowMs);
  }

  get size(): number {
    return this.heard.size;
  }

  /** The calls heard within the window, oldest first; forgotten once taken. */
  take(): (() => Promise<unknown>)[] {
    this.forgetBefore(this.clock.now() - this.windowMs);
    const out = [...this.heard.values()].map((h) => h.apply);
    this.heard.clear();
    return out;
  }

  private forgetBefore(t: number): void {
    for (const [key, h] of this.heard) {
      if (h.at >= t) break;
      this.heard.delete(key);
    }
  }
}

/**
 * Whether this status manager acts now. While it does not (a standby, or a
 * leader still loading `pod-status`), what it hears is remembered for its
 * takeover instead.
 */
export class LeaderGate {
  private acting = false;

  constructor(private readonly replay: TakeoverReplay) {}

  get isActing(): boolean {
    return this.acting;
  }

  /** How many calls a standby holds for its takeover. */
  get remembered(): number {
    return this.replay.size;
  }

  /** Runs `apply` now when acting; otherwise remembers it under `key` and resolves undefined. */
  offer<T>(key: string, apply: () => Promise<T>): Promise<T | undefined> {
    if (this.acting) return apply();
    this.replay.remember(key, apply);
    return Promise.resolve(undefined);
  }

  /** Starts acting: the calls heard meanwhile are started first, in order, before anything offered next. */
  open(): Promise<unknown>[] {
    const missed = this.replay.take();
    this.acting = true;
    return missed.map((apply) => apply());
  }

  close(): void {
    this.acting = false;
  }
}
