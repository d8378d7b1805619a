/**
 * A container killed for memory, reported as an event on its pod. Upstream
 * records only the whole-node OOM (the OOM watcher's SystemOOM on the Node,
 * node/oom-watcher.ts); a container over its own limit shows `OOMKilled` in
 * its terminated state and nothing else. The issue asks for an event too
 * (ADR 0014): the status manager, which holds both the previous and the new
 * status, sends one the first time a status shows a container instance
 * (by container ID) terminated with reason OOMKilled, in its state or its
 * lastState. A restored status sends none: it was seen before.
 */
import type { ContainerStatus, PodStatus } from '@app/contracts';

export const OOM_KILLED_REASON = 'OOMKilled';

export interface OomKill {
  /** The container's name, and whether it is an init container (its event's fieldPath). */
  container: string;
  init: boolean;
  containerId: string;
  exitCode: number;
}

function killsIn(status: PodStatus | undefined): OomKill[] {
  const kills: OomKill[] = [];
  const scan = (list: ContainerStatus[] | undefined, init: boolean) => {
    for (const cs of list ?? []) {
      for (const t of [cs.state?.terminated, cs.lastState?.terminated]) {
        if (t?.reason !== OOM_KILLED_REASON) continue;
        kills.push({ container: cs.name, init, containerId: t.containerID ?? cs.containerID ?? '', exitCode: t.exitCode ?? 137 });
      }
    }
  };
  scan(status?.initContainerStatuses, true);
  scan(status?.containerStatuses, false);
  return kills;
}

/** The OOM kills `after` shows that `before` did not (one per container instance). */
export function newOomKills(before: PodStatus | undefined, after: PodStatus): OomKill[] {
  const seen = new Set(killsIn(before).map((k) => `${k.container}/${k.containerId}`));
  const out = new Map<string, OomKill>();
  for (const k of killsIn(after)) {
    const key = `${k.container}/${k.containerId}`;
    if (!seen.has(key)) out.set(key, k);
  }
  return [...out.values()];
}

/** The event's message. */
export function oomKillMessage(k: OomKill): string {
  return `Container ${k.container} was killed: it ran out of memory (OOMKilled, exit code ${k.exitCode})`;
}
