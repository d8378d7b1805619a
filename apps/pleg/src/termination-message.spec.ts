import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus } from '@app/cri';
import { ContainerFileReader } from './ports.js';
import { lastLogLines, withTerminationMessage } from './termination-message.js';

/** Files by path; a path mapped to an Error fails to read. */
class FakeFiles extends ContainerFileReader {
  constructor(private readonly files: Record<string, string | Error>) {
    super();
  }
  readonly read: string[] = [];
  readTail(path: string, maxBytes: number): Promise<{ text: string; truncated: boolean } | undefined> {
    this.read.push(path);
    const f = this.files[path];
    if (f instanceof Error) return Promise.reject(f);
    if (f === undefined) return Promise.resolve(undefined);
    const b = Buffer.from(f);
    return Promise.resolve({ text: b.subarray(Math.max(0, b.length - maxBytes)).toString(), truncated: b.length > maxBytes });
  }
}

const MSG = '/var/lib/kubelet/pods/u1/containers/c/ab12';
const LOG = '/var/log/pods/ns_p_u1/c/0.log';

const status = (o: { exitCode?: number; policy?: string; path?: string; state?: ContainerStatus['state']; message?: string; reason?: string; mounted?: boolean } = {}): ContainerStatus =>
  ({
    id: 'c1',
    state: o.state ?? 'CONTAINER_EXITED',
    exitCode: o.exitCode ?? 0,
    reason: o.reason ?? (o.exitCode ? 'Error' : 'Completed'),
    message: o.message ?? '',
    annotations: { 'io.kubernetes.container.terminationMessagePath': o.path ?? '/dev/termination-log', 'io.kubernetes.container.terminationMessagePolicy': o.policy ?? 'File' },
    mounts: o.mounted === false ? [] : [{ containerPath: o.path ?? '/dev/termination-log', hostPath: MSG }],
    logPath: LOG,
  }) as unknown as ContainerStatus;

const criLog = (...lines: string[]) => lines.map((l) => `2026-12-01T12:00:00.000000000Z stdout ${l}\n`).join('');

describe('withTerminationMessage (getTerminationMessage, readLastStringFromContainerLogs)', () => {
  const cases: { name: string; status: ContainerStatus; files: Record<string, string | Error>; want: string }[] = [
    { name: 'the file\'s content', status: status(), files: { [MSG]: 'DONE' }, want: 'DONE' },
    { name: 'at a non-default path', status: status({ path: '/dev/termination-custom-log' }), files: { [MSG]: 'DONE' }, want: 'DONE' },
    { name: 'FallbackToLogsOnError, failed, empty file: the log', status: status({ exitCode: 1, policy: 'FallbackToLogsOnError' }), files: { [MSG]: '', [LOG]: criLog('P DONE') }, want: 'DONE' },
    { name: 'FallbackToLogsOnError, succeeded: empty', status: status({ policy: 'FallbackToLogsOnError' }), files: { [MSG]: '', [LOG]: criLog('P DONE') }, want: '' },
    { name: 'FallbackToLogsOnError, succeeded, the file: the file', status: status({ policy: 'FallbackToLogsOnError' }), files: { [MSG]: 'OK', [LOG]: criLog('F DONE') }, want: 'OK' },
    { name: 'FallbackToLogsOnError, failed, the file: the file', status: status({ exitCode: 2, policy: 'FallbackToLogsOnError' }), files: { [MSG]: 'OK', [LOG]: criLog('F DONE') }, want: 'OK' },
    { name: 'File policy, failed, empty file: empty', status: status({ exitCode: 1 }), files: { [MSG]: '', [LOG]: criLog('F DONE') }, want: '' },
    { name: 'the runtime\'s message first', status: status({ message: 'oom' }), files: { [MSG]: 'DONE' }, want: 'oom: DONE' },
    { name: 'a file that cannot be read', status: status(), files: { [MSG]: new Error('EACCES: permission denied') }, want: `Error on reading termination log ${MSG}: EACCES: permission denied` },
    { name: 'no mount (made before the pod worker made them): the fallback still reads the log', status: status({ exitCode: 1, policy: 'FallbackToLogsOnError', mounted: false }), files: { [LOG]: criLog('F line 1', 'F line 2') }, want: 'line 1\nline 2\n' },
    { name: 'a container that could not run: no logs', status: status({ exitCode: 128, reason: 'ContainerCannotRun', policy: 'FallbackToLogsOnError' }), files: { [MSG]: '', [LOG]: criLog('F x') }, want: '' },
    { name: 'only the last 4 KiB of the file', status: status(), files: { [MSG]: `${'a'.repeat(100)}${'b'.repeat(4096)}` }, want: 'b'.repeat(4096) },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const got = await withTerminationMessage(tc.status, new FakeFiles(tc.files));
      assert.equal(got.message, tc.want);
    });
  }

  it('a running container is left alone, nothing read', async () => {
    const files = new FakeFiles({ [MSG]: 'DONE' });
    const s = status({ state: 'CONTAINER_RUNNING' });
    assert.equal(await withTerminationMessage(s, files), s);
    assert.deepEqual(files.read, []);
  });
});

describe('lastLogLines: the log reader\'s messages', () => {
  it('the last 80 lines, partial lines joined per stream', () => {
    const lines = Array.from({ length: 100 }, (_, i) => `F ${i}`);
    const got = lastLogLines(criLog(...lines), 80, false);
    assert.equal(got.split('\n').length - 1, 80);
    assert.ok(got.startsWith('20\n'));
    assert.equal(lastLogLines(criLog('P ab', 'F cd', 'F ef'), 80, false), 'abcd\nef\n');
  });
  it('a line cut by the read is dropped', () => {
    assert.equal(lastLogLines(`ut F cut\n${criLog('F whole')}`, 80, true), 'whole\n');
  });
  it('the last 2 KiB of them', async () => {
    const long = Array.from({ length: 50 }, (_, i) => `F ${String(i).padStart(2, '0')}${'x'.repeat(97)}`);
    const got = await withTerminationMessage(status({ exitCode: 1, policy: 'FallbackToLogsOnError', mounted: false }), new FakeFiles({ [LOG]: criLog(...long) }));
    assert.equal(Buffer.byteLength(got.message), 2048);
    assert.ok(got.message.endsWith(`49${'x'.repeat(97)}\n`));
  });
});
