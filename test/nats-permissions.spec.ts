/**
 * The NATS permission table (@app/nats permissions.ts) against the code it
 * is meant to allow, so that they cannot drift apart:
 *  - every subject a service's Nest handlers subscribe to (their
 *    @EventPattern/@MessagePattern, and the info every service answers);
 *  - every subject family its source builds (`Subjects.<family>.build`: a
 *    publish or a request) or subscribes to (`.wildcard`, `.pattern`), every
 *    CRI method it calls, and the events it records;
 *  - every bucket its main.ts declares;
 * are granted to that service's user. The real server then enforces exactly
 * the generated config (test/security.e2e.spec.ts), and every integration
 * and end-to-end test fails on a permission violation the server logs
 * (deploy/local/stack.ts startNats).
 */
import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Type } from '@nestjs/common';
import { SERVICE_NAMES, Subjects, resolvePattern, type ServiceName } from '@app/contracts';
import { NatsCriClient, RUNTIME_METHOD_INFO } from '@app/cri';
import type { Msg, NatsConnection, PublishOptions, SubscriptionOptions } from '@nats-io/transport-node';
import { BUCKETS, CRI_RUNTIME_CHANGES, CRI_RUNTIME_READS, CRI_RUNTIME_STREAMING, NATS_USERS, familySubject, grantedBuckets, inboxPrefix, passwordVariable, permits, serviceSubjects, type BucketId, type SubjectFamily } from '@app/nats';
import { ServiceInfoController } from '@app/service';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { ConfigSourceModule } from '../apps/config-source/src/config-source.module.js';
import { SyncLoopModule } from '../apps/sync-loop/src/sync-loop.module.js';
import { PodWorkerModule } from '../apps/pod-worker/src/pod-worker.module.js';
import { PlegModule } from '../apps/pleg/src/pleg.module.js';
import { ProberModule } from '../apps/prober/src/prober.module.js';
import { StatusManagerModule } from '../apps/status-manager/src/status-manager.module.js';
import { KubeletServerModule } from '../apps/kubelet-server/src/kubelet-server.module.js';
import { NodeStatusModule } from '../apps/node-status/src/node-status.module.js';
import { ConsoleModule } from '../apps/console/src/console.module.js';
import { CriGatewayModule } from '../apps/cri-gateway/src/cri-gateway.module.js';

const NODE = 'node-a';
const MODULES: Readonly<Record<ServiceName, Type<unknown>>> = {
  'config-source': ConfigSourceModule,
  'sync-loop': SyncLoopModule,
  'pod-worker': PodWorkerModule,
  pleg: PlegModule,
  prober: ProberModule,
  'status-manager': StatusManagerModule,
  'kubelet-server': KubeletServerModule,
  'node-status': NodeStatusModule,
  console: ConsoleModule,
  'cri-gateway': CriGatewayModule,
};
const FAMILIES = Object.keys(Subjects).filter((f) => f !== 'serviceInfo' && f !== 'serviceCommand') as SubjectFamily[];

/** The patterns of a module's Nest message handlers, with every service's info handler. */
function handlerPatterns(module: Type<unknown>): string[] {
  const controllers = [...((Reflect.getMetadata('controllers', module) as Type<unknown>[] | undefined) ?? []), ServiceInfoController];
  return controllers.flatMap((c) => {
    const proto = c.prototype as Record<string, unknown>;
    return Object.getOwnPropertyNames(proto).flatMap((m) => (Reflect.getMetadata('microservices:pattern', proto[m] as object) as string[] | undefined) ?? []);
  });
}

/** Every non-test TypeScript file of an app, as one text. */
function appSource(service: ServiceName): string {
  const dir = join(REPO_ROOT, 'apps', service, 'src');
  const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts') && !/(^|\/)testing\.ts$/.test(f));
  return files.map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
}

/** What the source does on NATS: [op, subject, where it was seen]. */
function sourceUses(service: ServiceName): [op: 'publish' | 'subscribe', subject: string, why: string][] {
  const src = appSource(service);
  const uses: [op: 'publish' | 'subscribe', subject: string, why: string][] = [];
  for (const f of FAMILIES) {
    if (new RegExp(`Subjects\\.${f}\\.build\\(`).test(src)) uses.push(['publish', familySubject(f), `Subjects.${f}.build`]);
    if (new RegExp(`Subjects\\.${f}\\.(wildcard|pattern)\\b`).test(src)) uses.push(['subscribe', familySubject(f), `Subjects.${f}.wildcard/pattern`]);
  }
  for (const m of src.matchAll(/Subjects\.serviceCommand\.build\([^,]+,\s*'([a-z-]+)',\s*'([a-z]+)'\)/g)) uses.push(['publish', serviceSubjects(m[1] as ServiceName, m[2]), m[0]]);
  for (const m of src.matchAll(/\.(runtime|image)\('([A-Za-z]+)'/g)) uses.push(['publish', `cri.*.${m[1]}.${m[2]}`, m[0]]);
  if (/new CriCommandRunner\(/.test(src)) uses.push(['publish', 'cri.*.runtime.ExecSync', 'CriCommandRunner (ExecSync)']);
  if (/new NatsEventRecorder\(/.test(src)) uses.push(['publish', familySubject('events'), 'NatsEventRecorder']);
  return uses;
}

/** The buckets its definition declares (`buckets: [...]` in <service>.definition.ts). */
function declaredBuckets(service: ServiceName): BucketId[] {
  const main = readFileSync(join(REPO_ROOT, 'apps', service, 'src', `${service}.definition.ts`), 'utf8');
  const list = /buckets:\s*\[([^\]]*)\]/.exec(main)?.[1] ?? '';
  return [...list.matchAll(/'([A-Za-z]+)'/g)].map((m) => m[1] as BucketId);
}

for (const service of SERVICE_NAMES) {
  describe(`NATS permissions of ${service} cover its code`, () => {
    it('every subject its handlers subscribe to', () => {
      const patterns = handlerPatterns(MODULES[service]);
      assert.ok(patterns.length > 0);
      for (const p of patterns) {
        const subject = resolvePattern(p, NODE, service);
        assert.ok(permits(service, 'subscribe', subject), `${service} subscribes to ${subject} (${p}) but its NATS user may not`);
      }
    });

    it('every subject family, CRI method and event its source uses', () => {
      for (const [op, subject, why] of sourceUses(service)) {
        assert.ok(permits(service, op, subject), `${service} uses ${why}: it must ${op} ${subject}, which its NATS user may not (libs/nats/src/permissions.ts)`);
      }
    });

    it('every bucket its definition declares', () => {
      const declared = declaredBuckets(service);
      if (service !== 'cri-gateway') assert.ok(declared.length > 0, `${service}.definition.ts declares its buckets`);
      for (const id of declared) {
        assert.ok(grantedBuckets(service).includes(BUCKETS[id].name), `${service} declares ${id} but may not open ${BUCKETS[id].name}`);
      }
    });
  });
}

describe('NATS permissions: a service hears its CRI replies on its own inbox', () => {
  for (const service of ['sync-loop', 'pod-worker', 'pleg', 'prober'] as const) {
    it(service, async () => {
      const seen: { sub?: string; pub?: string; reply?: string } = {};
      let deliver: ((err: Error | null, msg: Msg) => void) | undefined;
      // The connection as bootstrap makes it: nats.js keeps the inbox prefix in its options.
      const nc = {
        options: { inboxPrefix: inboxPrefix(service) },
        subscribe(subject: string, opts: SubscriptionOptions) {
          seen.sub = subject;
          deliver = (e, m) => void opts.callback?.(e, m);
          return { unsubscribe: () => undefined };
        },
        publish(subject: string, _data: Uint8Array, opts?: PublishOptions) {
          seen.pub = subject;
          seen.reply = opts?.reply;
          queueMicrotask(() => deliver?.(null, { subject: opts?.reply, data: new TextEncoder().encode('{}') } as Msg));
        },
      };
      const method = service === 'prober' ? 'ExecSync' : 'ListContainers';
      await new NatsCriClient(nc as unknown as NatsConnection, NODE, service).runtime(method, method === 'ExecSync' ? { containerId: 'c', cmd: ['true'] } : {});
      // One subscription for all of the client's replies (`<inbox>.*`), a token per call.
      assert.match(seen.sub ?? '', /\.\*$/);
      assert.match(seen.reply ?? '', new RegExp(`^${(seen.sub ?? '').slice(0, -1).replace(/[.$]/g, '\\$&')}[^.]+$`), 'the reply subject is one its subscription hears');
      assert.ok(permits(service, 'subscribe', seen.sub ?? ''), `${service} listens for its CRI reply on ${seen.sub}, which its NATS user may not`);
      assert.ok(permits(service, 'publish', seen.pub ?? ''), `${service} calls ${seen.pub}, which its NATS user may not`);
    });
  }
});

describe('NATS permissions: the CRI reads are the calls with the read deadline', () => {
  it('CRI_RUNTIME_READS is every RuntimeService method of the list class, and only those', () => {
    const reads = Object.entries(RUNTIME_METHOD_INFO).filter(([, i]) => i.deadline === 'list').map(([m]) => m);
    assert.deepEqual([...CRI_RUNTIME_READS].sort(), reads.sort());
  });

  it('the reads, the changes and the streams are every RuntimeService method, each once', () => {
    assert.deepEqual([...CRI_RUNTIME_READS, ...CRI_RUNTIME_CHANGES, ...CRI_RUNTIME_STREAMING].sort(), Object.keys(RUNTIME_METHOD_INFO).sort());
  });
});

describe('NATS permissions: who may open a stream into a container, or run a command in it', () => {
  const callers = (method: string) => SERVICE_NAMES.filter((s) => permits(s, 'publish', `cri.${NODE}.runtime.${method}`));
  for (const method of CRI_RUNTIME_STREAMING) {
    it(`only kubelet-server may call ${method} (kubectl exec, attach, port-forward)`, () => assert.deepEqual(callers(method), ['kubelet-server']));
  }

  it('ExecSync: the kubelet server (/run), the pod worker (lifecycle hooks) and the prober (exec probes); status-manager no longer may', () => {
    assert.deepEqual(callers('ExecSync'), ['pod-worker', 'prober', 'kubelet-server']);
    assert.equal(permits('status-manager', 'publish', `cri.${NODE}.runtime.ExecSync`), false);
  });

  it('status-manager, node-status and console call no stream, and console and status-manager call the runtime not at all', () => {
    for (const s of ['status-manager', 'node-status', 'console'] as const) for (const m of [...CRI_RUNTIME_STREAMING, 'ExecSync']) assert.equal(permits(s, 'publish', `cri.${NODE}.runtime.${m}`), false, `${s} ${m}`);
    for (const s of ['status-manager', 'console'] as const) assert.equal(permits(s, 'publish', `cri.${NODE}.runtime.ListContainers`), false, s);
  });

  it('only console reads the trace records (the timeline), and only node-status holds the node-status lease', () => {
    assert.deepEqual(SERVICE_NAMES.filter((s) => permits(s, 'publish', '$JS.API.CONSUMER.MSG.NEXT.KUBELET_TRACES.x')), ['console']);
    assert.deepEqual(SERVICE_NAMES.filter((s) => permits(s, 'publish', '$KV.leases.node-a.leader.node-status')), ['node-status']);
  });
});

describe('the checked-in deploy/nats/nats-server.conf', () => {
  it('is the one deploy/nats/server-config.ts renders from the permission table (regenerate: node dist/deploy/nats/credentials.js --print-checked-in > deploy/nats/nats-server.conf)', async () => {
    const { checkedInNatsServerConfig } = await import('../deploy/nats/server-config.js');
    assert.equal(readFileSync(join(REPO_ROOT, 'deploy', 'nats', 'nats-server.conf'), 'utf8'), checkedInNatsServerConfig());
  });

  it('is valid for nats-server with every password variable set, and names the first one missing', () => {
    const file = join(REPO_ROOT, 'deploy', 'nats', 'nats-server.conf');
    const passwords = Object.fromEntries(NATS_USERS.map((u) => [passwordVariable(u), 'x']));
    const ok = spawnSync('nats-server', ['-t', '-c', file], { env: { ...process.env, ...passwords }, encoding: 'utf8' });
    assert.equal(ok.status, 0, `${ok.stdout}${ok.stderr}`);
    const { NATS_PASSWORD_PLEG: _, ...withoutPleg } = passwords;
    const missing = spawnSync('nats-server', ['-t', '-c', file], { env: { ...process.env, ...withoutPleg }, encoding: 'utf8' });
    assert.notEqual(missing.status, 0);
    assert.match(`${missing.stdout}${missing.stderr}`, /NATS_PASSWORD_PLEG/);
  });

  it('opens no monitoring port, checked in or rendered for a node: nats-server monitoring has no authentication (docs/adr/0029)', async () => {
    const { NODE_NATS_SETTINGS, checkedInNatsServerConfig, renderNatsServerConfig } = await import('../deploy/nats/server-config.js');
    for (const conf of [checkedInNatsServerConfig(), renderNatsServerConfig({ ...NODE_NATS_SETTINGS, nodes: ['node-1'] }, () => 'x')]) {
      assert.doesNotMatch(conf, /^\s*(http|https|http_port|https_port|monitor_port)\s*:/m);
    }
  });

  it('rendered for two nodes, is valid for nats-server, with a user per service and node', async () => {
    const { NODE_NATS_SETTINGS, renderNatsServerConfig } = await import('../deploy/nats/server-config.js');
    const dir = mkdtempSync(join(tmpdir(), 'ks-nats-conf-'));
    try {
      const file = join(dir, 'nats-server.conf');
      const conf = renderNatsServerConfig({ ...NODE_NATS_SETTINGS, storeDir: dir, nodes: ['node-a', 'node-b'] }, (name) => `pw-${name}`);
      writeFileSync(file, conf);
      const ok = spawnSync('nats-server', ['-t', '-c', file], { encoding: 'utf8' });
      assert.equal(ok.status, 0, `${ok.stdout}${ok.stderr}`);
      assert.match(conf, /user: "pod-worker@node-b"/);
      assert.match(conf, /"kubelet\.node-b\.work\.\*\.\*"/);
      assert.doesNotMatch(conf, /"kubelet\.\*\./, 'no service subject for every node');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
