/** NatsCriClient on a real nats-server when the gateway is missing or silent: errors a caller can act on. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { CRI_PROGRESS_HEADER, CRI_PROGRESS_STALL_MS, CRI_TIMEOUT_HEADER, CriError, NatsCriClient, REPLY_MARGIN_MS } from '@app/cri';
import { startNats, type NatsServer } from '../deploy/local/stack.js';

describe('NatsCriClient without a working gateway', { timeout: 60_000 }, () => {
  let nats: NatsServer;
  let nc: NatsConnection;

  before(async () => {
    nats = await startNats();
    nc = await connect({ servers: nats.url });
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

  it('a gateway that took the call and died (no answer, no more progress): Unavailable within the stall time, not the 2-minute deadline', async () => {
    const asked: (string | undefined)[] = [];
    // It shows progress once, as the real gateway does every second, then is gone.
    const sub = nc.subscribe('cri.dying.runtime.*', {
      callback: (_e, m) => {
        asked.push(m.headers?.get(CRI_PROGRESS_HEADER));
        const h = headers();
        h.set(CRI_PROGRESS_HEADER, '1000');
        setTimeout(() => m.respond(new Uint8Array(0), { headers: h }), 1000);
      },
    });
    try {
      const cri = new NatsCriClient(nc, 'dying', 'test');
      const t0 = Date.now();
      await assert.rejects(cri.runtime('RunPodSandbox', { config: {} }), (err: unknown) => err instanceof CriError && err.code === 'Unavailable' && /went silent/.test(err.description));
      const took = Date.now() - t0;
      assert.deepEqual(asked, ['1000'], 'the client asked for progress every second');
      assert.ok(took >= 1000 + CRI_PROGRESS_STALL_MS - 50 && took < 1000 + CRI_PROGRESS_STALL_MS + 3000, `took ${took}ms`);
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
