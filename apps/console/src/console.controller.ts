import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Clock, type Timer } from '@app/clock';
import { ConsoleFeed, serverSentEvent } from './console-feed.js';
import { ConsoleFleet } from './console-fleet.js';
import { ConsoleTimelines, ConsoleTopology, PodNotFoundError } from './console-views.js';

/**
 * Where `npm run build` puts the bundle (apps/console/page/build.mjs): dist/console, seen from
 * dist/apps/console/src/, or from dist/bundle/chunks/ when the service runs from its bundle
 * (deploy/bundle.mjs).
 */
export const CONSOLE_BUNDLE_DIR = ['../../../console/', '../../console/']
  .map((rel) => fileURLToPath(new URL(rel, import.meta.url)))
  .find((dir) => existsSync(join(dir, 'index.html'))) ?? fileURLToPath(new URL('../../../console/', import.meta.url));

/** The bundle's files, and their types: nothing else is served from the directory. */
const ASSETS: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/**
 * The web console (issue 15): the page and its bundle, built at build time
 * (no CDN), and its live feed. Guarded as `/pods` is (libs/service
 * http-access: loopback for root and the service's user, or the bearer
 * token), for it shows the same pod data.
 */
@Controller('console')
export class ConsoleController {
  constructor(
    private readonly feed: ConsoleFeed,
    @Inject(Clock) private readonly clock: Clock,
    private readonly timelines: ConsoleTimelines,
    private readonly topology: ConsoleTopology,
    private readonly fleet: ConsoleFleet,
  ) {}

  @Get()
  async page(@Res() res: ServerResponse): Promise<void> {
    await this.file(res, 'index.html', 'text/html; charset=utf-8');
  }

  @Get('assets/:file')
  async asset(@Param('file') file: string, @Res() res: ServerResponse): Promise<void> {
    const type = ASSETS[file];
    if (!type) return notFound(res, `no console asset ${file}`);
    await this.file(res, file, type);
  }

  /** The live feed, text/event-stream: `pods` (the PodList, on connect and on each change) and `event` (each event heard). */
  @Get('events')
  events(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.write('retry: 2000\n\n');
    const unsubscribe = this.feed.subscribe((m) => void res.write(serverSentEvent(m)));
    // A comment now and then, so that proxies and ssh tunnels keep an idle feed open.
    let keepalive: Timer;
    const beat = () => {
      res.write(': keepalive\n\n');
      keepalive = this.clock.setTimer(15_000, beat);
    };
    keepalive = this.clock.setTimer(15_000, beat);
    const close = () => {
      keepalive.cancel();
      unsubscribe();
    };
    req.on('close', close);
    res.on('close', close);
  }

  /** A pod's timeline from its trace records (@app/nats buildTimeline): 404 for a pod the node does not have. */
  @Get('pods/:namespace/:name/trace')
  async trace(@Param('namespace') namespace: string, @Param('name') name: string, @Res() res: ServerResponse): Promise<void> {
    try {
      json(res, 200, await this.timelines.timeline(namespace, name));
    } catch (err) {
      if (err instanceof PodNotFoundError) return notFound(res, err.message);
      json(res, 503, { statusCode: 503, message: `reading the pod's trace records: ${(err as Error).message}` });
    }
  }

  /** The node's topology from NATS monitoring (@app/nats buildTopology), with the graph's edges. */
  @Get('topology')
  async topologyGraph(@Res() res: ServerResponse): Promise<void> {
    try {
      json(res, 200, await this.topology.graph());
    } catch (err) {
      json(res, 503, { statusCode: 503, message: (err as Error).message });
    }
  }

  /** The fleet page: the page's own route (`#/fleet`), where a bookmark of /console/fleet lands. */
  @Get('fleet')
  fleetPage(@Res() res: ServerResponse): void {
    res.writeHead(302, { location: '/console#/fleet', 'cache-control': 'no-store' });
    res.end();
  }

  /** The fleet's nodes from the hub (console-fleet.ts): `{enabled: false, message}` when FLEET_NATS_URL is unset. */
  @Get('fleet/nodes')
  async fleetNodes(@Res() res: ServerResponse): Promise<void> {
    json(res, 200, await this.fleet.view());
  }

  private async file(res: ServerResponse, name: string, type: string): Promise<void> {
    let body: Buffer;
    try {
      body = await readFile(`${CONSOLE_BUNDLE_DIR}${name}`);
    } catch {
      return notFound(res, `the console is not built (${CONSOLE_BUNDLE_DIR}${name} is missing): run npm run build`);
    }
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'self'; style-src 'self'; img-src 'self' data:" });
    res.end(body);
  }
}

function notFound(res: ServerResponse, message: string): void {
  json(res, 404, { statusCode: 404, message });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
