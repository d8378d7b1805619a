import 'reflect-metadata';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BadRequestException, Controller, Get, Header, HttpCode, Module, Param, Post, Query, Req, Res, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NodeHttpAdapter } from './http-adapter.js';
import { readJsonBody, writeJson } from './http-body.js';

@Controller()
class TestController {
  @Get('pods/:namespace/:name')
  pod(@Param('namespace') namespace: string, @Param('name') name: string, @Query() query: Record<string, unknown>): unknown {
    return { namespace, name, query };
  }

  @Get('text')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  text(): string {
    return 'metric 1\n';
  }

  @Post(['echo/:what', 'again/:what'])
  @HttpCode(200)
  async echo(@Param('what') what: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    writeJson(res, 200, { what, body: await readJsonBody(req) });
  }

  @Get('bad')
  bad(): never {
    throw new BadRequestException('no such thing');
  }

  @Get('broken')
  broken(): never {
    throw new Error('a secret detail');
  }

  @Get('nothing')
  nothing(): undefined {
    return undefined;
  }
}

@Module({ controllers: [TestController] })
class TestModule {}

interface Reply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

function call(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('NodeHttpAdapter: Nest on node:http', () => {
  let app: INestApplication;
  let port = 0;
  const seen: string[] = [];

  before(async () => {
    app = await NestFactory.create(TestModule, new NodeHttpAdapter(), { logger: false, bodyParser: false, forceCloseConnections: true, abortOnError: false });
    app.use((req: IncomingMessage, res: ServerResponse, next: () => void) => {
      seen.push(req.url ?? '');
      if (req.headers['x-deny'] === '1') return writeJson(res, 403, { error: { code: 'PermissionDenied' } });
      next();
    });
    await app.listen(0, '127.0.0.1');
    port = ((app.getHttpServer() as Server).address() as AddressInfo).port;
  });
  after(async () => {
    await app.close();
  });

  it('routes by path, with its :params decoded and the query parsed (a repeated key is a list)', async () => {
    const r = await call(port, 'GET', '/pods/kube-system/a%20b?follow=true&x=1&x=2');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.deepEqual(JSON.parse(r.body), { namespace: 'kube-system', name: 'a b', query: { follow: 'true', x: ['1', '2'] } });
    assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.body)));
    assert.equal(r.headers['x-powered-by'], undefined);
  });

  it('a trailing slash and another case match the same route, as express did', async () => {
    assert.equal((await call(port, 'GET', '/pods/ns/n/')).status, 200);
    assert.equal((await call(port, 'GET', '/PODS/ns/n')).status, 200);
  });

  it('keeps a content type the handler set, and answers HEAD for a GET route without a body', async () => {
    const r = await call(port, 'GET', '/text');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(r.body, 'metric 1\n');
    const head = await call(port, 'HEAD', '/text');
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
  });

  it('a handler that takes the response reads the body itself, on each of its paths', async () => {
    const r = await call(port, 'POST', '/echo/one', '{"a":1}', { 'content-type': 'application/json' });
    assert.deepEqual([r.status, JSON.parse(r.body)], [200, { what: 'one', body: { a: 1 } }]);
    const again = await call(port, 'POST', '/again/two', '');
    assert.deepEqual([again.status, JSON.parse(again.body)], [200, { what: 'two', body: {} }]);
  });

  it('an unknown path or method is Nest\'s 404, an HttpException its own status, any other error a 500 that hides its message', async () => {
    const missing = await call(port, 'GET', '/nope');
    assert.equal(missing.status, 404);
    assert.deepEqual(JSON.parse(missing.body), { message: 'Cannot GET /nope', error: 'Not Found', statusCode: 404 });
    assert.equal((await call(port, 'DELETE', '/text')).status, 404);
    const bad = await call(port, 'GET', '/bad');
    assert.equal(bad.status, 400);
    assert.equal((JSON.parse(bad.body) as { message: string }).message, 'no such thing');
    const broken = await call(port, 'GET', '/broken');
    assert.equal(broken.status, 500);
    assert.doesNotMatch(broken.body, /secret/);
    assert.deepEqual(JSON.parse(broken.body), { statusCode: 500, message: 'Internal server error' });
  });

  it('an empty return is an empty 200', async () => {
    const r = await call(port, 'GET', '/nothing');
    assert.deepEqual([r.status, r.body], [200, '']);
  });

  it('app.use middleware runs first, in order, and may answer itself', async () => {
    seen.length = 0;
    const denied = await call(port, 'GET', '/text', undefined, { 'x-deny': '1' });
    assert.equal(denied.status, 403);
    assert.deepEqual(seen, ['/text']);
  });

  it('close() ends kept-alive connections instead of waiting for them', async () => {
    const local = await NestFactory.create(TestModule, new NodeHttpAdapter(), { logger: false, bodyParser: false, forceCloseConnections: true });
    await local.listen(0, '127.0.0.1');
    const p = ((local.getHttpServer() as Server).address() as AddressInfo).port;
    const closed = new Promise<void>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: p, path: '/text', headers: { connection: 'keep-alive' } }, (res) => {
        res.resume();
        res.socket.on('close', () => resolve());
      });
      req.on('error', reject);
      req.end();
    });
    await new Promise((r) => setTimeout(r, 50));
    await local.close();
    await closed;
  });
});
