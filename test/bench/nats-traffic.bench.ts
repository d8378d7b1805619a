/**
 * Where the stack's messages go (issue 33): every message on the node's
 * nats-server, by subject family, while N pods run (messages and bytes a
 * second: the steady cost) and while N more start at once (messages, bytes
 * and KV writes per pod: the burst's cost). A subject's tokens that name a
 * pod, a container or an inbox are folded into `*`, so a family is one row.
 * The stack runs as the launcher runs it (the bundles, the status group in
 * one process), on the project's containerd: run it under the e2e lock.
 *
 *   npm run build && flock -o /tmp/e2e.lock node dist/test/bench/nats-traffic.bench.js [--pods 100] [--window 20] [--burst 20]
 */
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from '@nats-io/transport-node';
import { SERVICE_NAMES } from '@app/service';
import { NodeStack } from '../support/node-stack.js';

process.env['KS_ENTRY'] ??= 'bundle';
const { values } = parseArgs({ options: { pods: { type: 'string', default: '100' }, window: { type: 'string', default: '20' }, burst: { type: 'string', default: '20' } } });
const pods = Number(values.pods);
const windowS = Number(values.window);
const burst = Number(values.burst);
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const NODE = 'ks-traffic';

/** A subject with what varies per pod, container or request folded into `*`. */
export function family(subject: string): string {
  const t = subject.split('.');
  if (t[0] === '_INBOX' || t[0]?.startsWith('_INBOX')) return '_INBOX.*';
  if (t[0] === '$JS' && t[1] === 'ACK') return `$JS.ACK.${t[2] ?? ''}.*`;
  return t
    .map((x) => (x === NODE ? '<node>' : /^[0-9a-f]{8}-[0-9a-f]{4}-|^[0-9a-f]{24,}$|^p\d+$|^(bench|traffic)-|^oc_|\d{3,}/.test(x) ? '*' : x))
    .join('.');
}

interface Tally { msgs: number; bytes: number }

async function count(stack: NodeStack, during: () => Promise<void>): Promise<{ seconds: number; by: Map<string, Tally> }> {
  const nc = await connect({ servers: stack.nats.url, name: 'traffic-bench', ...stack.nats.auth() });
  const by = new Map<string, Tally>();
  const sub = nc.subscribe('>', {
    callback: (_err, m) => {
      const f = family(m.subject);
      const t = by.get(f) ?? { msgs: 0, bytes: 0 };
      t.msgs++;
      t.bytes += m.data.length;
      by.set(f, t);
    },
  });
  await nc.flush();
  const t0 = performance.now();
  await during();
  const seconds = (performance.now() - t0) / 1000;
  sub.unsubscribe();
  await nc.close();
  return { seconds, by };
}

function table(title: string, by: Map<string, Tally>, per: number, unit: string): string {
  const rows = [...by].sort((a, b) => b[1].msgs - a[1].msgs);
  const total = rows.reduce((s, [, t]) => ({ msgs: s.msgs + t.msgs, bytes: s.bytes + t.bytes }), { msgs: 0, bytes: 0 });
  const line = (name: string, t: Tally) => `| ${name} | ${(t.msgs / per).toFixed(2)} | ${(t.bytes / per / 1024).toFixed(1)} |`;
  return [`\n${title}\n`, `| subject family | messages ${unit} | KB ${unit} |`, '|---|---|---|', line('**all**', total), ...rows.slice(0, 40).map(([n, t]) => line(n, t))].join('\n');
}

const manifest = (name: string) => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]\n`;
const running = async (stack: NodeStack, n: number) => (await stack.podList()).items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length >= n;

const stack = new NodeStack({ node: NODE, services: [...SERVICE_NAMES], target: 'group', env: Object.fromEntries(SERVICE_NAMES.map((s) => [s, { NODE_MAX_PODS: String(Math.max(110, pods + burst)), LOG_LEVEL: 'info' }])) });
try {
  await stack.start(); // inside: a stack that fails to start is stopped too, not left running
  for (let i = 0; i < pods; i++) stack.writeManifest(`p${i}`, manifest(`p${i}`));
  await stack.waitFor(`${pods} pods Ready`, async () => ((await running(stack, pods)) ? true : undefined), 600_000);
  await sleep(10_000); // the start's tail
  const idle = await count(stack, () => sleep(windowS * 1000));
  process.stdout.write(table(`At rest: ${pods} pods running, ${idle.seconds.toFixed(0)} s`, idle.by, idle.seconds, 'a second'));
  const start = await count(stack, async () => {
    for (let i = 0; i < burst; i++) stack.writeManifest(`traffic-${i}`, manifest(`traffic-${i}`));
    await stack.waitFor(`${burst} more pods Ready`, async () => ((await running(stack, pods + burst)) ? true : undefined), 600_000);
    await sleep(3000);
  });
  process.stdout.write(`\n${table(`A burst: ${burst} pods started at once beside the ${pods} (${start.seconds.toFixed(0)} s, the rest's steady traffic included: about ${((idle.seconds ? [...idle.by.values()].reduce((s, t) => s + t.msgs, 0) / idle.seconds : 0) * start.seconds / burst).toFixed(0)} messages a pod of it)`, start.by, burst, 'a pod')}\n`);
} finally {
  await stack.stop();
}
