/**
 * How many calls that make sandboxes and containers run at once (ours, not
 * upstream's: each of the kubelet's pod workers calls the runtime as it
 * goes, and a burst of 100 pods has 100 RunPodSandbox calls in flight).
 * containerd does that work no faster for being given all of it at once:
 * on this 2-core machine it started 100 such pods in 7.6 s with 2 to 8 at
 * a time, 9.5 s with 16 and 12.1 s with all 100
 * (docs/adr/0020-burst-concurrency.md); with all at once every pod also
 * waits for the whole burst, where a bounded queue lets the first ones run
 * within a second. cri-gateway is the one process on the CRI socket, so the
 * bound is the node's, however many pod-worker replicas there are.
 *
 * A call waits in a queue for a slot, by the stage of its pod:
 * StartContainer first, then CreateContainer, and a new sandbox last. A pod
 * that has begun is thus finished before the next pod begins: with one
 * FIFO queue, the 100 RunPodSandbox calls of a burst came first and every
 * pod's StartContainer waited for all of them (7 s in the queue, measured),
 * so no pod ran before nearly every sandbox existed. The wait counts
 * against the call's deadline: a call still queued at its deadline fails
 * with DeadlineExceeded and says why. Nothing else is queued: reads, pulls,
 * exec, and the teardown (StopContainer waits out a grace period; the
 * sandboxes of 100 removed pods were stopped 15–35 % later with the bound
 * than without it, measured).
 */
import { Clock, type Timer } from '@app/clock';
import { CriError } from '@app/cri';

/** The calls queued, and their priority: the lower first (a pod's later steps before a new pod's first). */
export const RUNTIME_CHANGES: Readonly<Record<string, number>> = {
  StartContainer: 0,
  CreateContainer: 1,
  RunPodSandbox: 2,
};

const PRIORITIES = Math.max(...Object.values(RUNTIME_CHANGES)) + 1;

interface Waiter {
  start: () => void;
  timer?: Timer;
}

/** The queue of runtime changes: `limit` of them in flight at once, the rest waiting in order of priority. */
export class RuntimeChangeQueue {
  private running = 0;
  /** One FIFO queue per priority. */
  private readonly queues: Waiter[][] = Array.from({ length: PRIORITIES }, () => []);

  /** @param limit calls at once; 0: no bound. */
  constructor(
    readonly limit: number,
    private readonly clock: Clock,
  ) {}

  /** Calls waiting for a slot now. */
  get waiting(): number {
    return this.queues.reduce((n, q) => n + q.length, 0);
  }

  /**
   * Runs `call` once a slot is free when `method` is a runtime change (at once otherwise), with what is left of
   * `deadlineMs` after the wait. Rejects with DeadlineExceeded when the deadline passes in the queue.
   */
  async run<T>(method: string, deadlineMs: number, call: (deadlineMs: number) => Promise<T>): Promise<T> {
    const priority = RUNTIME_CHANGES[method];
    if (priority === undefined || this.limit <= 0) return call(deadlineMs);
    const queuedAt = this.clock.now();
    if (this.running < this.limit) this.running++;
    else await this.wait(priority, method, deadlineMs);
    try {
      return await call(Math.max(1, deadlineMs - (this.clock.now() - queuedAt)));
    } finally {
      this.release();
    }
  }

  /** Resolves once a slot is handed to this call (the slot counted as running); rejects at the deadline. */
  private wait(priority: number, method: string, deadlineMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const queue = this.queues[priority] ?? [];
      const waiter: Waiter = {
        start: () => {
          waiter.timer?.cancel();
          resolve();
        },
      };
      waiter.timer = this.clock.setTimer(deadlineMs, () => {
        const i = queue.indexOf(waiter);
        if (i < 0) return;
        queue.splice(i, 1);
        reject(new CriError('DeadlineExceeded', `${method}: deadline of ${deadlineMs} ms passed while waiting for one of the ${this.limit} runtime changes in flight (RUNTIME_CHANGE_CONCURRENCY)`));
      });
      queue.push(waiter);
    });
  }

  /** A slot is free: handed to the first waiter of the first queue that has one, else given back. */
  private release(): void {
    const next = this.queues.find((q) => q.length > 0)?.shift();
    if (next) next.start();
    else this.running--;
  }
}
