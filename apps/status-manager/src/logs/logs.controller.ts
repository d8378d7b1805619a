import { Controller, Get, Inject, Param, Query, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Clock } from '@app/clock';
import { SERVICE_LOGGER } from '@app/service';
import type { Logger } from '@app/observability';
import { ContainerLogs, ContainerLogsError } from './container-logs.js';
import { LogOptionsError, parseLogOptions } from './cri-log.js';

/**
 * The kubelet server's log endpoint, `GET /containerLogs/<namespace>/<pod>/<container>`
 * (server.go getContainerLogs): text/plain, streamed. Guarded as `/pods` is
 * (libs/service http-access: loopback, or the bearer token).
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
    const fail = (status: number, message: string) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ statusCode: status, message }));
    };
    let stream;
    try {
      stream = await this.logs.open(namespace, pod, container, parseLogOptions(query, this.clock.now()));
    } catch (err) {
      if (err instanceof ContainerLogsError) return fail(err.status, err.message);
      if (err instanceof LogOptionsError) return fail(400, err.message);
      return fail(500, `reading the logs of ${namespace}/${pod}/${container}: ${(err as Error).message}`);
    }
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    req.on('aborted', () => gone.abort());
    res.writeHead(200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked', 'x-content-type-options': 'nosniff' });
    res.flushHeaders();
    const sink = {
      write: (chunk: Buffer) =>
        new Promise<void>((resolve) => {
          if (chunk.length === 0 || res.write(chunk)) return resolve();
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        }),
    };
    try {
      await stream.run(sink, gone.signal);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, namespace, pod, container }, 'streaming a container log failed');
    }
    res.end();
  }
}
