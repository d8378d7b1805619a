/**
 * Nest's HTTP platform on `node:http` alone: what every service's HTTP port
 * needs (routes with `:param` segments, the query, `app.use` middleware,
 * Nest's not-found and exception layers, JSON replies) and nothing else.
 * `@nestjs/platform-express` brought express, its body parsers with
 * iconv-lite, multer, busboy and mime-db into every process, about 7 MB of
 * each one's memory for routes that bodies never reach (Nest's body parser
 * is off; services read bodies with readJsonBody). docs/adr/0018.
 *
 * Not supported, and refused where Nest would call it: views, static
 * assets, CORS, versioning other than neutral, `StreamableFile`.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import { RequestMethod, VERSION_NEUTRAL, type NestApplicationOptions } from '@nestjs/common';
import { AbstractHttpAdapter } from '@nestjs/core';
import { match, type MatchFunction } from 'path-to-regexp';

/** The request as handlers see it: node's, with what Nest's parameter decorators read. */
export interface HttpRequest extends IncomingMessage {
  params: Record<string, string>;
  query: ParsedUrlQuery;
  body?: unknown;
}

type Next = (err?: unknown) => void;
type Handler = (req: HttpRequest, res: ServerResponse, next: Next) => unknown;
type ErrorHandler = (err: unknown, req: HttpRequest, res: ServerResponse, next: Next) => unknown;

interface Layer {
  /** Undefined for middleware (any method); GET routes also answer HEAD. */
  method?: string;
  matches: MatchFunction<Record<string, string | string[]>> | ((path: string) => { params: Record<string, string> } | false);
  handler: Handler | ErrorHandler;
  /** An exception layer: runs only for an error passed to next(err). */
  onError: boolean;
}

const ANY_PATH = (): { params: Record<string, string> } => ({ params: {} });

function decodeParam(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** A layer's matcher: `/` as a prefix is any path; `end: false` matches a prefix (middleware), `end: true` the whole path. */
function matcher(path: string, end: boolean): Layer['matches'] {
  return path === '/' && !end ? ANY_PATH : match(path, { decode: decodeParam, end });
}

function unsupported(what: string): Error {
  return new Error(`${what} is not supported by kubelet-split's HTTP platform (libs/service http-adapter.ts)`);
}

const METHOD_NAMES: Readonly<Record<string, string>> = {
  [RequestMethod.GET]: 'GET',
  [RequestMethod.POST]: 'POST',
  [RequestMethod.PUT]: 'PUT',
  [RequestMethod.DELETE]: 'DELETE',
  [RequestMethod.PATCH]: 'PATCH',
  [RequestMethod.OPTIONS]: 'OPTIONS',
  [RequestMethod.HEAD]: 'HEAD',
};

export class NodeHttpAdapter extends AbstractHttpAdapter<Server, HttpRequest, ServerResponse> {
  private readonly layers: Layer[] = [];
  private readonly sockets = new Set<Socket>();

  constructor() {
    super({});
  }

  // Routes and middleware, in the order registered (as express keeps them).
  override use(...args: unknown[]): this {
    const [path, handler] = typeof args[0] === 'string' ? [args[0], args[1]] : ['/', args[0]];
    if (typeof handler !== 'function') throw new TypeError('use() needs a handler function');
    const fn = handler as Handler | ErrorHandler;
    this.layers.push({ matches: matcher(path, false), handler: fn, onError: fn.length === 4 });
    return this;
  }
  override get(...args: unknown[]): this {
    return this.route('GET', args);
  }
  override post(...args: unknown[]): this {
    return this.route('POST', args);
  }
  override put(...args: unknown[]): this {
    return this.route('PUT', args);
  }
  override delete(...args: unknown[]): this {
    return this.route('DELETE', args);
  }
  override patch(...args: unknown[]): this {
    return this.route('PATCH', args);
  }
  override head(...args: unknown[]): this {
    return this.route('HEAD', args);
  }
  override options(...args: unknown[]): this {
    return this.route('OPTIONS', args);
  }
  override all(...args: unknown[]): this {
    return this.route(undefined, args);
  }

  private route(method: string | undefined, args: unknown[]): this {
    const [path, handler] = typeof args[0] === 'string' ? [args[0], args[1]] : ['/', args[0]];
    if (typeof handler !== 'function') throw new TypeError('a route needs a handler function');
    this.layers.push({ ...(method ? { method } : {}), matches: matcher(path, true), handler: handler as Handler, onError: false });
    return this;
  }

  private handle(incoming: IncomingMessage, res: ServerResponse): void {
    const req = incoming as HttpRequest;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    req.query = q < 0 ? {} : parseQuery(url.slice(q + 1));
    req.params = {};
    let i = 0;
    const next: Next = (err) => {
      while (i < this.layers.length) {
        const layer = this.layers[i++];
        if (!layer || layer.onError !== (err !== undefined)) continue;
        if (layer.method && layer.method !== req.method && !(layer.method === 'GET' && req.method === 'HEAD')) continue;
        const found = layer.matches(path);
        if (!found) continue;
        req.params = Object.fromEntries(Object.entries(found.params).map(([k, v]) => [k, Array.isArray(v) ? v.join('/') : String(v)]));
        try {
          const r = err !== undefined ? (layer.handler as ErrorHandler)(err, req, res, next) : (layer.handler as Handler)(req, res, next);
          if (r instanceof Promise) r.catch(next);
        } catch (e) {
          next(e ?? new Error('handler threw'));
        }
        return;
      }
      // Nest's not-found and exception layers answer everything; this is for a request before they are registered.
      if (res.headersSent) return void res.end();
      this.reply(res, { statusCode: err === undefined ? 404 : 500, message: err === undefined ? `Cannot ${req.method} ${path}` : 'Internal server error' }, err === undefined ? 404 : 500);
    };
    next();
  }

  override reply(res: ServerResponse, body: unknown, statusCode?: number): void {
    if (statusCode !== undefined) res.statusCode = statusCode;
    if (body === undefined || body === null) return void res.end();
    if (typeof body === 'object' && 'getStream' in body) throw unsupported('StreamableFile');
    let payload: string | Buffer;
    if (Buffer.isBuffer(body)) {
      payload = body;
      if (!res.hasHeader('content-type')) res.setHeader('content-type', 'application/octet-stream');
    } else if (typeof body === 'object') {
      // An Error's enumerable properties are not a reply (express answers an error status the same way).
      const value = body instanceof Error && res.statusCode >= 400 ? { statusCode: res.statusCode, message: STATUS_CODES[res.statusCode] ?? 'Error' } : body;
      payload = JSON.stringify(value);
      const type = res.getHeader('content-type');
      if (type === undefined || (res.statusCode >= 400 && !/json/i.test(String(type)))) res.setHeader('content-type', 'application/json; charset=utf-8');
    } else {
      payload = typeof body === 'string' ? body : (JSON.stringify(body) ?? ''); // a number or a boolean as its JSON text
      if (!res.hasHeader('content-type')) res.setHeader('content-type', 'text/plain; charset=utf-8');
    }
    res.setHeader('content-length', Buffer.byteLength(payload));
    res.end(payload);
  }
  override status(res: ServerResponse, statusCode: number): void {
    res.statusCode = statusCode;
  }
  override end(res: ServerResponse, message?: string): void {
    res.end(message);
  }
  override render(): never {
    throw unsupported('render()');
  }
  override redirect(res: ServerResponse, statusCode: number, url: string): void {
    res.writeHead(statusCode, { location: url });
    res.end();
  }
  override setErrorHandler(handler: ErrorHandler): void {
    this.layers.push({ matches: ANY_PATH, handler, onError: true });
  }
  override setNotFoundHandler(handler: Handler): void {
    this.layers.push({ matches: ANY_PATH, handler, onError: false });
  }
  override isHeadersSent(res: ServerResponse): boolean {
    return res.headersSent;
  }
  override getHeader(res: ServerResponse, name: string): unknown {
    return res.getHeader(name);
  }
  override setHeader(res: ServerResponse, name: string, value: string): void {
    res.setHeader(name, value);
  }
  override appendHeader(res: ServerResponse, name: string, value: string): void {
    res.appendHeader(name, value);
  }
  override getRequestHostname(req: HttpRequest): string {
    return (req.headers.host ?? '').replace(/:\d+$/, '');
  }
  override getRequestMethod(req: HttpRequest): string {
    return req.method ?? 'GET';
  }
  override getRequestUrl(req: HttpRequest): string {
    return req.url ?? '/';
  }

  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions) throw unsupported('httpsOptions');
    this.httpServer = createServer((req, res) => this.handle(req, res));
    if (options.forceCloseConnections) {
      this.httpServer.on('connection', (socket: Socket) => {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
      });
    }
  }
  override listen(port: number | string, hostname?: string | (() => void), callback?: () => void): Server {
    const p = Number(port);
    return typeof hostname === 'function' ? this.httpServer.listen(p, hostname) : this.httpServer.listen(p, hostname, callback);
  }
  override close(): Promise<void> | undefined {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    const server = this.httpServer as Server | undefined;
    if (!server?.listening) return undefined;
    return new Promise((resolve) => server.close(() => resolve()));
  }
  override getType(): string {
    return 'node-http';
  }
  isRouteOrderSensitive(): boolean {
    return true;
  }

  /** Bodies are read by the handlers (readJsonBody): no parser middleware. */
  override registerParserMiddleware(): void {}
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- Nest's signature
  override createMiddlewareFactory(requestMethod: RequestMethod): (path: string, callback: Function) => void {
    return (path, callback) => {
      const exact = path.endsWith('$');
      const p = exact ? path.slice(0, -1) : path;
      const method = METHOD_NAMES[requestMethod];
      this.layers.push({ ...(method ? { method } : {}), matches: matcher(p, exact), handler: callback as Handler, onError: false });
    };
  }
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- Nest's signature
  override applyVersionFilter(handler: Function, version: unknown): (req: HttpRequest, res: ServerResponse, next: () => void) => Function {
    if (version !== VERSION_NEUTRAL) throw unsupported('versioning');
    // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- Nest's signature
    return handler as (req: HttpRequest, res: ServerResponse, next: () => void) => Function;
  }
  override enableCors(): never {
    throw unsupported('CORS');
  }
  override useStaticAssets(): never {
    throw unsupported('static assets');
  }
  override setViewEngine(): never {
    throw unsupported('views');
  }
}
