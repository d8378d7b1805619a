/**
 * What the NATS hop costs: ListContainers and ContainerStatus through
 * cri-gateway over NATS (libs/cri's client) against the same calls made
 * directly over gRPC to containerd, N sequential calls each, alternating the
 * two so both see the same load, after a warm-up (harness/nats-hop.ts, P4
 * of `npm run bench`); prints p50, p99, the latency NATS adds and its
 * floor (a bare NATS request/reply of the same sizes, no cri-gateway).
 *
 *   npm run build && bash deploy/runtime.sh start && node dist/test/bench/cri-latency.bench.js [--calls 1000]
 */
import { parseArgs } from 'node:util';
import { runtimeAddress } from '../support/runtime.js';
import { measureNatsHop } from './harness/nats-hop.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '1000' } } });
const calls = Number(values.calls);

const hop = await measureNatsHop(runtimeAddress(), calls);
const f = (n: number) => `${n.toFixed(3)}ms`.padStart(10);
process.stdout.write(`${calls} sequential calls each, ${hop.containers} containers in the runtime (node ${process.version})\n`);
process.stdout.write(`${'call'.padEnd(16)}${'gRPC p50'.padStart(10)}${'gRPC p99'.padStart(10)}${'NATS p50'.padStart(10)}${'NATS p99'.padStart(10)}${'added p50'.padStart(11)}${'added p99'.padStart(11)}${'bare p50'.padStart(11)}${'bare p99'.padStart(11)}\n`);
for (const r of hop.rows) {
  process.stdout.write(`${r.call.padEnd(16)}${f(r.grpcP50)}${f(r.grpcP99)}${f(r.natsP50)}${f(r.natsP99)} ${f(r.addedP50)} ${f(r.addedP99)} ${f(r.bareNatsP50 ?? Number.NaN)} ${f(r.bareNatsP99 ?? Number.NaN)}\n`);
}
