/**
 * What NATS tells whom (issue 28 items 15-17), on a real nats-server with the
 * generated config (deploy/nats/server-config.ts from libs/nats permissions.ts):
 *  - monitoring: an unprivileged local user (`nobody`) reads nothing of it on
 *    any port the server listens on (no connection name, no subscription, no
 *    client address), while root's `kubelet-split topology` still shows the
 *    services' connections and subscriptions;
 *  - trace records: a service that publishes a record in another's name is
 *    refused by the server, and a record whose claimed sender is not the user
 *    that published it is dropped by the reader (and counted);
 *  - nodes: on a NATS shared by two nodes, a node's service can neither publish
 *    nor subscribe to the other node's subjects, nor read or write its KV keys,
 *    nor read its replies, while it can do all of it on its own node.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { connect, errors, type NatsConnection } from '@nats-io/transport-node';
import { SERVICE_NAMES, type ServiceName } from '@app/contracts';
import { connectionName, ensureBuckets, inboxPrefix } from '@app/nats';
import { JetStreamTraceRecorder, TRACE_RECORD_TYPE, ensureTraceStream, readPodTrace } from '@app/tracing';
import { REPO_ROOT, startNats, type NatsServer } from '../deploy/local/stack.js';

const enc = new TextEncoder();

/** Runs `node -e script` as `nobody` (uid 65534, no groups); its exit code and output. */
function asNobody(script: string): { code: number | null; out: string } {
  const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', process.execPath, '-e', script], { encoding: 'utf8', timeout: 60_000, cwd: '/' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** The TCP ports process `pid` listens on (its sockets in /proc/<pid>/fd joined with /proc/net/tcp{,6} in state LISTEN). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m?.[1]) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A' && inodes.has(f[9] ?? '')) ports.add(Number.parseInt((f[1] ?? '').split(':')[1] ?? '0', 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/**
 * What `nobody` learns of the server's connections from each port: an HTTP GET of every monitoring page, and a NATS
 * client's CONNECT without credentials followed by account and server monitoring requests. The names it saw, per port.
 */
function nobodyReads(ports: number[]): Record<string, { names: string[]; subjects: number; authRefused: boolean; said: string }> {
  const script = `
const net = require('node:net');
const ask = (port, text) => new Promise((res) => {
  let got = '';
  const s = net.connect(port, '127.0.0.1');
  s.setTimeout(3000, () => s.destroy());
  s.on('connect', () => s.write(text));
  s.on('data', (d) => { got += d; });
  s.on('close', () => res(got));
  s.on('error', (e) => res(got + ' ' + e.message));
});
(async () => {
  const out = {};
  for (const port of ${JSON.stringify(ports)}) {
    let said = '';
    for (const page of ['/connz?subs=detail&auth=true', '/subsz?subs=1', '/varz', '/jsz?streams=true']) said += await ask(port, 'GET ' + page + ' HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n');
    said += await ask(port, 'CONNECT {"verbose":false,"pedantic":false}\\r\\nSUB _INBOX.n 1\\r\\nPUB $SYS.REQ.ACCOUNT.PING.CONNZ _INBOX.n 2\\r\\n{}\\r\\nPUB $SYS.REQ.SERVER.PING.CONNZ _INBOX.n 2\\r\\n{}\\r\\nPING\\r\\n');
    const names = [...new Set([...said.matchAll(/"name":\\s*"([^"]+@[^"]+)"/g)].map((m) => m[1]))];
    const subjects = [...said.matchAll(/"subject":\\s*"/g)].length;
    out[port] = { names, subjects, authRefused: /Authorization Violation/.test(said), said: said.slice(0, 300) };
  }
  console.log(JSON.stringify(out));
})();`;
  const r = asNobody(script);
  assert.equal(r.code, 0, r.out);
  return JSON.parse(r.out.trim().split('\n').pop() ?? '{}') as Record<string, { names: string[]; subjects: number; authRefused: boolean; said: string }>;
}

/** A connection as `service`'s user, named as a service's; the permission violations the server reports to it. */
async function connectAs(nats: NatsServer, user: string, name: string, inbox: string): Promise<{ nc: NatsConnection; refused: string[]; done: Promise<void> }> {
  const pass = readFileSync(nats.credentials.passwordFile(user), 'utf8').trim();
  const nc = await connect({ servers: nats.url, user, pass, name, inboxPrefix: inbox });
  const refused: string[] = [];
  const done = (async () => {
    for await (const s of nc.status()) if (s.type === 'error' && s.error instanceof errors.PermissionViolationError) refused.push(`${s.error.operation} ${s.error.subject}`);
  })();
  return { nc, refused, done };
}

/** After a flush, the -ERRs of what was sent have reached the status stream (on a later tick). */
async function settled(nc: NatsConnection): Promise<void> {
  await nc.flush();
  await new Promise((r) => setTimeout(r, 50));
}

describe('NATS monitoring: nobody reads it, root still sees the topology', { timeout: 120_000 }, () => {
  const NODE = 'mon-e2e';
  let nats: NatsServer;
  let pleg: Awaited<ReturnType<typeof connectAs>>;

  before(async () => {
    nats = await startNats();
    // A service's connection as the node has it: its name, and its subscriptions carry the node and a pod UID.
    pleg = await connectAs(nats, 'pleg', connectionName('pleg', NODE, 'mon1'), inboxPrefix('pleg'));
    pleg.nc.subscribe(`kubelet.${NODE}.pleg.inspect.*`, { callback: () => undefined });
    await settled(pleg.nc);
  });

  after(async () => {
    await pleg?.nc.close();
    await nats?.stop();
  });

  it('nobody learns no connection name, subscription or address from any port the server listens on', () => {
    const ports = listeningPorts(nats.process.pid ?? 0);
    assert.ok(ports.includes(nats.port), `the client port ${nats.port} is among ${ports.join(', ')}`);
    const seen = nobodyReads(ports);
    const leaks = Object.entries(seen).filter(([, v]) => v.names.length > 0 || v.subjects > 0);
    const summary = Object.entries(seen)
      .map(([port, v]) => `port ${port}: ${v.names.length} connection name(s) [${v.names.join(', ')}], ${v.subjects} subscription(s)`)
      .join('; ');
    console.log(`nats-server listens on ${ports.length} TCP port(s); as nobody: ${summary}`);
    assert.deepEqual(leaks.map(([port]) => port), [], `nobody read monitoring: ${summary}`);
    // The client port answers, but only to credentials.
    assert.equal(seen[String(nats.port)]?.authRefused, true, seen[String(nats.port)]?.said);
  });

  it("root's `kubelet-split topology` still shows the services, their subscriptions and the server's totals", () => {
    const r = spawnSync(
      process.execPath,
      [join(REPO_ROOT, 'dist', 'apps', 'cli', 'src', 'cli.js'), 'topology', '--nats', nats.url, '--nats-password-file', nats.credentials.passwordFile('admin'), '--interval', '0s', '--node', NODE, '-o', 'json'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    const t = JSON.parse(r.stdout) as { instances: { name: string; subscribes: { subject: string; family: string }[] }[]; totals: { subscriptions?: number; streams?: number } };
    const plegSeen = t.instances.find((i) => i.name === connectionName('pleg', NODE, 'mon1'));
    console.log(`topology as root: ${t.instances.length} instance(s); pleg subscribes ${plegSeen?.subscribes.map((s) => `${s.subject} (${s.family})`).join(', ')}; totals ${JSON.stringify(t.totals)}`);
    assert.ok(plegSeen, `pleg's connection in ${JSON.stringify(t.instances.map((i) => i.name))}`);
    assert.ok(plegSeen.subscribes.some((s) => s.subject === `kubelet.${NODE}.pleg.inspect.*` && s.family === 'plegInspect'));
    assert.ok((t.totals.subscriptions ?? 0) > 0, 'the server-wide subscription count');
  });
});

describe('trace records: each service only in its own name', { timeout: 120_000 }, () => {
  const NODE = 'trace-sec-e2e';
  const UID = '7f0c2d1e-0000-4000-8000-00000000f0e6';
  let nats: NatsServer;
  let admin: NatsConnection;

  before(async () => {
    nats = await startNats();
    admin = await connect({ servers: nats.url, name: 'trace-sec-test', ...nats.auth() });
    await ensureTraceStream(admin, { maxAgeMs: 60_000, maxBytes: 8 * 1024 * 1024 });
  });

  after(async () => {
    await admin?.close();
    // The refusals this test provokes are its point.
    nats?.violations.splice(0);
    await nats?.stop();
  });

  it("the prober's user cannot record a hop as the pod worker: the server refuses it, the reader drops what slips through", async () => {
    const prober = await connectAs(nats, 'prober', connectionName('prober', NODE, 'p1'), inboxPrefix('prober'));
    // Its own hop, through the recorder every service uses: read back as the prober's.
    const own = new JetStreamTraceRecorder(prober.nc, { node: NODE, service: 'prober', instance: connectionName('prober', NODE, 'p1'), maxBuffered: 10, flushMs: 10 });
    own.record({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), kind: 'publish', podUid: UID, at: Date.now(), durationMs: 0.1, subject: `kubelet.${NODE}.probe.readiness.${UID}` });
    own.flush();
    // Forged: a record claiming the pod worker's instance, on every subject a trace record could go to.
    const forged = { type: TRACE_RECORD_TYPE, traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), kind: 'cri', podUid: UID, instance: connectionName('pod-worker', NODE, 'pw1'), at: Date.now(), durationMs: 1, method: 'StopContainer' };
    const subjects = [`trace.${NODE}.${UID}`, ...SERVICE_NAMES.map((s) => `trace.${NODE}.${s}.${UID}`)];
    for (const subject of subjects) prober.nc.publish(subject, enc.encode(JSON.stringify(forged)));
    await settled(prober.nc);
    const refusedOthers = prober.refused.filter((r) => r.startsWith('publish trace.') && !r.includes('.prober.'));
    const { records, rejected } = await readPodTrace(admin, UID);
    const asPodWorker = records.filter((r) => r.instance.startsWith('pod-worker@'));
    const asProber = records.filter((r) => r.instance.startsWith('prober@'));
    console.log(`published ${subjects.length} forged record(s); the server refused ${refusedOthers.length} (${refusedOthers.join(', ')}); the reader gave ${records.length} record(s): ${asPodWorker.length} as pod-worker, ${asProber.length} as prober, and dropped ${rejected}`);
    assert.equal(asPodWorker.length, 0, 'a forged pod-worker hop was read');
    assert.equal(asProber.length, 1, "the prober's own hop is read");
    // Published under its own name but claiming the pod worker's instance: stored, and dropped by the reader.
    assert.equal(rejected, 1, 'the record on its own subject that claims another sender is dropped and counted');
    // Every other service's subject (and the old unnamed one) refused by the server itself.
    assert.equal(refusedOthers.length, subjects.length - 1, `refused: ${refusedOthers.join(', ')}`);
    await prober.nc.close();
    await prober.done;
  });
});

describe('nodes sharing a NATS: a node touches only its own subjects and keys', { timeout: 120_000 }, () => {
  const A = 'node-a';
  const B = 'node-b';
  const UID = '3a9d7c0e-0000-4000-8000-00000000b0b0';
  let nats: NatsServer;
  let admin: NatsConnection;
  /** The user of `service` on `node`, as the shared server's config names it (`<service>@<node>`). */
  const userOf = (service: ServiceName, node: string): string => nats.credentials.userOf(service, node);

  before(async () => {
    nats = await startNats({ nodes: [A, B] });
    admin = await connect({ servers: nats.url, name: 'nodes-test', ...nats.auth() });
    const { workers } = await ensureBuckets(admin, ['workers']);
    for (const node of [A, B]) await workers.put(`${node}.${UID}`, enc.encode('{"state":"syncing"}'));
  });

  after(async () => {
    await admin?.close();
    nats?.violations.splice(0);
    await nats?.stop();
  });

  /** What node A's pod worker tries on `node`: each operation's name, and whether the server let it. */
  async function podWorkerTries(node: string): Promise<Record<string, boolean>> {
    const user = userOf('pod-worker', A);
    const pw = await connectAs(nats, user, connectionName('pod-worker', A, 'x'), inboxPrefix(user));
    const out: Record<string, boolean> = {};
    const try_ = async (what: string, subject: string, fn: () => unknown) => {
      const before = pw.refused.length;
      let ok = true;
      try {
        await fn();
      } catch {
        ok = false;
      }
      await settled(pw.nc);
      out[what] = ok && !pw.refused.slice(before).some((r) => r.endsWith(` ${subject}`) || r.includes(subject));
    };
    // The buckets as every service opens them (@app/nats ensureBuckets).
    const { workers: kv, leases } = await ensureBuckets(pw.nc, ['workers', 'leases']);
    await try_('publish work.done', `kubelet.${node}.work.done.${UID}`, () => pw.nc.publish(`kubelet.${node}.work.done.${UID}`, enc.encode('{}')));
    await try_('subscribe work shard', `kubelet.${node}.work.3.*`, () => pw.nc.subscribe(`kubelet.${node}.work.3.*`, { callback: () => undefined }));
    await try_('request CRI', `cri.${node}.runtime.ListContainers`, () => pw.nc.publish(`cri.${node}.runtime.ListContainers`, enc.encode('{}'), { reply: `${inboxPrefix(user)}.x` }));
    const otherInbox = inboxPrefix(userOf('pod-worker', node));
    await try_("subscribe to the node's pod-worker inbox", `${otherInbox}.>`, () => pw.nc.subscribe(`${otherInbox}.>`, { callback: () => undefined }));
    await try_('KV put', `$KV.workers.${node}.${UID}`, () => kv.put(`${node}.${UID}`, enc.encode('{"state":"forged"}')));
    await try_('KV get', `${node}.${UID}`, async () => {
      const e = await kv.get(`${node}.${UID}`);
      if (!e) throw new Error('not found');
    });
    await try_('KV watch', `${node}.>`, async () => {
      const w = await kv.watch({ key: `${node}.>` });
      let n = 0;
      for await (const e of w) {
        if (e.key.startsWith(`${node}.`)) n++;
        break;
      }
      w.stop();
      if (n === 0) throw new Error('saw nothing');
    });
    await try_('leases put', `$KV.leases.${node}.pod-worker-shard.3`, () => leases.put(`${node}.pod-worker-shard.3`, enc.encode('{}')));
    await pw.nc.close();
    await pw.done;
    return out;
  }

  it("node A's pod worker can do on node A what it does, and none of it on node B", async () => {
    const own = await podWorkerTries(A);
    const other = await podWorkerTries(B);
    const allowed = (r: Record<string, boolean>) => Object.entries(r).filter(([, ok]) => ok).map(([what]) => what);
    console.log(`node A's pod worker: on node A ${allowed(own).length}/${Object.keys(own).length} allowed (${allowed(own).join(', ')}); on node B ${allowed(other).length}/${Object.keys(other).length} allowed (${allowed(other).join(', ')})`);
    // On its own node: everything it does (the inbox is its own).
    assert.deepEqual(allowed(own), Object.keys(own), `node A: ${JSON.stringify(own)}`);
    assert.deepEqual(allowed(other), [], `node B: ${JSON.stringify(other)}`);
  });
});
