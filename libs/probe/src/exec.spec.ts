import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CriError } from '@app/cri';
import { doExecProbe, runInContainer } from './exec.js';
import type { ProbeOutcome } from './probe.js';
import { FakeCommandRunner } from './testing.js';

describe('doExecProbe (FakeCommandRunner)', () => {
  const cases: { name: string; answer: ConstructorParameters<typeof CriError> | { stdout?: string; stderr?: string; exitCode: number }; want: ProbeOutcome }[] = [
    { name: 'exit 0 is a success with the output', answer: { stdout: 'ok\n', exitCode: 0 }, want: { result: 'Success', output: 'ok\n' } },
    { name: 'a non-zero exit is a failure with stdout then stderr', answer: { stdout: 'out;', stderr: 'err', exitCode: 3 }, want: { result: 'Failure', output: 'out;err' } },
    { name: 'the output is cut at 10 KiB', answer: { stdout: 'x'.repeat(20_000), exitCode: 0 }, want: { result: 'Success', output: 'x'.repeat(10 * 1024) } },
    { name: 'a timeout is a failure', answer: ['DeadlineExceeded', 'too slow'], want: { result: 'Failure', output: 'command "sleep 10" timed out' } },
    { name: 'the runtime unreachable is unknown', answer: ['Unavailable', 'no cri-gateway'], want: { result: 'Unknown', output: 'Unavailable: no cri-gateway' } },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const runner = new FakeCommandRunner().answer(Array.isArray(tc.answer) ? new CriError(...tc.answer) : tc.answer);
      assert.deepEqual(await doExecProbe(runner, 'abc', ['sleep', '10'], 1000), tc.want);
    });
  }

  it('the timeout goes to ExecSync in whole seconds, rounded up, at least 1', async () => {
    const runner = new FakeCommandRunner();
    await doExecProbe(runner, 'abc', ['true'], 2500);
    await doExecProbe(runner, 'abc', ['true'], 100);
    assert.deepEqual(
      runner.calls.map((c) => c.timeoutSeconds),
      [3, 1],
    );
  });
});

describe('runInContainer (RunInContainer)', () => {
  const cases: { name: string; answer: CriError | { stdout?: string; stderr?: string; exitCode: number }; want: { output: string; error?: string; timedOut?: boolean } }[] = [
    { name: 'exit 0: the output, no error', answer: { stdout: 'a', stderr: 'b', exitCode: 0 }, want: { output: 'ab' } },
    { name: 'a non-zero exit: the CodeExitError text with stderr', answer: { stdout: 'out', stderr: 'boom', exitCode: 2 }, want: { output: 'outboom', error: "command 'sh -c exit 2' exited with 2: boom" } },
    { name: 'a timeout', answer: new CriError('DeadlineExceeded', 'deadline'), want: { output: '', error: 'command "sh -c exit 2" timed out', timedOut: true } },
    { name: 'the runtime error', answer: new CriError('NotFound', 'no such container'), want: { output: '', error: 'NotFound: no such container' } },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const r = await runInContainer(new FakeCommandRunner().answer(tc.answer), 'abc', ['sh', '-c', 'exit 2'], 5);
      assert.deepEqual({ ...r, output: r.output.toString('utf8') }, tc.want);
    });
  }
});
