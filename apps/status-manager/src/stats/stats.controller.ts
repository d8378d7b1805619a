import { Controller, Get, Header, Inject } from '@nestjs/common';
import type { Logger } from '@app/observability';
import { SERVICE_LOGGER } from '@app/service';
import { SummaryProvider } from './cri-stats-provider.js';
import { renderResourceMetrics } from './resource-metrics.js';
import type { Summary } from './summary-types.js';

/**
 * The kubelet server's stats routes (pkg/kubelet/server/stats/handler.go
 * `/stats/summary`, server.go `/metrics/resource`), beside `/pods` and
 * under the same access rule (the service's HTTP access middleware).
 */
@Controller()
export class StatsController {
  constructor(
    private readonly provider: SummaryProvider,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  @Get('stats/summary')
  summary(): Promise<Summary> {
    return this.provider.summary();
  }

  @Get('metrics/resource')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  async resourceMetrics(): Promise<string> {
    const summary = await this.provider.summary().catch((err: unknown) => {
      this.logger.warn({ err: (err as Error).message }, 'resource metrics: the summary could not be read');
      return undefined;
    });
    return renderResourceMetrics(summary);
  }
}
