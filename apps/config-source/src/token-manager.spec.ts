import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, type ServiceAccountTokenRequestMessage } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { ApiObjectError } from './object-manager.js';
import { TokenRequester, type IssuedToken, type TokenRequestSpec } from './ports.js';
import { ServiceAccountTokenManager } from './token-manager.js';

/** Mints `token-<n>` valid for the spec's expirationSeconds from the clock's now; `fail` makes the next requests reject. */
class FakeTokenRequester extends TokenRequester {
  readonly requests: { namespace: string; serviceAccountName: string; spec: TokenRequestSpec }[] = [];
  fail?: string;
  constructor(private readonly clock: FakeClock) {
    super();
  }
  request(namespace: string, serviceAccountName: string, spec: TokenRequestSpec): Promise<IssuedToken> {
    this.requests.push({ namespace, serviceAccountName, spec });
    if (this.fail) return Promise.reject(new Error(this.fail));
    return Promise.resolve({ token: `token-${this.requests.length}`, expiresAt: this.clock.now() + spec.expirationSeconds * 1000 });
  }
}

const REQ: ServiceAccountTokenRequestMessage = { type: MessageTypes.serviceAccountTokenRequest, namespace: 'ns', serviceAccountName: 'default', podName: 'web', podUid: 'u1', expirationSeconds: 3600 };

function setup() {
  const clock = new FakeClock(1_000_000);
  const requester = new FakeTokenRequester(clock);
  return { clock, requester, tokens: new ServiceAccountTokenManager(requester, clock, silentLogger()) };
}

describe('ServiceAccountTokenManager (token_manager.go)', () => {
  it('requests a token bound to the pod, with the audience, and keeps it while fresh', async () => {
    const { clock, requester, tokens } = setup();
    const first = await tokens.get({ ...REQ, audiences: ['vault'] });
    assert.deepEqual(first, { type: MessageTypes.serviceAccountToken, token: 'token-1', expirationTimestamp: new Date(1_000_000 + 3_600_000).toISOString() });
    assert.deepEqual(requester.requests, [{ namespace: 'ns', serviceAccountName: 'default', spec: { audiences: ['vault'], expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'u1' } } }]);
    await clock.step(2_800_000); // under 80 % of the hour
    assert.equal((await tokens.get({ ...REQ, audiences: ['vault'] })).token, 'token-1');
    assert.equal(requester.requests.length, 1);
  });

  it('refreshes a token past 80 % of its TTL', async () => {
    const { clock, tokens } = setup();
    await tokens.get(REQ);
    await clock.step(2_900_000);
    assert.equal((await tokens.get(REQ)).token, 'token-2');
  });

  it('another pod, audience or expiration is another token', async () => {
    const { tokens } = setup();
    const got = [await tokens.get(REQ), await tokens.get({ ...REQ, podUid: 'u2', podName: 'web2' }), await tokens.get({ ...REQ, audiences: ['x'] }), await tokens.get({ ...REQ, expirationSeconds: 7200 })];
    assert.deepEqual(got.map((t) => t.token), ['token-1', 'token-2', 'token-3', 'token-4']);
  });

  it('a failed refresh keeps a token still valid; an expired one is an error that says so', async () => {
    const { clock, requester, tokens } = setup();
    await tokens.get(REQ);
    await clock.step(3_000_000);
    requester.fail = 'connection refused';
    assert.equal((await tokens.get(REQ)).token, 'token-1');
    await clock.step(700_000);
    await assert.rejects(tokens.get(REQ), (err: unknown) => err instanceof ApiObjectError && err.code === 'Unavailable' && err.message === 'token ["default","ns",[],3600,"web","u1"] expired and refresh failed: connection refused');
  });

  it('a first request that fails says why', async () => {
    const { requester, tokens } = setup();
    requester.fail = 'serviceaccounts "default" is forbidden';
    await assert.rejects(tokens.get(REQ), { message: 'failed to fetch token: serviceaccounts "default" is forbidden' });
  });

  it('a node that has not joined a cluster says so', async () => {
    const tokens = new ServiceAccountTokenManager(null, new FakeClock(0), silentLogger());
    await assert.rejects(tokens.get(REQ), (err: unknown) => err instanceof ApiObjectError && err.code === 'NotJoined' && /has not joined a cluster/.test(err.message));
  });
});
