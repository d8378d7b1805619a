#!/usr/bin/env node
/**
 * kubelet-split: look at the node without an apiserver, through the status
 * manager's read API.
 *
 *   kubelet-split get pods [-o wide|yaml|json] [-n NAMESPACE | -A]
 *   kubelet-split describe pod NAME [-n NAMESPACE]
 *   kubelet-split logs POD [-c CONTAINER] [-f] [--previous] [--tail N] [--since DURATION] [--timestamps] [-n NAMESPACE]
 *   kubelet-split topology [-o table|mermaid|dot|json] [--interval DURATION] [--node NODE] [--nats URL] [--nats-password-file FILE]
 *   kubelet-split trace POD|UID [-n NAMESPACE] [-o json] [--follow] [--nats-trace] [--nats URL] [--nats-password-file FILE]
 *
 * --server (or KUBELET_SPLIT_SERVER) is the status manager's URL; default http://127.0.0.1:10315.
 * --token-file (or KUBELET_SPLIT_TOKEN_FILE): a file holding the bearer token of a status manager
 * started with HTTP_TOKEN_FILE (needed off loopback).
 * topology and trace read NATS itself (--nats or KUBELET_SPLIT_NATS, default nats://127.0.0.1:4222)
 * as the admin user (--nats-password-file or KUBELET_SPLIT_NATS_PASSWORD_FILE): topology the
 * account's monitoring ($SYS.REQ.ACCOUNT.PING.CONNZ; nats-server has no monitoring port, docs/adr/0029),
 * trace the KUBELET_TRACES stream;
 * --nats-trace adds what nats-server (2.11 or later) sees of each hop, from its message tracing.
 *
 * --fleet (get pods, topology, trace): --nats is the fleet hub's client URLs, the CLI connects as the
 * fleet reader (user `fleet`, --nats-user overrides; replies on _INBOX_fleet), finds the nodes behind the
 * hub's leaf links (LEAFZ; --node adds more) and asks each at once (request-many over its leaf link:
 * fleet-reader.ts, waiting up to --timeout, default 5s, for the first answer and then until 1 s passes
 * without one); trace reads the pod's records in its node's JetStream domain.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { EventMessage, Pod, PodList } from '@app/contracts';
import { describePod } from './describe.js';
import { fleetPods, fleetTopology } from './fleet-commands.js';
import { printFleetTopology, selectFleetPods } from './fleet.js';
import { DEFAULT_FLEET_TIMING, NatsFleetReader, type RequestManyTiming } from './fleet-reader.js';
import { printPodTable } from './get.js';
import { chooseContainer, logsQuery, parseGoDuration } from './logs.js';
import { fetchTopology, printTopologyDot, printTopologyMermaid, topologyOfNode, type Topology } from '@app/nats';
import { printTopologyTable } from './topology.js';
import { tracePod } from './trace-command.js';
import { connectCliNats, type TraceSource } from './trace-reader.js';
import { FLEET_INBOX_PREFIX, FLEET_READER_USER } from '@app/nats';

const USAGE = `usage:
  kubelet-split get pods [-o wide|yaml|json] [-n NAMESPACE | -A] [--server URL] [--token-file FILE]
  kubelet-split describe pod NAME [-n NAMESPACE] [--server URL] [--token-file FILE]
  kubelet-split logs POD [-c CONTAINER] [-f] [--previous] [--tail N] [--since DURATION | --since-time TIME] [--timestamps] [--limit-bytes N] [-n NAMESPACE] [--server URL] [--token-file FILE]
  kubelet-split topology [-o table|mermaid|dot|json] [--interval DURATION] [--node NODE] [--nats URL] [--nats-password-file FILE]
  kubelet-split trace POD|UID [-n NAMESPACE] [-o json] [-f|--follow] [--nats-trace] [--nats URL] [--nats-password-file FILE] [--server URL] [--token-file FILE]

fleet-wide, over the hub (--nats HUB_URLS, comma-separated; as the fleet user, --nats-user to override):
  kubelet-split get pods --fleet [-o wide|yaml|json] [-n NAMESPACE | -A] [--node NODE,...] [--timeout DURATION] --nats HUB_URLS --nats-password-file FILE
  kubelet-split topology --fleet [-o table|json] [--node NODE,...] [--timeout DURATION] --nats HUB_URLS --nats-password-file FILE
  kubelet-split trace POD|UID --fleet [-n NAMESPACE] [-o json] [-f|--follow] [--node NODE,...] [--timeout DURATION] --nats HUB_URLS --nats-password-file FILE
  (the nodes are those behind the hub's leaf links, and --node's; each is asked at once: replies are taken
   until 1s passes without one, the first awaited up to --timeout, default 5s)`;

/** The bearer token, when --token-file is given. */
let token: string | undefined;

async function fetchJson<T>(url: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(10_000), ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}) });
  } catch (err) {
    throw new Error(`cannot reach the status manager at ${url}: ${(err as Error).message} (is the stack up? --server sets its URL)`);
  }
  if (res.status === 404) throw new Error((await res.json().catch(() => ({ message: 'not found' })) as { message?: string }).message ?? 'not found');
  if (res.status === 401 || res.status === 403) {
    const why = (await res.json().catch(() => ({})) as { error?: { description?: string } }).error?.description ?? `HTTP ${res.status}`;
    throw new Error(`${url}: ${why} (--token-file gives the token)`);
  }
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      output: { type: 'string', short: 'o' },
      namespace: { type: 'string', short: 'n' },
      'all-namespaces': { type: 'boolean', short: 'A' },
      server: { type: 'string', default: process.env['KUBELET_SPLIT_SERVER'] ?? 'http://127.0.0.1:10315' },
      'token-file': { type: 'string', default: process.env['KUBELET_SPLIT_TOKEN_FILE'] },
      help: { type: 'boolean', short: 'h' },
      container: { type: 'string', short: 'c' },
      follow: { type: 'boolean', short: 'f', default: false },
      'nats-trace': { type: 'boolean', default: false },
      previous: { type: 'boolean', short: 'p', default: false },
      timestamps: { type: 'boolean', default: false },
      tail: { type: 'string', default: '-1' },
      since: { type: 'string' },
      'since-time': { type: 'string' },
      'limit-bytes': { type: 'string' },
      interval: { type: 'string', default: '1s' },
      node: { type: 'string' },
      nats: { type: 'string', default: process.env['KUBELET_SPLIT_NATS'] ?? 'nats://127.0.0.1:4222' },
      'nats-password-file': { type: 'string', default: process.env['KUBELET_SPLIT_NATS_PASSWORD_FILE'] },
      'nats-user': { type: 'string' },
      fleet: { type: 'boolean', default: false },
      timeout: { type: 'string' },
    },
  });
  const [verb, kind, name] = positionals;
  if (values.help || !verb) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 1;
  }
  const server = (values.server ?? '').replace(/\/$/, '');
  if (values['token-file']) token = readFileSync(values['token-file'], 'utf8').trim();
  const now = Date.now();
  if (values.fleet && verb !== 'get' && verb !== 'topology' && verb !== 'trace') throw new Error(`--fleet is for get pods, topology and trace, not ${verb}`);
  if (verb === 'get' && (kind === 'pods' || kind === 'pod' || kind === 'po') && values.fleet) {
    await getFleetPods(natsSource(values), fleetTiming(values.timeout), namedNodes(values.node), { namespace: values.namespace ?? 'default', allNamespaces: values['all-namespaces'] ?? false, output: values.output ?? '', now, ...(name !== undefined ? { name } : {}) });
    return 0;
  }
  if (verb === 'get' && (kind === 'pods' || kind === 'pod' || kind === 'po')) {
    const list = await fetchJson<PodList>(`${server}/pods`);
    const namespace = values.namespace ?? 'default';
    const items = list.items.filter((p: Pod) => values['all-namespaces'] || p.metadata.namespace === namespace).filter((p) => !name || p.metadata.name === name);
    if (name && items.length === 0) throw new Error(`pods "${name}" not found`);
    const output = values.output ?? '';
    if (output === 'json') process.stdout.write(`${JSON.stringify(name ? items[0] : { ...list, items }, null, 2)}\n`);
    else if (output === 'yaml') process.stdout.write(stringify(name ? items[0] : { ...list, items }));
    else if (output === '' || output === 'wide') {
      if (items.length === 0) process.stderr.write(`No resources found in ${values['all-namespaces'] ? 'any' : namespace} namespace.\n`);
      else process.stdout.write(printPodTable(items, now, { wide: output === 'wide' }));
    } else throw new Error(`unknown output format "${output}" (want wide, yaml or json)`);
    return 0;
  }
  if (verb === 'describe' && (kind === 'pod' || kind === 'pods' || kind === 'po') && name) {
    const namespace = values.namespace ?? 'default';
    const pod = await fetchJson<Pod>(`${server}/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`);
    const { items } = await fetchJson<{ items: EventMessage[] }>(`${server}/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/events`);
    process.stdout.write(describePod(pod, items, now));
    return 0;
  }
  if (verb === 'topology' && values.fleet) {
    await topologyOfFleet(natsSource(values), fleetTiming(values.timeout), namedNodes(values.node), values.output ?? 'table');
    return 0;
  }
  if (verb === 'topology') {
    await topology(natsSource(values), values.interval ?? '1s', values.output ?? 'table', values.node);
    return 0;
  }
  if (verb === 'logs' && kind) {
    const namespace = values.namespace ?? 'default';
    const podName = kind.replace(/^(pods?|po)\//, '');
    const pod = await fetchJson<Pod>(`${server}/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(podName)}`).catch((err: unknown) => {
      throw /not found/.test((err as Error).message) ? new Error(`pods "${podName}" not found`) : err;
    });
    const container = chooseContainer(pod, values.container ?? name);
    const query = logsQuery({
      container,
      follow: values.follow ?? false,
      previous: values.previous ?? false,
      timestamps: values.timestamps ?? false,
      tail: Number.parseInt(values.tail ?? '-1', 10),
      ...(values.since !== undefined ? { since: values.since } : {}),
      ...(values['since-time'] !== undefined ? { sinceTime: values['since-time'] } : {}),
      ...(values['limit-bytes'] !== undefined ? { limitBytes: Number.parseInt(values['limit-bytes'], 10) } : {}),
    });
    await streamLogs(`${server}/containerLogs/${encodeURIComponent(namespace)}/${encodeURIComponent(podName)}/${encodeURIComponent(container)}${query}`);
    return 0;
  }
  if (verb === 'trace' && kind) {
    return tracePod({
      arg: kind,
      namespace: values.namespace ?? 'default',
      output: values.output ?? '',
      follow: values.follow ?? false,
      natsTrace: values['nats-trace'] ?? false,
      pods: () => fetchJson<PodList>(`${server}/pods`),
      nats: natsSource(values),
      ...(values.fleet ? { fleet: { timing: fleetTiming(values.timeout), nodes: namedNodes(values.node) } } : {}),
      out: (s) => process.stdout.write(s),
      warn: (s) => process.stderr.write(s),
    });
  }
  process.stderr.write(`${USAGE}\n`);
  return 1;
}

/** --nats, --nats-password-file and --nats-user: where the CLI reads NATS, as the admin user (with --fleet, the hub as the fleet reader). */
function natsSource(values: { nats?: string; 'nats-password-file'?: string; 'nats-user'?: string; fleet?: boolean }): TraceSource {
  const user = values['nats-user'] ?? (values.fleet ? FLEET_READER_USER : undefined);
  return {
    servers: (values.nats ?? '').split(','),
    ...(values['nats-password-file'] ? { passwordFile: values['nats-password-file'] } : {}),
    ...(user !== undefined ? { user } : {}),
    ...(values.fleet ? { inboxPrefix: FLEET_INBOX_PREFIX } : {}),
  };
}

/** --timeout: how long a fleet request-many waits for its first reply (the silence that ends it stays 1 s). */
function fleetTiming(timeout: string | undefined): RequestManyTiming {
  if (timeout === undefined) return DEFAULT_FLEET_TIMING;
  let seconds: number;
  try {
    seconds = parseGoDuration(timeout);
  } catch {
    throw new Error(`invalid --timeout "${timeout}" (a duration like 5s or 500ms)`);
  }
  return { ...DEFAULT_FLEET_TIMING, firstMs: seconds * 1000 };
}

/** --node with --fleet: nodes to ask besides those behind the hub's leaf links (comma-separated). */
function namedNodes(node: string | undefined): string[] {
  return (node ?? '').split(',').filter((n) => n !== '');
}

/** `get pods --fleet`: every node's pods, NODE always shown. */
async function getFleetPods(source: TraceSource, timing: RequestManyTiming, nodes: string[], opts: { namespace: string; allNamespaces: boolean; name?: string; output: string; now: number }): Promise<void> {
  if (!['', 'wide', 'json', 'yaml'].includes(opts.output)) throw new Error(`unknown output format "${opts.output}" (want wide, yaml or json)`);
  const nc = await connectCliNats(source);
  let merged: Awaited<ReturnType<typeof fleetPods>>;
  try {
    merged = await fleetPods(new NatsFleetReader(nc, source.servers.join(','), timing), nodes);
  } finally {
    await nc.close();
  }
  for (const e of merged.errors) process.stderr.write(`warning: ${e}\n`);
  for (const n of merged.silent) process.stderr.write(`warning: node ${n} is linked to the hub, but its status manager did not answer\n`);
  const items = selectFleetPods(merged.pods, opts).map((p) => p.pod);
  if (opts.name !== undefined && items.length === 0) throw new Error(`pods "${opts.name}" not found on any of the ${merged.answered.length} node(s) that answered`);
  const list: PodList = { apiVersion: 'v1', kind: 'PodList', metadata: {}, items };
  if (opts.output === 'json') process.stdout.write(`${JSON.stringify(opts.name !== undefined ? items[0] : list, null, 2)}\n`);
  else if (opts.output === 'yaml') process.stdout.write(stringify(opts.name !== undefined ? items[0] : list));
  else if (items.length === 0) process.stderr.write(`No resources found in ${opts.allNamespaces ? 'any' : opts.namespace} namespace on ${merged.answered.length} node(s) (${merged.answered.join(', ')}).\n`);
  else process.stdout.write(printPodTable(items, opts.now, { wide: opts.output === 'wide', namespace: opts.allNamespaces, node: true }));
}

/** `topology --fleet`: every node's services and the hub's leaf links. */
async function topologyOfFleet(source: TraceSource, timing: RequestManyTiming, nodes: string[], output: string): Promise<void> {
  if (output !== 'table' && output !== 'json') throw new Error(`unknown output format "${output}" with --fleet (want table or json)`);
  const nc = await connectCliNats(source);
  try {
    const t = await fleetTopology(new NatsFleetReader(nc, source.servers.join(','), timing), nodes);
    process.stdout.write(output === 'json' ? `${JSON.stringify(t, null, 2)}\n` : printFleetTopology(t));
  } finally {
    await nc.close();
  }
}

/** `topology`: two connz samples `interval` apart and the account's totals, over NATS, printed as asked. */
async function topology(source: TraceSource, interval: string, output: string, node: string | undefined): Promise<void> {
  if (!['table', 'mermaid', 'dot', 'json'].includes(output)) throw new Error(`unknown output format "${output}" (want table, mermaid, dot or json)`);
  let ms: number;
  try {
    ms = parseGoDuration(interval) * 1000;
  } catch {
    throw new Error(`invalid --interval "${interval}" (a duration like 1s or 500ms)`);
  }
  const nc = await connectCliNats(source);
  let all: Topology;
  try {
    all = await fetchTopology(nc, ms, (w) => new Promise((r) => setTimeout(r, w)));
  } finally {
    await nc.close();
  }
  const t = node === undefined ? all : topologyOfNode(all, node);
  const text = output === 'json' ? `${JSON.stringify(t, null, 2)}\n` : output === 'mermaid' ? printTopologyMermaid(t) : output === 'dot' ? printTopologyDot(t) : printTopologyTable(t);
  process.stdout.write(text);
}

/** The log server's answer copied to stdout as it comes (with -f, until the container ends or ^C). */
async function streamLogs(url: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  } catch (err) {
    throw new Error(`cannot reach the status manager at ${url}: ${(err as Error).message} (is the stack up? --server sets its URL)`);
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { message?: string; error?: { description?: string } };
    throw new Error(body.message ?? body.error?.description ?? `${url}: HTTP ${res.status}`);
  }
  if (!res.body) return;
  for await (const chunk of res.body) {
    if (!process.stdout.write(chunk as Uint8Array)) await new Promise((r) => process.stdout.once('drain', r));
  }
}

/**
 * Exits once what was written to stdout and stderr has left the process: a write to a pipe that the kernel could not
 * take at once is still queued, and process.exit() would cut a long `-o json` short (`trace --nats-trace -o json`
 * ended at 146,176 of its characters once, read by a test through a pipe).
 */
function exitFlushed(code: number): void {
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

main(process.argv.slice(2)).then(
  (code) => exitFlushed(code),
  (err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    exitFlushed(1);
  },
);
