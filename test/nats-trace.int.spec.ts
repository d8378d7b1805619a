/**
 * `trace --nats-trace` against a real nats-server (docs/adr/0015-tracing.md):
 * the built 2.14 server (deploy/nats/build.sh) reports, for a trace-only copy
 * of a hop sent by the admin CLI, the connection it came in on, the service
 * instances subscribed to its subject (by connection name, with their queue
 * group) and the stream a KV write would go to, and delivers nothing and
 * stores nothing; against a server without message tracing (Debian's
 * 2.9.10, which would deliver the copies) the CLI refuses before sending.
 * The services connect as their own NATS users (stop() fails on a
 * permission violation), so the probes need no power a service lacks.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { buildTimeline, TRACE_RECORD_TYPE, type TraceRecord } from '@app/tracing';
import { ensureBuckets, inboxPrefix } from '@app/nats';
import { natsServerBinary, startNats, type NatsServer } from '../deploy/local/stack.js';
import { joinServerViews, natsTraceProbes, serverTraces } from '../apps/cli/src/nats-trace.js';
import { askServerTraces } from '../apps/cli/src/trace-reader.js';

const NODE = 'nats-trace';
const UID = '0e2f6a51-7c1d-4e8b-9a3f-5b6c7d8e9f00';

function hop(spanId: string, at: number, o: Partial<TraceRecord>): TraceRecord {
  return { type: TRACE_RECORD_TYPE, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId, kind: 'publish', podUid: UID, instance: 'x', at, durationMs: 1, ...o };
}

const HOPS: TraceRecord[] = [
  hop('00f067aa0ba902b1', 0, { instance: `sync-loop@${NODE}#s1`, subject: `kubelet.${NODE}.work.0.${UID}` }),
  hop('00f067aa0ba902b2', 1, { kind: 'cri', instance: `pod-worker@${NODE}#p1`, subject: `cri.${NODE}.runtime.RunPodSandbox`, method: 'RunPodSandbox' }),
  hop('00f067aa0ba902b3', 2, { kind: 'kv.put', instance: `sync-loop@${NODE}#s1`, bucket: 'pods', key: `${NODE}.${UID}`, revision: 1 }),
];

/** A service's connection as its own user, subscribed like the service, counting what it receives. */
async function service(nats: NatsServer, user: 'pod-worker' | 'cri-gateway', subject: string, received: string[]): Promise<NatsConnection> {
  const nc = await connect({ servers: nats.url, name: `${user}@${NODE}#${user === 'pod-worker' ? 'p1' : 'g1'}`, ...nats.auth(user), inboxPrefix: inboxPrefix(user) });
  nc.subscribe(subject, { queue: user, callback: (err, m) => void received.push(err ? `error ${err.message}` : m.subject) });
  await nc.flush();
  return nc;
}

describe('trace --nats-trace on a real nats-server', { timeout: 60_000 }, () => {
  describe('the built server (message tracing)', () => {
    let nats: NatsServer;
    const conns: NatsConnection[] = [];
    const received: string[] = [];

    before(async () => {
      nats = await startNats();
      conns.push(await service(nats, 'pod-worker', `kubelet.${NODE}.work.0.*`, received));
      conns.push(await service(nats, 'cri-gateway', `cri.${NODE}.runtime.*`, received));
      const syncLoop = await connect({ servers: nats.url, name: `sync-loop@${NODE}#s1`, ...nats.auth('sync-loop'), inboxPrefix: inboxPrefix('sync-loop') });
      conns.push(syncLoop);
      await ensureBuckets(syncLoop, ['pods']);
      conns.push(await connect({ servers: nats.url, name: 'kubelet-split-cli', ...nats.auth() }));
    });
    after(async () => {
      for (const nc of conns) await nc.close();
      await nats?.stop();
    });

    it('runs nats-server 2.11 or later (deploy/nats/build.sh, run by deploy/install.sh)', () => {
      const admin = conns.at(-1);
      assert.ok(serverTraces(admin?.info?.version), `nats-server ${admin?.info?.version} from ${natsServerBinary()}: build one with bash deploy/nats/build.sh`);
    });

    it('shows each hop\'s ingress and its subscribers, delivering and storing nothing', async () => {
      const admin = conns.at(-1) ?? assert.fail('no admin connection');
      const hops = buildTimeline(UID, HOPS).hops;
      const { server, views } = await askServerTraces(admin, natsTraceProbes(hops));
      assert.match(server, /^nats-server 2\.\d+\.\d+/);
      const rows = joinServerViews(hops, views);
      assert.equal(rows.length, 3);
      const [work, cri, kv] = rows;
      assert.deepEqual(work?.server?.ingress, { name: 'kubelet-split-cli', cid: work?.server?.ingress.cid, kind: 'client', account: '$G' });
      assert.deepEqual(
        work?.server?.egress.map((e) => [e.name, e.subscription, e.queue]),
        [[`pod-worker@${NODE}#p1`, `kubelet.${NODE}.work.0.*`, 'pod-worker']],
      );
      assert.deepEqual(
        cri?.server?.egress.map((e) => [e.name, e.subscription, e.queue]),
        [[`cri-gateway@${NODE}#g1`, `cri.${NODE}.runtime.*`, 'cri-gateway']],
      );
      assert.deepEqual(kv?.server?.streams.map((s) => s.stream), ['KV_pods']);

      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(received, [], 'no service received a probe');
      const info = await (await jetstreamManager(admin)).streams.info('KV_pods');
      assert.equal(info.state.messages, 0, 'the bucket stored no probe');
    });
  });

  describe("Debian's nats-server 2.9.10 (no message tracing)", () => {
    const debian = '/usr/sbin/nats-server';
    let nats: NatsServer;
    const conns: NatsConnection[] = [];
    const received: string[] = [];

    before(async () => {
      assert.ok(existsSync(debian), `${debian}: deploy/install.sh installs Debian's nats-server`);
      nats = await startNats({ binary: debian });
      conns.push(await service(nats, 'pod-worker', `kubelet.${NODE}.work.0.*`, received));
      conns.push(await connect({ servers: nats.url, name: 'kubelet-split-cli', ...nats.auth() }));
    });
    after(async () => {
      for (const nc of conns) await nc.close();
      await nats?.stop();
    });

    it('refuses before sending anything, since the server would deliver the copies', async () => {
      const admin = conns.at(-1) ?? assert.fail('no admin connection');
      await assert.rejects(askServerTraces(admin, natsTraceProbes(buildTimeline(UID, HOPS).hops)), /nats-server 2\.9\.\d+ has no message tracing \(2\.11\.0 or later: deploy\/nats\/build\.sh/);
      await admin.flush();
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(received, []);
    });
  });
});
