import { Controller, Get, Header, Inject, ServiceUnavailableException } from '@nestjs/common';
import type { Logger } from '@app/observability';
import { SERVICE_LOGGER } from '@app/service';
import { SummaryProvider, renderResourceMetrics, type Summary } from '@app/stats';

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
  async summary(): Promise<Summary> {
    try {
      return await this.provider.summary();
    } catch (err) {
      // Upstream answers 500 with the error; here what failed is said, as 503: the runtime or the host could not be read now.
      this.logger.warn({ err: (err as Error).message }, 'stats summary could not be read');
      throw new ServiceUnavailableException(`the stats summary could not be read: ${(err as Error).message}`);
    }
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
