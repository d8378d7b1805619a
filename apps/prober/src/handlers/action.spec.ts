import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Probe } from '@app/contracts';
import { FakeProbeHandler, expectOutcome, probeTarget as target } from '../testing.js';
import { ActionProbeHandler } from './action.js';

describe('ActionProbeHandler', () => {
  const fakes = () => ({ exec: new FakeProbeHandler(), httpGet: new FakeProbeHandler(), tcpSocket: new FakeProbeHandler(), grpc: new FakeProbeHandler() });
  const cases: { name: string; probe: Probe; want: 'exec' | 'httpGet' | 'tcpSocket' | 'grpc' | undefined }[] = [
    { name: 'exec', probe: { exec: { command: ['true'] } }, want: 'exec' },
    { name: 'httpGet', probe: { httpGet: { port: 80 } }, want: 'httpGet' },
    { name: 'tcpSocket', probe: { tcpSocket: { port: 80 } }, want: 'tcpSocket' },
    { name: 'grpc', probe: { grpc: { port: 80 } }, want: 'grpc' },
    { name: 'no action: unknown', probe: { periodSeconds: 10 }, want: undefined },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const f = fakes();
      const got = await new ActionProbeHandler(f).run(tc.probe, target(), 1000);
      const ran = (Object.keys(f) as (keyof typeof f)[]).filter((k) => f[k].runs.length > 0);
      assert.deepEqual(ran, tc.want ? [tc.want] : []);
      if (!tc.want) expectOutcome(got, { result: 'Unknown', output: 'missing probe handler for web_default(uid-1):app' });
    });
  }
});
