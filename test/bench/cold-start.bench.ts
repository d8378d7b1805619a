/**
 * Cold start of each service: spawn to /readyz 200, against a real
 * nats-server, one service at a time, N runs each; prints median, min, max.
 *
 *   npm run build && node dist/test/bench/cold-start.bench.js [--runs 7]
 */
import { parseArgs } from 'node:util';
import { SERVICE_NAMES } from '@app/service';
import { freePort, startNats, startService } from '../../deploy/local/stack.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const runs = Number(values.runs);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

const nats = await startNats();
try {
  process.stdout.write(`cold start to /readyz, ${runs} runs each (node ${process.version})\n`);
  process.stdout.write(`${'service'.padEnd(16)} ${'median'.padStart(8)} ${'min'.padStart(8)} ${'max'.padStart(8)}\n`);
  for (const service of SERVICE_NAMES) {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const sp = await startService(service, { NODE_NAME: 'bench', NATS_URL: nats.url, LOG_LEVEL: 'warn' }, { port: await freePort(), instance: `b${i}` });
      times.push(sp.readyAfterMs ?? Number.NaN);
      await sp.stop(5000);
    }
    const f = (n: number) => `${n.toFixed(0)}ms`.padStart(8);
    process.stdout.write(`${service.padEnd(16)} ${f(median(times))} ${f(Math.min(...times))} ${f(Math.max(...times))}\n`);
  }
} finally {
  await nats.stop();
}
