import { Controller, Get, Inject, Param, Query, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Clock } from '@app/clock';
import { SERVICE_LOGGER } from '@app/service';
import type { Logger } from '@app/observability';
import { ContainerLogs } from './container-logs.js';
import { serveContainerLogs } from './serve-container-logs.js';

/**
 * The kubelet server's log endpoint, `GET /containerLogs/<namespace>/<pod>/<container>`
 * (server.go getContainerLogs): text/plain, streamed. Guarded as `/pods` is
 * (libs/service http-access: loopback, or the bearer token). The kubelet API
 * server (../kubelet-server.ts) serves the same reply on its HTTPS port.
 */
@Controller()
export class LogsController {
  constructor(
    private readonly logs: ContainerLogs,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  @Get('containerLogs/:namespace/:pod/:container')
  async containerLogs(
    @Param('namespace') namespace: string,
    @Param('pod') pod: string,
    @Param('container') container: string,
    @Query() query: Record<string, unknown>,
    @Req() req: IncomingMessage,
    @Res() res: ServerResponse,
  ): Promise<void> {
    await serveContainerLogs({ logs: this.logs, clock: this.clock, logger: this.logger }, { namespace, pod, container }, query, req, res);
  }
}
