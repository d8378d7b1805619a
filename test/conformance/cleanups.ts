/**
 * The conformance runner's cleanup: what it started (the lock, the bridge,
 * containerd, the control plane, the node...), stopped in reverse order
 * when the run ends or a signal stops it.
 */
export interface CleanupStep {
  what: string;
  run: () => Promise<void> | void;
}

export class Cleanups {
  private readonly steps: CleanupStep[] = [];
  private cleaningUp = false;

  constructor(private readonly say: (line: string) => void) {}

  push(step: CleanupStep): void {
    this.steps.push(step);
  }

  /** Runs every step, the last pushed first; a step that fails is said and the next one runs. */
  async run(): Promise<void> {
    if (this.cleaningUp) return;
    this.cleaningUp = true;
    for (const c of this.steps.reverse()) {
      try {
        await c.run();
      } catch (err) {
        this.say(`stopping ${c.what}: ${(err as Error).message}`);
      }
    }
  }

  /** SIGINT and SIGTERM: the cleanup, then `exit(130)`. */
  onSignals(exit: (code: number) => void): void {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        this.say(`${sig}: stopping what was started`);
        void this.run().finally(() => exit(130));
      });
    }
  }
}
