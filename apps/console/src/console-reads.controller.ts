import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import type { ServerResponse } from 'node:http';
import { MessageTypes, Subjects, decodeMessage } from '@app/contracts';
import { EventHub } from './adapters/event-hub.js';
import { ContainerLogTail, PodEvents } from './ports.js';

/**
 * What the pod pages read beside the feed, on the console's own port (the
 * page asks its own origin): a pod's events and a container's latest log
 * lines, relayed from the status manager and the kubelet server; and every
 * event heard on NATS, for the feed.
 */
@Controller()
export class ConsoleReadsController {
  constructor(
    private readonly events: PodEvents,
    private readonly logs: ContainerLogTail,
    private readonly hub: EventHub,
  ) {}

  @EventPattern(Subjects.events.pattern)
  onEvent(@Payload() data: unknown): void {
    this.hub.publish(decodeMessage(MessageTypes.event, data));
  }

  @Get('pods/:namespace/:name/events')
  async podEvents(@Param('namespace') namespace: string, @Param('name') name: string, @Res() res: ServerResponse): Promise<void> {
    try {
      json(res, 200, await this.events.eventsOf(namespace, name));
    } catch (err) {
      json(res, 503, { statusCode: 503, message: `the status manager did not answer for the pod's events: ${(err as Error).message}` });
    }
  }

  @Get('containerLogs/:namespace/:pod/:container')
  async containerLogs(
    @Param('namespace') namespace: string,
    @Param('pod') pod: string,
    @Param('container') container: string,
    @Query('tailLines') tailLines: string | undefined,
    @Res() res: ServerResponse,
  ): Promise<void> {
    const lines = Math.min(Math.max(Number.parseInt(tailLines ?? '200', 10) || 200, 1), 10_000);
    try {
      const r = await this.logs.tail(namespace, pod, container, lines);
      res.writeHead(r.status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(r.text);
    } catch (err) {
      json(res, 503, { statusCode: 503, message: `the kubelet server's read port did not answer: ${(err as Error).message}` });
    }
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
