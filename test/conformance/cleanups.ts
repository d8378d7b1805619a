/**
 * The conformance runner's cleanup: what it started (the lock, the bridge,
 * containerd, the control plane, the node...), stopped in reverse order
 * when the run ends or a signal stops it. It runs once and to its end: a
 * signal that arrives while it runs (a second Ctrl-C, `timeout`'s SIGINT to
 * the runner and then to its process group, a SIGTERM) is said and waits
 * for the same cleanup, so the bridge and the lock, the first steps pushed,
 * are always removed (issue 28 item 14).
 */
export interface CleanupStep {
  what: string;
  run: () => Promise<void> | void;
}

/** The signals that stop the runner. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export class Cleanups {
  private readonly steps: CleanupStep[] = [];
  private running?: Promise<void>;

  constructor(private readonly say: (line: string) => void) {}

  push(step: CleanupStep): void {
    this.steps.push(step);
  }

  /** Runs every step, the last pushed first; a step that fails is said and the next one runs. Every call waits for the one run. */
  run(): Promise<void> {
    this.running ??= this.runSteps();
    return this.running;
  }

  private async runSteps(): Promise<void> {
    for (const c of [...this.steps].reverse()) {
      try {
        await c.run();
      } catch (err) {
        this.say(`stopping ${c.what}: ${(err as Error).message}`);
      }
    }
  }

  /** SIGINT, SIGTERM, SIGHUP: the cleanup, then `exit(130)`; more signals meanwhile wait for it. */
  onSignals(exit: (code: number) => void): void {
    for (const sig of STOP_SIGNALS) {
      process.on(sig, () => {
        this.say(this.running ? `${sig}: the cleanup is running; it goes on to its end` : `${sig}: stopping what was started`);
        void this.run().finally(() => exit(130));
      });
    }
  }
}
