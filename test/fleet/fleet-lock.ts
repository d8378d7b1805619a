/**
 * One fleet at a time on this machine: its nodes' bridges, subnets and
 * runtimes have fixed names (fleet-cluster.ts). `npm run fleet` and the
 * fleet bench hold this lock (a directory with the holder's pid) while
 * their fleet runs.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cleanups } from '../conformance/cleanups.js';

export const FLEET_LOCK = '/run/kubelet-split-fleet.lock';

/** The lock is held by a live process. */
export class FleetLockHeld extends Error {
  constructor(readonly pid: number) {
    super(`another fleet is running (pid ${pid}, ${FLEET_LOCK}): one at a time, the nodes' bridges and runtimes are the same`);
  }
}

/** Takes the lock (a stale one, its holder dead, is taken over) and pushes its removal onto `cleanups`; throws FleetLockHeld when a live process holds it. */
export function takeLock(cleanups: Cleanups): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(FLEET_LOCK);
      writeFileSync(join(FLEET_LOCK, 'pid'), String(process.pid));
      cleanups.push({ what: 'the lock', run: () => rmSync(FLEET_LOCK, { recursive: true, force: true }) });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(join(FLEET_LOCK, 'pid'), 'utf8').trim() || 0);
      let alive = false;
      try {
        alive = pid > 0 && (process.kill(pid, 0), true);
      } catch {
        alive = false;
      }
      if (alive) throw new FleetLockHeld(pid);
      rmSync(FLEET_LOCK, { recursive: true, force: true });
    }
  }
}
