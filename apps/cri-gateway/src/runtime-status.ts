/**
 * The Version and Status handshake, and then the runtime's health every
 * `pollMs` (the kubelet's updateRuntimeUp runs every 5s). /readyz is false
 * until the runtime has answered and while it does not; the detail reports
 * RuntimeReady and NetworkReady.
 */
import { Clock } from '@app/clock';
import type { CheckResult } from '@app/service';
import type { Logger } from '@app/observability';
import type { StatusResponse, VersionResponse } from '@app/cri';
import type { CriGateway } from './gateway.js';

export interface RuntimeState {
  /** The last Version answer; absent until the first handshake. */
  version?: { runtimeName: string; runtimeVersion: string; runtimeApiVersion: string };
  /** Runtime conditions by type (RuntimeReady, NetworkReady, ...). */
  conditions: Record<string, { status: boolean; reason: string; message: string }>;
  /** The last error talking to the runtime, cleared by the next success. */
  lastError?: string;
  lastSuccessAt?: number;
}

export class RuntimeStatusPoller {
  private readonly state: RuntimeState = { conditions: {} };
  private readonly abort = new AbortController();
  private loop?: Promise<void>;

  constructor(
    private readonly gateway: Pick<CriGateway, 'call'>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly pollMs = 5000,
  ) {}

  get current(): Readonly<RuntimeState> {
    return this.state;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  /** For /readyz: ready when the runtime answered the last poll and says RuntimeReady. */
  readiness(): CheckResult {
    const s = this.state;
    if (!s.version) return { ok: false, detail: `no answer from the runtime yet${s.lastError ? `: ${s.lastError}` : ''}` };
    const cond = (t: string) => (s.conditions[t] ? String(s.conditions[t].status) : 'unknown');
    const detail = `${s.version.runtimeName} ${s.version.runtimeVersion} (CRI ${s.version.runtimeApiVersion}): RuntimeReady=${cond('RuntimeReady')} NetworkReady=${cond('NetworkReady')}`;
    if (s.lastError) return { ok: false, detail: `${detail}; last call failed: ${s.lastError}` };
    return { ok: s.conditions['RuntimeReady']?.status === true, detail };
  }

  /** One handshake: Version (first time) and Status. Returns whether it succeeded. */
  async pollOnce(): Promise<boolean> {
    try {
      const version = (await this.gateway.call('runtime', 'Version', { version: 'v1' })) as VersionResponse;
      const status = (await this.gateway.call('runtime', 'Status', { verbose: false })) as StatusResponse;
      const first = !this.state.version;
      this.state.version = {
        runtimeName: version.runtimeName ?? '',
        runtimeVersion: version.runtimeVersion ?? '',
        runtimeApiVersion: version.runtimeApiVersion ?? '',
      };
      this.state.conditions = {};
      for (const c of status.status?.conditions ?? []) {
        this.state.conditions[c.type ?? ''] = { status: c.status === true, reason: c.reason ?? '', message: c.message ?? '' };
      }
      if (first || this.state.lastError) this.logger.info({ runtime: this.state.version, conditions: this.state.conditions }, 'container runtime answers');
      delete this.state.lastError;
      this.state.lastSuccessAt = this.clock.now();
      return true;
    } catch (err) {
      const message = (err as Error).message;
      if (this.state.lastError !== message) this.logger.warn({ err: message }, 'container runtime does not answer');
      this.state.lastError = message;
      return false;
    }
  }

  private async run(): Promise<void> {
    let backoff = 200;
    while (!this.abort.signal.aborted) {
      const ok = await this.pollOnce();
      backoff = ok ? this.pollMs : Math.min(backoff * 2, this.pollMs);
      try {
        await this.clock.sleep(ok ? this.pollMs : backoff, this.abort.signal);
      } catch {
        return; // aborted
      }
    }
  }
}
