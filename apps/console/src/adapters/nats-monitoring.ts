/**
 * NatsMonitoring over NATS itself, as the console's user: the account's connz, statz and JetStream totals
 * (@app/nats sampleMonitoring; permissions.ts readsMonitoring). nats-server has no monitoring port (docs/adr/0029).
 */
import { sampleMonitoring, type MonitoringRequester, type MonitoringSample } from '@app/nats';
import { NatsMonitoring } from '../console-views.js';

export class NatsAccountMonitoring extends NatsMonitoring {
  constructor(
    private readonly nc: MonitoringRequester,
    private readonly timeoutMs = 5000,
  ) {
    super();
  }

  sample(): Promise<MonitoringSample> {
    return sampleMonitoring(this.nc, this.timeoutMs);
  }
}
