/** NatsCriClient on a real nats-server when the gateway is missing or silent: errors a caller can act on. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { CRI_TIMEOUT_HEADER, CriError, NatsCriClient, REPLY_MARGIN_MS } from '@app/cri';
import { startNats, type NatsServer } from '../deploy/local/stack.js';

describe('NatsCriClient without a working gateway', { timeout: 60_000 }, () => {
  let nats: NatsServer;
  let nc: NatsConnection;

  before(async () => {
    nats = await startNats();
    nc = await connect({ servers: nats.url, ...nats.auth() });
  });
  after(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it('no gateway at all: Unavailable, at once', async () => {
    const cri = new NatsCriClient(nc, 'no-gateway', 'test');
    const t0 = Date.now();
    await assert.rejects(cri.runtime('ListContainers', {}), (err: unknown) => err instanceof CriError && err.code === 'Unavailable' && /no cri-gateway answers on cri\.no-gateway\.runtime\.ListContainers/.test(err.description));
    assert.ok(Date.now() - t0 < 2000);
  });

  it('a gateway that never answers: DeadlineExceeded after the caller\'s deadline, which it sent, plus the reply margin', async () => {
    const sent: (string | undefined)[] = [];
    const sub = nc.subscribe('cri.silent.runtime.*', { callback: (_e, m) => void sent.push(m.headers?.get(CRI_TIMEOUT_HEADER)) });
    try {
      const cri = new NatsCriClient(nc, 'silent', 'test', { requestMs: 1000, listMs: 200, pullMs: 1000 });
      const t0 = Date.now();
      await assert.rejects(cri.runtime('ListContainers', {}), (err: unknown) => err instanceof CriError && err.code === 'DeadlineExceeded');
      const took = Date.now() - t0;
      assert.deepEqual(sent, ['200'], 'the deadline travels with the call');
      assert.ok(took >= 200 + REPLY_MARGIN_MS - 20 && took < 200 + REPLY_MARGIN_MS + 5000, `took ${took}ms`);
    } finally {
      sub.unsubscribe();
    }
  });

  it('an error reply keeps its code', async () => {
    const sub = nc.subscribe('cri.erring.image.*', { callback: (_e, m) => void m.respond(new TextEncoder().encode('{"error":{"code":"NotFound","description":"image \\"x\\" not found"}}')) });
    try {
      const cri = new NatsCriClient(nc, 'erring', 'test');
      await assert.rejects(cri.image('ImageStatus', { image: { image: 'x' } }), { name: 'CriError', code: 'NotFound', description: 'image "x" not found' });
    } finally {
      sub.unsubscribe();
    }
  });
});
