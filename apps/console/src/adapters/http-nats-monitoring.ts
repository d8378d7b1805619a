/** NatsMonitoring over HTTP: nats-server's monitoring port (NATS_MONITOR_URL). */
import { sampleMonitoring, type MonitoringSample } from '@app/nats';
import { NatsMonitoring } from '../console-views.js';

export class HttpNatsMonitoring extends NatsMonitoring {
  constructor(
    private readonly monitorUrl: string,
    private readonly timeoutMs = 5000,
  ) {
    super();
  }

  sample(): Promise<MonitoringSample> {
    return sampleMonitoring(this.monitorUrl, this.timeoutMs);
  }
}
