import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeCri } from '@app/cri/testing';
import { CriCommandRunner } from '@app/probe';
import { b64, expectOutcome, probeTarget as target, type ProbeOutcome } from '../testing.js';
import { ExecProbeHandler } from './exec.js';

describe('ExecProbeHandler (FakeCri)', () => {
  const cases: { name: string; setup: (cri: FakeCri) => void; command?: string[]; want: { result: ProbeOutcome['result']; output?: string | RegExp } }[] = [
    { name: 'exit 0 is a success with the output', setup: (cri) => cri.onRuntime('ExecSync', () => ({ stdout: b64('ok\n'), stderr: '', exitCode: 0 })), want: { result: 'Success', output: 'ok\n' } },
    {
      name: 'a non-zero exit is a failure with stdout then stderr',
      setup: (cri) => cri.onRuntime('ExecSync', () => ({ stdout: b64('out;'), stderr: b64('cat: /tmp/healthy: No such file'), exitCode: 1 })),
      want: { result: 'Failure', output: 'out;cat: /tmp/healthy: No such file' },
    },
    {
      name: 'the output is cut at 10 KiB',
      setup: (cri) => cri.onRuntime('ExecSync', () => ({ stdout: b64('x'.repeat(20_000)), stderr: '', exitCode: 0 })),
      want: { result: 'Success', output: 'x'.repeat(10 * 1024) },
    },
    { name: 'a timeout is a failure', command: ['sleep', '10'], setup: (cri) => cri.failNext('runtime', 'ExecSync', 'DeadlineExceeded'), want: { result: 'Failure', output: 'command "sleep 10" timed out' } },
    { name: 'the runtime unreachable is unknown', setup: (cri) => cri.failNext('runtime', 'ExecSync', 'Unavailable', 'no cri-gateway'), want: { result: 'Unknown', output: /no cri-gateway/ } },
    { name: 'no command is unknown', command: [], setup: () => undefined, want: { result: 'Unknown', output: /has no command/ } },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const cri = new FakeCri();
      tc.setup(cri);
      const got = await new ExecProbeHandler(new CriCommandRunner(cri)).run({ exec: { command: tc.command ?? ['cat', '/tmp/healthy'] } }, target(), 1000);
      expectOutcome(got, tc.want);
    });
  }

  it('calls ExecSync on the bare container ID with the expanded command and the timeout in seconds', async () => {
    const cri = new FakeCri().onRuntime('ExecSync', () => ({ stdout: '', stderr: '', exitCode: 0 }));
    await new ExecProbeHandler(new CriCommandRunner(cri)).run({ exec: { command: ['sh', '-c', 'test "$(GREETING)" = hi && echo $$(HOME)'] } }, target({ env: [{ name: 'GREETING', value: 'hi' }] }), 3000);
    assert.deepEqual(cri.callsOf('ExecSync'), [{ containerId: 'abc', cmd: ['sh', '-c', 'test "hi" = hi && echo $(HOME)'], timeout: '3' }]);
  });
});
