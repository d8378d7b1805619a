import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock } from '@app/clock/testing';
import { ContainerLogManager, filterUnusedLogs, rotatedLogName, type ContainerLogManagerOptions } from './container-log-manager.js';
import { FakeContainerLogFiles, FakeContainerLogRuntime } from '../testing.js';

const DIR = '/var/log/pods/default_web_u1/app';
const LOG = `${DIR}/0.log`;
// FakeClock starts at 2026-01-01T00:00:00Z.
const T0 = '20260101-000000';

function setup(options: Partial<ContainerLogManagerOptions> & { maxSize?: number; maxFiles?: number } = {}) {
  const clock = new FakeClock();
  const files = new FakeContainerLogFiles();
  const runtime = new FakeContainerLogRuntime(files);
  const logs: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line) as { level: number; msg: string }) });
  const manager = new ContainerLogManager({ runtime, files, clock, logger }, {
    policy: { maxSize: options.maxSize ?? 100, maxFiles: options.maxFiles ?? 3 },
    monitorIntervalMs: options.monitorIntervalMs ?? 10_000,
    maxWorkers: options.maxWorkers ?? 1,
  });
  runtime.containers.set('c1', { logPath: LOG, running: true });
  /** warn (40) and above. */
  const problems = () => logs.filter((l) => l.level >= 40).map((l) => l.msg);
  return { clock, files, runtime, manager, problems };
}

describe('rotatedLogName: <log>.<YYYYMMDD-hhmmss>, UTC', () => {
  it('formats the rotation time', () => {
    assert.equal(rotatedLogName('/l/0.log', Date.UTC(2026, 11, 1, 3, 4, 5)), '/l/0.log.20261201-030405');
    assert.equal(rotatedLogName('/l/0.log', Date.UTC(2026, 0, 9, 23, 59, 59, 999)), '/l/0.log.20260109-235959');
  });
});

describe('filterUnusedLogs: what a failed rotation left behind', () => {
  const cases = [
    { name: 'rotated logs, compressed or not, are in use', logs: ['l.1', 'l.2.gz'], unused: [] },
    { name: 'a temporary file is not', logs: ['l.1.tmp', 'l.2.gz'], unused: ['l.1.tmp'] },
    { name: 'a plain log beside its compressed copy is not (compressed, then not removed)', logs: ['l.1', 'l.1.gz', 'l.2'], unused: ['l.1'] },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(filterUnusedLogs(tc.logs).unused, tc.unused));
});

describe('ContainerLogManager', () => {
  it('leaves a log under MaxSize alone', async () => {
    const { files, runtime, manager } = setup();
    files.write(LOG, 'x'.repeat(99));
    await manager.rotateLogs();
    assert.deepEqual(files.ops, []);
    assert.deepEqual(runtime.reopened, []);
  });

  it('rotates a log at MaxSize: renamed with the time, then reopened by the runtime', async () => {
    const { files, runtime, manager, problems } = setup();
    files.write(LOG, 'x'.repeat(100));
    await manager.rotateLogs();
    assert.deepEqual(files.ops, [`rename ${LOG} ${LOG}.${T0}`]);
    assert.deepEqual(runtime.reopened, ['c1']);
    assert.deepEqual(files.list(DIR), ['0.log', `0.log.${T0}`]);
    assert.equal(files.files.get(LOG), '', 'the runtime writes a new file');
    assert.deepEqual(problems(), []);
  });

  const rotations = [
    {
      name: 'MaxFiles 3: the last rotated log compressed, the current one rotated',
      maxFiles: 3,
      before: ['0.log.20251231-000000'],
      ops: [`gzip ${LOG}.20251231-000000 ${LOG}.20251231-000000.tmp`, `rename ${LOG}.20251231-000000.tmp ${LOG}.20251231-000000.gz`, `remove ${LOG}.20251231-000000`, `rename ${LOG} ${LOG}.${T0}`],
      after: ['0.log', '0.log.20251231-000000.gz', `0.log.${T0}`],
    },
    {
      name: 'MaxFiles 3: beyond one older rotated log, the oldest removed first',
      maxFiles: 3,
      before: ['0.log.20251229-000000.gz', '0.log.20251230-000000.gz', '0.log.20251231-000000'],
      ops: [`remove ${LOG}.20251229-000000.gz`, `remove ${LOG}.20251230-000000.gz`, `gzip ${LOG}.20251231-000000 ${LOG}.20251231-000000.tmp`, `rename ${LOG}.20251231-000000.tmp ${LOG}.20251231-000000.gz`, `remove ${LOG}.20251231-000000`, `rename ${LOG} ${LOG}.${T0}`],
      after: ['0.log', '0.log.20251231-000000.gz', `0.log.${T0}`],
    },
    {
      name: 'MaxFiles 2: every rotated log removed, the current one rotated',
      maxFiles: 2,
      before: ['0.log.20251231-000000'],
      ops: [`remove ${LOG}.20251231-000000`, `rename ${LOG} ${LOG}.${T0}`],
      after: ['0.log', `0.log.${T0}`],
    },
    {
      name: 'leftovers of a failed rotation removed first: a temporary file, a plain log beside its .gz',
      maxFiles: 5,
      before: ['0.log.20251230-000000', '0.log.20251230-000000.gz', '0.log.20251231-000000.gz', '0.log.20251231-000000.gz.tmp'],
      ops: [`remove ${LOG}.20251230-000000`, `remove ${LOG}.20251231-000000.gz.tmp`, `rename ${LOG} ${LOG}.${T0}`],
      after: ['0.log', '0.log.20251230-000000.gz', '0.log.20251231-000000.gz', `0.log.${T0}`],
    },
  ];
  for (const tc of rotations) {
    it(tc.name, async () => {
      const { files, manager } = setup({ maxFiles: tc.maxFiles });
      for (const f of tc.before) files.write(`${DIR}/${f}`, f);
      files.write(LOG, 'x'.repeat(150));
      await manager.rotateLogs();
      // Order aside (the next case checks it): the listing's order is the file system's.
      assert.deepEqual([...files.ops].sort(), [...tc.ops].sort());
      assert.deepEqual(files.list(DIR), tc.after);
      assert.ok(files.list(DIR).length <= tc.maxFiles);
    });
  }

  it('compresses the older rotated logs in order, oldest removed before any is compressed', async () => {
    const { files, manager } = setup({ maxFiles: 3 });
    files.write(`${DIR}/0.log.20251230-000000.gz`, 'a');
    files.write(`${DIR}/0.log.20251231-000000`, 'b');
    files.write(LOG, 'x'.repeat(150));
    await manager.rotateLogs();
    assert.deepEqual(files.ops, [
      `remove ${LOG}.20251230-000000.gz`,
      `gzip ${LOG}.20251231-000000 ${LOG}.20251231-000000.tmp`,
      `rename ${LOG}.20251231-000000.tmp ${LOG}.20251231-000000.gz`,
      `remove ${LOG}.20251231-000000`,
      `rename ${LOG} ${LOG}.${T0}`,
    ]);
    assert.equal(files.files.get(`${LOG}.20251231-000000.gz`), 'gzip(b)');
  });

  it('a container that exited before its log was reopened: the rename undone, no error', async () => {
    const { files, runtime, manager, problems } = setup();
    files.write(LOG, 'x'.repeat(150));
    runtime.beforeReopen = (id) => {
      const c = runtime.containers.get(id);
      if (c) c.running = false;
    };
    await manager.rotateLogs();
    assert.deepEqual(files.ops, [`rename ${LOG} ${LOG}.${T0}`, `rename ${LOG}.${T0} ${LOG}`]);
    assert.deepEqual(files.list(DIR), ['0.log']);
    assert.equal(files.files.get(LOG), 'x'.repeat(150), 'the log keeps its content');
    assert.deepEqual(problems(), []);
  });

  it('a reopen that fails while the container runs: the rename undone, a warning, tried again at the next pass', async () => {
    const { files, runtime, manager, problems } = setup();
    files.write(LOG, 'x'.repeat(150));
    let failures = 1;
    runtime.beforeReopen = () => {
      if (failures-- > 0) throw new Error('DeadlineExceeded');
    };
    await manager.rotateLogs();
    assert.deepEqual(files.list(DIR), ['0.log']);
    assert.deepEqual(problems(), ['Failed to rotate log for container']);
    await manager.rotateLogs();
    assert.deepEqual(files.list(DIR), ['0.log', `0.log.${T0}`]);
    assert.deepEqual(runtime.reopened, ['c1']);
  });

  it('a compression that fails: nothing rotated, the temporary file gone, the next pass tries again', async () => {
    const { files, manager, problems } = setup({ maxFiles: 3 });
    files.write(`${DIR}/0.log.20251231-000000`, 'b');
    files.write(LOG, 'x'.repeat(150));
    files.failNext('gzip');
    await manager.rotateLogs();
    assert.deepEqual(files.list(DIR), ['0.log', '0.log.20251231-000000']);
    assert.deepEqual(problems(), ['Failed to rotate log for container']);
    await manager.rotateLogs();
    assert.deepEqual(files.list(DIR), ['0.log', '0.log.20251231-000000.gz', `0.log.${T0}`]);
  });

  it('a log file that is missing is reopened (and not rotated while small)', async () => {
    const { files, runtime, manager } = setup();
    await manager.rotateLogs();
    assert.deepEqual(runtime.reopened, ['c1']);
    assert.deepEqual(files.list(DIR), ['0.log']);
  });

  it('only running containers are looked at; one without a log file, or gone, is skipped', async () => {
    const { files, runtime, manager, problems } = setup();
    runtime.containers.set('dead', { logPath: `${DIR}/1.log`, running: false });
    runtime.containers.set('nolog', { logPath: '', running: true });
    files.write(`${DIR}/1.log`, 'x'.repeat(500));
    files.write(LOG, 'x'.repeat(150));
    await manager.rotateLogs();
    assert.deepEqual(files.list(DIR), ['0.log', `0.log.${T0}`, '1.log']);
    assert.deepEqual(runtime.reopened, ['c1']);
    assert.deepEqual(problems(), []);
  });

  it('every monitor interval, with several workers: each container at most MaxFiles files as they keep writing', async () => {
    const { clock, files, runtime, manager } = setup({ maxFiles: 3, maxWorkers: 2, monitorIntervalMs: 10_000 });
    const paths = ['c1', 'c2', 'c3'].map((id, i) => {
      const logPath = `${DIR}/${i}.log`;
      runtime.containers.set(id, { logPath, running: true });
      return logPath;
    });
    manager.start();
    for (let pass = 0; pass < 6; pass++) {
      for (const p of paths) files.write(p, 'x'.repeat(120));
      await clock.step(10_000);
    }
    const names = files.list(DIR);
    for (const i of [0, 1, 2]) {
      const mine = names.filter((n) => n === `${i}.log` || n.startsWith(`${i}.log.`));
      assert.equal(mine.length, 3, mine.join(', '));
      // The current one, the newest rotation plain, the one before compressed.
      assert.deepEqual(mine, [`${i}.log`, `${i}.log.20260101-000050.gz`, `${i}.log.20260101-000100`]);
    }
    await manager.stop();
    assert.equal(clock.waiting, 0, 'stopped: no pass is scheduled');
    for (const p of paths) files.write(p, 'x'.repeat(120));
    await clock.step(30_000);
    assert.deepEqual(files.list(DIR), names, 'nothing rotated once stopped');
  });

  it('a pass that fails (the runtime unreachable) is logged and the next one still comes', async () => {
    const { clock, files, runtime, manager, problems } = setup();
    files.write(LOG, 'x'.repeat(150));
    runtime.unavailable = true;
    manager.start();
    await clock.step(10_000);
    assert.deepEqual(problems(), ['Failed to rotate container logs']);
    runtime.unavailable = false;
    await clock.step(10_000);
    assert.deepEqual(files.list(DIR), ['0.log', '0.log.20260101-000020']);
    await manager.stop();
  });

  it('MaxSize negative turns rotation off; MaxFiles must be above 1', () => {
    const { clock, files, runtime } = setup();
    const off = new ContainerLogManager({ runtime, files, clock, logger: pino({ level: 'silent' }) }, { policy: { maxSize: -1, maxFiles: 5 }, monitorIntervalMs: 1000, maxWorkers: 1 });
    assert.equal(off.enabled, false);
    off.start();
    assert.equal(clock.waiting, 0);
    assert.throws(() => new ContainerLogManager({ runtime, files, clock, logger: pino({ level: 'silent' }) }, { policy: { maxSize: 1, maxFiles: 1 }, monitorIntervalMs: 1000, maxWorkers: 1 }), /invalid MaxFiles 1, must be > 1/);
  });
});
