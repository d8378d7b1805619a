/**
 * The termination order of sidecars (kuberuntime_termination_order.go
 * terminationOrdering), which killPod uses when the pod has restartable init
 * containers (killContainersWithSyncResult):
 *
 *  - every container is killed at once, and runs its preStop hook at once;
 *  - a sidecar then waits for its turn before its StopContainer: until every
 *    main container has exited, and the sidecar declared after it (the next
 *    one in reverse order of declaration) has exited too;
 *  - the wait is bounded by what is left of the sidecar's grace period, and
 *    its StopContainer gets what is left after the wait (whole seconds,
 *    truncated, at least the 2s minimum: killContainer);
 *  - a container that is not running is done from the start; one whose
 *    StopContainer failed is never done (whoever waits on it waits out its
 *    grace period), as upstream;
 *  - ours: a kill refused because the replica is no longer the owner of the
 *    pod's shard (NotLeaderError) ends the ordering (`abort`): every sidecar
 *    still waiting fails at once with that error instead of waiting out its
 *    grace period for a StopContainer that would be refused too.
 *
 * Time comes from the Clock: the fake clock drives the grace periods in tests.
 */
import type { Clock, Timer } from '@app/clock';
import type { Pod } from '@app/contracts';
import { isRestartableInitContainer } from '@app/kube';

/** A container's end, which those who wait on it await. */
interface Terminated {
  done: Promise<void>;
  close: () => void;
}

function terminated(): Terminated {
  let close = () => undefined as void;
  const done = new Promise<void>((resolve) => (close = resolve));
  return { done, close };
}

export class TerminationOrdering {
  /** By container name: its end, until it ended. */
  private readonly terminated = new Map<string, Terminated>();
  /** By container name: what it waits for before it is stopped. */
  private readonly prereqs = new Map<string, Promise<void>[]>();
  /** Why the kill was given up (abort), if it was. */
  private abortedWith?: Error;
  private readonly aborted: Promise<void>;
  private abortNow: () => void = () => undefined;

  /** newTerminationOrdering: from the pod spec and the names of the containers that run. */
  constructor(
    pod: Pod,
    runningContainerNames: readonly string[],
    private readonly clock: Clock,
  ) {
    this.aborted = new Promise<void>((resolve) => (this.abortNow = resolve));
    const runs = new Set(runningContainerNames);
    const track = (name: string): Terminated => {
      const t = terminated();
      this.terminated.set(name, t);
      // Not running: nothing waits on it.
      if (!runs.has(name)) this.containerTerminated(name);
      return t;
    };
    // Sidecars wait on every main container.
    const mains = pod.spec.containers.map((c) => track(c.name).done);
    let later: Promise<void> | undefined;
    for (const ic of [...(pod.spec.initContainers ?? [])].reverse()) {
      const t = track(ic.name);
      if (!isRestartableInitContainer(ic)) continue;
      // And on the sidecar declared after them.
      this.prereqs.set(ic.name, [...mains, ...(later ? [later] : [])]);
      later = t.done;
    }
  }

  /**
   * waitForTurn: resolves when the container may be stopped, at the latest
   * after `gracePeriodSeconds`, with the seconds it waited. No grace left
   * means no wait. Rejects with the abort's error once the ordering was
   * aborted, at once for those already waiting.
   */
  async waitForTurn(name: string, gracePeriodSeconds: number): Promise<number> {
    this.throwIfAborted();
    if (gracePeriodSeconds <= 0) return 0;
    const started = this.clock.now();
    const prereqs = this.prereqs.get(name) ?? [];
    if (prereqs.length > 0) {
      let timer: Timer | undefined;
      const expired = new Promise<void>((resolve) => (timer = this.clock.setTimer(gracePeriodSeconds * 1000, resolve)));
      await Promise.race([Promise.all(prereqs), expired, this.aborted]);
      timer?.cancel();
      this.throwIfAborted();
    }
    return (this.clock.now() - started) / 1000;
  }

  /** The kill is given up (the replica lost the pod's shard): every waiter, now and later, fails with `err`. */
  abort(err: Error): void {
    this.abortedWith ??= err;
    this.abortNow();
  }

  private throwIfAborted(): void {
    if (this.abortedWith) throw this.abortedWith;
  }

  /** containerTerminated: the container exited (its StopContainer returned). */
  containerTerminated(name: string): void {
    this.terminated.get(name)?.close();
    this.terminated.delete(name);
  }
}
