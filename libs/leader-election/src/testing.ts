/** Test doubles of @app/leader-election. */
import { LeaderFence } from './leader-election.js';

/** A LeaderFence that leads with `token` until told otherwise (`token = undefined`: a standby). */
export class FakeLeaderFence extends LeaderFence {
  token: number | undefined = 1;
  get fencingToken(): number | undefined {
    return this.token;
  }
}
