import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { CriError, type CriService } from '@app/cri';
import { silentLogger } from '@app/observability';
import { RuntimeStatusPoller } from './runtime-status.js';

/** A gateway whose runtime is up or down as the test says. */
class ScriptedGateway {
  up = true;
  networkReady = true;
  calls: string[] = [];
  call(_service: CriService, method: string): Promise<unknown> {
    this.calls.push(method);
    if (!this.up) return Promise.reject(new CriError('Unavailable', 'connection refused'));
    if (method === 'Version') return Promise.resolve({ version: '0.1.0', runtimeName: 'containerd', runtimeVersion: '1.6.20', runtimeApiVersion: 'v1' });
    return Promise.resolve({
      status: {
        conditions: [
          { type: 'RuntimeReady', status: true, reason: '', message: '' },
          { type: 'NetworkReady', status: this.networkReady, reason: this.networkReady ? '' : 'NetworkPluginNotReady', message: '' },
        ],
      },
    });
  }
}

describe('RuntimeStatusPoller', () => {
  it('is not ready before the runtime has answered', () => {
    const poller = new RuntimeStatusPoller(new ScriptedGateway(), new FakeClock(0), silentLogger());
    assert.equal(poller.readiness().ok, false);
    assert.match(poller.readiness().detail ?? '', /no answer from the runtime yet/);
  });

  it('is ready after Version and Status, and reports RuntimeReady and NetworkReady', async () => {
    const gw = new ScriptedGateway();
    gw.networkReady = false;
    const poller = new RuntimeStatusPoller(gw, new FakeClock(0), silentLogger());
    assert.equal(await poller.pollOnce(), true);
    assert.deepEqual(gw.calls, ['Version', 'Status']);
    const r = poller.readiness();
    assert.equal(r.ok, true);
    assert.equal(r.detail, 'containerd 1.6.20 (CRI v1): RuntimeReady=true NetworkReady=false');
  });

  it('turns unready when the runtime stops answering, and ready again when it is back', async () => {
    const gw = new ScriptedGateway();
    const clock = new FakeClock(0);
    const poller = new RuntimeStatusPoller(gw, clock, silentLogger(), 5000);
    poller.start();
    await clock.step(0);
    assert.equal(poller.readiness().ok, true);
    gw.up = false;
    await clock.step(5000);
    assert.equal(poller.readiness().ok, false);
    assert.match(poller.readiness().detail ?? '', /connection refused/);
    gw.up = true;
    await clock.step(5000);
    assert.equal(poller.readiness().ok, true);
    await poller.stop();
  });

  it('retries the first handshake quickly with a growing backoff, capped at the poll period', async () => {
    const gw = new ScriptedGateway();
    gw.up = false;
    const clock = new FakeClock(0);
    const poller = new RuntimeStatusPoller(gw, clock, silentLogger(), 5000);
    poller.start();
    await clock.step(0);
    const attempts = () => gw.calls.filter((c) => c === 'Version').length;
    assert.equal(attempts(), 1);
    await clock.step(400); // 400ms backoff
    assert.equal(attempts(), 2);
    await clock.step(800);
    assert.equal(attempts(), 3);
    await clock.step(1600 + 3200 + 5000);
    assert.equal(attempts(), 6);
    gw.up = true;
    await clock.step(5000);
    assert.equal(poller.readiness().ok, true);
    await poller.stop();
  });
});
