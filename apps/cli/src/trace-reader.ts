/**
 * The CLI's NATS connection, as the admin user: to read trace records
 * (@app/tracing readTraceRecords) and the topology (@app/nats sampleMonitoring);
 * with --fleet, to the hub as the fleet reader (its own inbox prefix).
 */
import { readFileSync } from 'node:fs';
import { connect, createInbox, headers, type NatsConnection } from '@nats-io/transport-node';
import { MIN_TRACING_SERVER, NatsTraceHeaders, serverTraces, serverView, type NatsTraceProbe, type ServerView } from './nats-trace.js';

export interface TraceSource {
  servers: string[];
  /** Default `admin` (with a password file). */
  user?: string;
  passwordFile?: string;
  /** Where replies come (the fleet reader's FLEET_INBOX_PREFIX; default nats.js's `_INBOX`). */
  inboxPrefix?: string;
}

export async function connectCliNats(src: TraceSource): Promise<NatsConnection> {
  const password = src.passwordFile ? readFileSync(src.passwordFile, 'utf8').trim() : undefined;
  try {
    return await connect({
      servers: src.servers,
      name: 'kubelet-split-cli',
      ...(password ? { user: src.user ?? 'admin', pass: password } : {}),
      ...(src.inboxPrefix ? { inboxPrefix: src.inboxPrefix } : {}),
    });
  } catch (err) {
    throw new Error(`cannot reach NATS at ${src.servers.join(',')}: ${(err as Error).message} (--nats sets its URL, --nats-password-file the ${src.user ?? 'admin'} password)`);
  }
}

const dec = new TextDecoder();

/**
 * Asks nats-server what it does with each probe: a trace-only copy (nothing
 * delivered, nothing stored) whose trace event comes to an inbox of this
 * admin connection (`_INBOX.<nuid>`: no service may subscribe there, each
 * reads only `_INBOX_<service>.>`). Refuses before sending anything to a
 * server without message tracing, which would deliver the copies. The views
 * by subject; a probe whose event is not back within `timeoutMs` has none.
 */
export async function askServerTraces(nc: NatsConnection, probes: readonly NatsTraceProbe[], timeoutMs = 2000): Promise<{ server: string; views: Map<string, ServerView> }> {
  const version = nc.info?.version;
  if (!serverTraces(version)) {
    throw new Error(
      `nats-server ${version ?? '(unknown version)'} has no message tracing (${MIN_TRACING_SERVER} or later: deploy/nats/build.sh builds one; the stack runs it when it is in /var/cache/kubelet-split/nats)`,
    );
  }
  const inbox = createInbox();
  const views = new Map<string, ServerView>();
  let done: () => void = () => {};
  const all = new Promise<void>((resolve) => (done = resolve));
  const sub = nc.subscribe(`${inbox}.>`, {
    callback: (err, m) => {
      if (err) return;
      const i = Number(m.subject.slice(inbox.length + 1));
      const probe = probes[i];
      let value: unknown;
      try {
        value = JSON.parse(dec.decode(m.data));
      } catch {
        return;
      }
      const view = serverView(value);
      if (probe && view) views.set(probe.subject, view);
      if (views.size >= probes.length) done();
    },
  });
  try {
    await nc.flush();
    probes.forEach((p, i) => {
      const h = headers();
      for (const [k, v] of Object.entries(p.headers)) h.set(k, v);
      h.set(NatsTraceHeaders.dest, `${inbox}.${i}`);
      h.set(NatsTraceHeaders.only, 'true');
      nc.publish(p.subject, new Uint8Array(0), { headers: h });
    });
    await nc.flush();
    if (probes.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    }
  } finally {
    sub.unsubscribe();
  }
  return { server: `nats-server ${version ?? ''} (${nc.info?.server_name ?? ''})`, views };
}
