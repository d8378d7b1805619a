/**
 * Cold start of each service: spawn to /readyz 200, against a real
 * nats-server, one service at a time, N runs each; prints median, min, max.
 * Each service from tsc's output (dist/apps) and from its bundle
 * (dist/bundle, deploy/bundle.mjs), then the seven as modules of one process
 * (TARGET=all: spawn to the last module's /readyz). cri-gateway is ready
 * once the runtime answers: run with the project's containerd up.
 *
 *   npm run build && node dist/test/bench/cold-start.bench.js [--runs 7] [--entries dist,bundle]
 */
import { parseArgs } from 'node:util';
import { SERVICE_NAMES } from '@app/service';
import { freePort, freePorts, startModules, startNats, startService } from '../../deploy/local/stack.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' }, entries: { type: 'string', default: 'dist,bundle' } } });
const runs = Number(values.runs);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};
const f = (n: number) => `${n.toFixed(0)}ms`.padStart(8);
const row = (name: string, times: number[]) => process.stdout.write(`${name.padEnd(24)} ${f(median(times))} ${f(Math.min(...times))} ${f(Math.max(...times))}\n`);

const nats = await startNats();
try {
  const env = { NODE_NAME: 'bench', NATS_URL: nats.url, LOG_LEVEL: 'warn' };
  process.stdout.write(`cold start to /readyz, ${runs} runs each (node ${process.version})\n`);
  process.stdout.write(`${'service'.padEnd(24)} ${'median'.padStart(8)} ${'min'.padStart(8)} ${'max'.padStart(8)}\n`);
  for (const entry of values.entries.split(',')) {
    process.env['KS_ENTRY'] = entry;
    for (const service of SERVICE_NAMES) {
      const times: number[] = [];
      for (let i = 0; i < runs; i++) {
        const sp = await startService(service, env, { port: await freePort(), instance: `b${i}` });
        times.push(sp.readyAfterMs ?? Number.NaN);
        await sp.stop(5000);
      }
      row(`${service} (${entry})`, times);
    }
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const ports: Partial<Record<(typeof SERVICE_NAMES)[number], number>> = {};
      const free = await freePorts(SERVICE_NAMES.length);
      SERVICE_NAMES.forEach((s, i) => (ports[s] = free[i]));
      const modules = await startModules(SERVICE_NAMES, () => env, { ports, instance: `a${i}` });
      times.push(Math.max(...modules.map((m) => m.readyAfterMs ?? Number.NaN)));
      await modules[0]?.stop(5000);
    }
    row(`TARGET=all (${entry})`, times);
  }
} finally {
  await nats.stop();
}
