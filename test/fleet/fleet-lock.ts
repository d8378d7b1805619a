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

/**
 * Takes the lock (a stale one, its holder dead, is taken over) and returns
 * its release; throws FleetLockHeld when another live process holds it. A
 * process that holds it already gets a release that does nothing (the bench
 * takes it before Fleet.start, which takes it too).
 */
export function takeFleetLock(): () => void {
  const pidFile = join(FLEET_LOCK, 'pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(FLEET_LOCK);
      writeFileSync(pidFile, String(process.pid));
      return () => rmSync(FLEET_LOCK, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let pid = 0;
      try {
        pid = Number(readFileSync(pidFile, 'utf8').trim() || 0);
      } catch {
        pid = 0;
      }
      if (pid === process.pid) return () => undefined;
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
  throw new Error(`cannot take ${FLEET_LOCK}`);
}

/** takeFleetLock, its release pushed onto `cleanups`. */
export function takeLock(cleanups: Cleanups): void {
  const release = takeFleetLock();
  cleanups.push({ what: 'the lock', run: release });
}
