import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Pod } from '@app/contracts';
import { ContainerLogs, ContainerLogsError, FOLLOW_CHECK_MS, chooseInstance } from './container-logs.js';
import type { LogContainer } from './ports.js';
import { FakeLogFiles, FakeLogPods, FakeLogRuntime, MemorySink } from './testing.js';

const T = '2026-01-01T00:00:0';
const entry = (s: number, text: string, stream = 'stdout') => `${T}${s}Z ${stream} F ${text}\n`;
const pod = (status: Pod['status'] = {}): Pod => ({
  metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { containers: [{ name: 'app', image: 'busybox' }], initContainers: [{ name: 'init', image: 'busybox' }] },
  status,
});
const opts = { follow: false, previous: false, timestamps: false };

function setup() {
  const pods = new FakeLogPods();
  const runtime = new FakeLogRuntime();
  const files = new FakeLogFiles();
  const clock = new FakeClock();
  pods.pods.push(pod());
  return { pods, runtime, files, clock, logs: new ContainerLogs(pods, runtime, files, clock) };
}

describe('chooseInstance: the current or the previous instance', () => {
  const c = (id: string, createdAt: number, state: LogContainer['state']): LogContainer => ({ id, createdAt, state });
  const cases = [
    { name: 'none', instances: [], previous: false, want: undefined },
    { name: 'the running one', instances: [c('a', 1, 'CONTAINER_EXITED'), c('b', 2, 'CONTAINER_RUNNING')], previous: false, want: 'b' },
    { name: 'the newest dead one when none runs (crash loop back-off)', instances: [c('a', 1, 'CONTAINER_EXITED'), c('b', 2, 'CONTAINER_EXITED')], previous: false, want: 'b' },
    { name: 'nothing while the newest is only created', instances: [c('a', 1, 'CONTAINER_CREATED')], previous: false, want: undefined },
    { name: 'previous: the newest dead one before the current', instances: [c('a', 1, 'CONTAINER_EXITED'), c('c', 3, 'CONTAINER_RUNNING'), c('b', 2, 'CONTAINER_EXITED')], previous: true, want: 'b' },
    { name: 'previous: none with one instance', instances: [c('a', 1, 'CONTAINER_RUNNING')], previous: true, want: undefined },
    { name: 'previous: not the current one even when dead', instances: [c('a', 1, 'CONTAINER_EXITED')], previous: true, want: undefined },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(chooseInstance(tc.instances, tc.previous)?.id, tc.want));
});

describe('ContainerLogs', () => {
  it('refuses an unknown pod and container with upstream\'s messages', async () => {
    const { logs } = setup();
    await assert.rejects(logs.open('default', 'nope', 'app', opts), (e: ContainerLogsError) => e.status === 404 && e.message === 'pod "nope" does not exist');
    await assert.rejects(logs.open('default', 'web', 'nope', opts), (e: ContainerLogsError) => e.status === 404 && e.message === 'container "nope" not found in pod "web"');
  });

  it('says why a container that has not run has no logs, and that there is no previous instance', async () => {
    const { logs, pods } = setup();
    pods.pods[0] = pod({ containerStatuses: [{ name: 'app', state: { waiting: { reason: 'ImagePullBackOff' } }, ready: false, restartCount: 0, image: 'busybox', imageID: '' }] });
    await assert.rejects(logs.open('default', 'web', 'app', opts), (e: ContainerLogsError) => e.status === 400 && e.message === 'container "app" in pod "web" is waiting to start: trying and failing to pull image');
    await assert.rejects(logs.open('default', 'web', 'init', opts), /container "init" in pod "web" is waiting to start - no logs yet/);
    await assert.rejects(logs.open('default', 'web', 'app', { ...opts, previous: true }), (e: ContainerLogsError) => e.status === 400 && e.message === 'previous terminated container "app" in pod "web" not found');
  });

  it('writes the current instance\'s lines, with timestamps, tailLines and limitBytes', async () => {
    const { logs, runtime, files } = setup();
    runtime.instances.push({ id: 'c1', name: 'app', createdAt: 1, state: 'CONTAINER_EXITED', logPath: '/l/app/0.log' }, { id: 'c2', name: 'app', createdAt: 2, state: 'CONTAINER_EXITED', logPath: '/l/app/1.log' });
    files.append('/l/app/0.log', entry(1, 'old'));
    files.append('/l/app/1.log', entry(2, 'one') + entry(3, 'two', 'stderr') + entry(4, 'three'));
    const read = async (o: Partial<typeof opts> & { tailLines?: number; limitBytes?: number }) => {
      const sink = new MemorySink();
      await (await logs.open('default', 'web', 'app', { ...opts, ...o })).run(sink, new AbortController().signal);
      return sink.text;
    };
    assert.equal(await read({}), 'one\ntwo\nthree\n');
    assert.equal(await read({ tailLines: 1, timestamps: true }), `${T}4Z three\n`);
    assert.equal(await read({ limitBytes: 6 }), 'one\ntw');
    assert.equal(await read({ previous: true }), 'old\n');
  });

  it('follows: lines written after the call, until the container has exited and the file is drained', async () => {
    const { logs, runtime, files, clock } = setup();
    const c = { id: 'c1', name: 'app', createdAt: 1, state: 'CONTAINER_RUNNING' as LogContainer['state'], logPath: '/l/app/0.log' };
    runtime.instances.push(c);
    files.append(c.logPath, entry(1, 'a') + entry(2, 'b'));
    const sink = new MemorySink();
    let done = false;
    const run = (await logs.open('default', 'web', 'app', { ...opts, follow: true, tailLines: 1 })).run(sink, new AbortController().signal).then(() => (done = true));
    await clock.step(0);
    assert.equal(sink.text, 'b\n');
    files.append(c.logPath, `${T}3Z stdout P c`);
    await clock.step(0);
    files.append(c.logPath, `d\n${T}3Z stdout F e\n`);
    await clock.step(0);
    assert.equal(sink.text, 'b\ncde\n');
    await clock.step(FOLLOW_CHECK_MS); // still running: it keeps following
    assert.equal(done, false);
    files.append(c.logPath, entry(4, 'last'));
    c.state = 'CONTAINER_EXITED';
    await clock.step(FOLLOW_CHECK_MS);
    await run;
    assert.equal(sink.text, 'b\ncde\nlast\n');
  });

  it('follows across a rotation: the old file drained, then the new one from its start', async () => {
    const { logs, runtime, files, clock } = setup();
    const c = { id: 'c1', name: 'app', createdAt: 1, state: 'CONTAINER_RUNNING' as LogContainer['state'], logPath: '/l/app/0.log' };
    runtime.instances.push(c);
    files.append(c.logPath, entry(1, 'one') + entry(2, 'two'));
    const sink = new MemorySink();
    const run = (await logs.open('default', 'web', 'app', { ...opts, follow: true })).run(sink, new AbortController().signal);
    await clock.step(0);
    assert.equal(sink.text, 'one\ntwo\n');
    // Written before the rename, renamed (rotateLatestLog), then the runtime reopens: a new, shorter file.
    files.append(c.logPath, entry(3, 'three') + `${T}4Z stdout P fo\n`);
    files.rotate(c.logPath, '/l/app/0.log.20260101-000004');
    await clock.step(FOLLOW_CHECK_MS);
    files.append(c.logPath, `${T}4Z stdout F ur\n` + entry(5, 'five'));
    await clock.step(FOLLOW_CHECK_MS);
    assert.equal(sink.text, 'one\ntwo\nthree\nfour\nfive\n');
    // And on, in the new file.
    files.append(c.logPath, entry(6, 'six'));
    await clock.step(0);
    assert.equal(sink.text, 'one\ntwo\nthree\nfour\nfive\nsix\n');
    c.state = 'CONTAINER_EXITED';
    await clock.step(FOLLOW_CHECK_MS);
    await run;
  });

  it('tailLines and previous read the current file only, after a rotation', async () => {
    const { logs, runtime, files } = setup();
    runtime.instances.push({ id: 'c0', name: 'app', createdAt: 0, state: 'CONTAINER_EXITED', logPath: '/l/app/0.log' }, { id: 'c1', name: 'app', createdAt: 1, state: 'CONTAINER_RUNNING', logPath: '/l/app/1.log' });
    files.append('/l/app/0.log', entry(0, 'before'));
    files.append('/l/app/1.log', entry(1, 'one') + entry(2, 'two'));
    files.rotate('/l/app/1.log', '/l/app/1.log.20260101-000002');
    files.append('/l/app/1.log', entry(3, 'three') + entry(4, 'four'));
    const read = async (o: Partial<typeof opts> & { tailLines?: number }) => {
      const sink = new MemorySink();
      await (await logs.open('default', 'web', 'app', { ...opts, ...o })).run(sink, new AbortController().signal);
      return sink.text;
    };
    assert.equal(await read({}), 'three\nfour\n');
    assert.equal(await read({ tailLines: 1 }), 'four\n');
    assert.equal(await read({ tailLines: 5 }), 'three\nfour\n');
    assert.equal(await read({ previous: true }), 'before\n');
  });

  it('stops following when the client goes away', async () => {
    const { logs, runtime, clock } = setup();
    runtime.instances.push({ id: 'c1', name: 'app', createdAt: 1, state: 'CONTAINER_RUNNING', logPath: '/l/app/0.log' });
    const gone = new AbortController();
    const run = (await logs.open('default', 'web', 'app', { ...opts, follow: true })).run(new MemorySink(), gone.signal);
    await clock.step(0);
    gone.abort();
    await run;
    assert.equal(clock.waiting, 0);
  });
});

describe('ContainerLogs: a finished pod whose sandbox was removed', () => {
  const terminated = (name: string, restartCount = 0) => ({ name, state: { terminated: { exitCode: 0, reason: 'Completed', containerID: `containerd://${name}-id` } }, ready: false, restartCount, image: 'busybox', imageID: '' });
  function finished(podLogsDir: string | undefined) {
    const pods = new FakeLogPods();
    const files = new FakeLogFiles();
    const ephemeral = pod({ containerStatuses: [terminated('app', 1)], ephemeralContainerStatuses: [terminated('debugger')] });
    ephemeral.spec.ephemeralContainers = [{ name: 'debugger', image: 'busybox' }];
    pods.pods.push(ephemeral);
    return { files, logs: new ContainerLogs(pods, new FakeLogRuntime(), files, new FakeClock(), podLogsDir) };
  }
  const read = async (logs: ContainerLogs, container: string, o: Partial<typeof opts> = {}) => {
    const sink = new MemorySink();
    await (await logs.open('default', 'web', container, { ...opts, ...o })).run(sink, new AbortController().signal);
    return sink.text;
  };

  it('its terminated container\'s log is read from the pod\'s log directory (<container>/<restartCount>.log), followed to its end', async () => {
    const { files, logs } = finished('/var/log/pods');
    files.append('/var/log/pods/default_web_u1/app/1.log', entry(1, 'FOO_SERVICE_HOST=10.0.0.1') + entry(2, 'done'));
    files.append('/var/log/pods/default_web_u1/debugger/0.log', entry(1, 'polo'));
    assert.equal(await read(logs, 'app'), 'FOO_SERVICE_HOST=10.0.0.1\ndone\n');
    assert.equal(await read(logs, 'app', { follow: true }), 'FOO_SERVICE_HOST=10.0.0.1\ndone\n');
    assert.equal(await read(logs, 'debugger'), 'polo\n');
  });

  it('no file there (the pod deleted and its logs collected), or no log directory known: still 400', async () => {
    await assert.rejects(finished('/var/log/pods').logs.open('default', 'web', 'app', opts), (e: ContainerLogsError) => e.status === 400);
    const { files, logs } = finished(undefined);
    files.append('/var/log/pods/default_web_u1/app/1.log', entry(1, 'x'));
    await assert.rejects(logs.open('default', 'web', 'app', opts), (e: ContainerLogsError) => e.status === 400);
  });
});
