import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { contractClaim } from '@app/contracts';
import { HealthChecks } from './health.js';
import { MAX_PEERS_OUTSIDE_POLICY, PeerContracts, type PeerContractsLogger } from './peer-contracts.js';

/** Records what was logged, as `level: message` with its fields. */
class RecordingLogger implements PeerContractsLogger {
  readonly lines: { level: 'warn' | 'info'; obj: Record<string, unknown>; msg: string }[] = [];
  warn(obj: object, msg: string): void {
    this.lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg });
  }
  info(obj: object, msg: string): void {
    this.lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg });
  }
}

function setup(version = 1, forgetAfterMs = 60_000) {
  const clock = new FakeClock();
  const logger = new RecordingLogger();
  const peers = new PeerContracts({ claim: contractClaim(version), clock, logger, self: `pod-worker@n#0`, forgetAfterMs });
  return { clock, logger, peers };
}

describe('PeerContracts: what a service heard of its peers\' contract versions (docs/adr/0034)', () => {
  it('peers within the policy are not logged and leave /readyz plain', () => {
    const { peers, logger } = setup(2);
    for (const version of [1, 2, 3]) peers.heard({ sender: `pleg@n#${version}`, version }, 'kubelet.n.pleg.u');
    assert.deepEqual(logger.lines, []);
    assert.deepEqual(peers.check(), { ok: true, detail: 'contract 2, accepts 1..2' });
    assert.deepEqual(peers.info(), { version: 2, accepts: { oldest: 1, newest: 2 }, peersOutsidePolicy: [] });
  });

  it('a peer too new is logged once, structured, naming the peer, its version and the range accepted; /readyz stays ok but degraded', () => {
    const { peers, logger } = setup(1);
    for (let i = 0; i < 5; i++) peers.heard({ sender: 'sync-loop@n#1', service: 'sync-loop', version: 3 }, 'kubelet.n.work.0.u');
    assert.equal(logger.lines.length, 1);
    const [line] = logger.lines;
    assert.equal(line?.level, 'warn');
    assert.deepEqual(
      { peer: line?.obj['peer'], peerContractVersion: line?.obj['peerContractVersion'], contractVersion: line?.obj['contractVersion'], accepts: line?.obj['accepts'], why: line?.obj['why'] },
      { peer: 'sync-loop@n#1', peerContractVersion: 3, contractVersion: 1, accepts: '1', why: 'peer too new' },
    );
    assert.match(line?.msg ?? '', /^peer outside the contract skew policy: sync-loop@n#1 \(peer too new\): the peer speaks contract 3, which accepts 2\.\.3; this service speaks 1 and accepts 1/);
    const check = peers.check();
    assert.equal(check.ok, true, 'a peer\'s version never makes this service unready');
    assert.equal(check.degraded, true);
    assert.match(check.detail ?? '', /degraded: peers outside the skew policy: sync-loop@n#1 speaks 3 \(peer too new\)/);
    assert.deepEqual(peers.info().peersOutsidePolicy.map((p) => [p.peer, p.version, p.why, p.subject]), [['sync-loop@n#1', 3, 'peer too new', 'kubelet.n.work.0.u']]);
  });

  it('from the odd one\'s side: every peer too old is logged and listed', () => {
    const { peers, logger } = setup(3);
    peers.heard({ sender: 'cri-gateway@n#0', version: 1 }, 'reply');
    peers.heard({ sender: 'pod-worker@n#1', version: 1 }, 'reply');
    assert.deepEqual(logger.lines.map((l) => [l.obj['peer'], l.obj['why'], l.obj['accepts']]), [['cri-gateway@n#0', 'peer too old', '2..3'], ['pod-worker@n#1', 'peer too old', '2..3']]);
    assert.deepEqual(peers.info().peersOutsidePolicy.map((p) => p.peer), ['cri-gateway@n#0', 'pod-worker@n#1']);
  });

  it('a peer not heard from for forgetAfterMs drops out; one heard again stays (fake clock)', async () => {
    const { peers, clock } = setup(1, 60_000);
    peers.heard({ sender: 'a@n#0', version: 3 }, 's');
    peers.heard({ sender: 'b@n#0', version: 3 }, 's');
    await clock.step(40_000);
    peers.heard({ sender: 'b@n#0', version: 3 }, 's');
    await clock.step(30_000);
    assert.deepEqual(peers.info().peersOutsidePolicy.map((p) => p.peer), ['b@n#0']);
    await clock.step(31_000);
    assert.deepEqual(peers.info().peersOutsidePolicy, []);
    assert.deepEqual(peers.check(), { ok: true, detail: 'contract 1, accepts 1' });
  });

  it('a peer back within the policy (the same instance at another version) is cleared at once, with an info line', () => {
    const { peers, logger } = setup(1);
    peers.heard({ sender: 'pleg@n#0', version: 3 }, 's');
    peers.heard({ sender: 'pleg@n#0', version: 1 }, 's');
    assert.deepEqual(logger.lines.map((l) => `${l.level}: ${l.msg.split(':')[0] ?? ''}`), ['warn: peer outside the contract skew policy', 'info: peer is back within the contract skew policy']);
    assert.deepEqual(peers.info().peersOutsidePolicy, []);
  });

  it('a peer that changes to another version outside the policy is logged again', () => {
    const { peers, logger } = setup(1);
    peers.heard({ sender: 'pleg@n#0', version: 3 }, 's');
    peers.heard({ sender: 'pleg@n#0', version: 4 }, 's');
    assert.deepEqual(logger.lines.map((l) => l.obj['peerContractVersion']), [3, 4]);
  });

  it('remembers at most MAX_PEERS_OUTSIDE_POLICY peers: the one heard from longest ago makes room', async () => {
    const { peers, clock } = setup(1);
    for (let i = 0; i < MAX_PEERS_OUTSIDE_POLICY; i++) {
      peers.heard({ sender: `p${String(i).padStart(3, '0')}@n#0`, version: 3 }, 's');
      await clock.step(1);
    }
    peers.heard({ sender: 'p000@n#0', version: 3 }, 's'); // heard again: now the newest
    peers.heard({ sender: 'late@n#0', version: 3 }, 's');
    const names = peers.info().peersOutsidePolicy.map((p) => p.peer);
    assert.equal(names.length, MAX_PEERS_OUTSIDE_POLICY);
    assert.ok(names.includes('late@n#0') && names.includes('p000@n#0') && !names.includes('p001@n#0'), 'p001, heard from longest ago, made room');
  });

  it('its own messages and nameless ones are no peer\'s', () => {
    const { peers, logger } = setup(1);
    peers.heard({ sender: 'pod-worker@n#0', version: 9 }, 's');
    peers.heard({ version: 9 }, 's');
    assert.deepEqual(logger.lines, []);
  });

  it('a degraded check keeps /readyz at ok and is named in the report', () => {
    const { peers } = setup(1);
    const health = new HealthChecks();
    health.addReadiness('nats', () => ({ ok: true }));
    health.addReadiness('contractVersions', () => peers.check());
    assert.equal(health.ready().degraded, undefined);
    peers.heard({ sender: 'sync-loop@n#1', version: 3 }, 's');
    const report = health.ready();
    assert.equal(report.ok, true);
    assert.deepEqual(report.degraded, ['contractVersions']);
  });
});
