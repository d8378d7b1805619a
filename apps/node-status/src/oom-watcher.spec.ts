import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { RecordingEventRecorder } from '@app/contracts/testing';
import { silentLogger } from '@app/observability';
import { KernelLog, OomParser, OomWatcher, kmsgMessage, type OomInstance } from './oom-watcher.js';

/** A container over its memory limit on this machine's kernel (6.18), as /dev/kmsg had it. */
const MEMCG_OOM = [
  '4,1198,28180693972,-;tail invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0',
  '4,1199,28180693997,-;CPU: 1 UID: 0 PID: 2769 Comm: tail Not tainted 6.18.44-fc-v669 #1 PREEMPT(none) ',
  '6,1288,28180703247,-;Memory cgroup stats for /kubepods/burstable/podu1/c1:',
  '6,1336,28180703786,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=c1,mems_allowed=0,oom_memcg=/kubepods/burstable/podu1/c1,task_memcg=/kubepods/burstable/podu1/c1,task=tail,pid=2769,uid=0',
  '3,1337,28180703829,-;Memory cgroup out of memory: Killed process 2769 (tail) total-vm:18000kB, anon-rss:15744kB, file-rss:1264kB, shmem-rss:0kB, UID:0 pgtables:76kB oom_score_adj:0',
];
/** The whole machine out of memory: the summary line says global_oom (no oom_memcg), the last line ends it. */
const SYSTEM_OOM = [
  '4,2001,30000000000,-;stress invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0',
  '6,2002,30000000100,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice,task=stress,pid=4242,uid=1000',
  '3,2003,30000000200,-;Out of memory: Killed process 4242 (stress) total-vm:1049000kB, anon-rss:1040000kB, file-rss:4kB, shmem-rss:0kB, UID:1000 pgtables:2100kB oom_score_adj:0',
];
/** Before kernel 5.0. */
const LEGACY_SYSTEM_OOM = [
  '4,10,100,-;java invoked oom-killer: gfp_mask=0x24280ca, order=0, oom_score_adj=0',
  '3,11,101,-;Out of memory: Kill process 99 (java) score 900 or sacrifice child',
  '3,12,102,-;Killed process 99 (java) total-vm:1000kB, anon-rss:900kB, file-rss:0kB',
];
const LEGACY_MEMCG_OOM = [
  '4,20,200,-;ruby invoked oom-killer: gfp_mask=0x24000c0, order=0, oom_score_adj=0',
  '6,21,201,-;Task in /kubepods/podu2/c2 killed as a result of limit of /kubepods/podu2',
  '3,22,202,-;Memory cgroup out of memory: Kill process 77 (ruby) score 1000 or sacrifice child',
  '3,23,203,-;Killed process 77 (ruby) total-vm:1kB, anon-rss:1kB, file-rss:0kB',
];

describe('OomParser (cadvisor oomparser)', () => {
  const cases: { name: string; lines: string[]; want: Partial<OomInstance>[] }[] = [
    { name: "a container's own OOM (kernel 5.0+): its cgroups, ended by the summary line", lines: MEMCG_OOM, want: [{ pid: 2769, processName: 'tail', victimContainerName: '/kubepods/burstable/podu1/c1', containerName: '/kubepods/burstable/podu1/c1', constraint: 'CONSTRAINT_MEMCG' }] },
    { name: 'a system OOM (kernel 5.0+): victim container /', lines: SYSTEM_OOM, want: [{ pid: 4242, processName: 'stress', victimContainerName: '/', containerName: '/' }] },
    { name: 'a system OOM before 5.0', lines: LEGACY_SYSTEM_OOM, want: [{ pid: 99, processName: 'java', victimContainerName: '/' }] },
    { name: "a cgroup's OOM before 5.0", lines: LEGACY_MEMCG_OOM, want: [{ pid: 77, processName: 'ruby', victimContainerName: '/kubepods/podu2', containerName: '/kubepods/podu2/c2' }] },
    { name: 'two in a row', lines: [...MEMCG_OOM, ...SYSTEM_OOM], want: [{ pid: 2769 }, { pid: 4242 }] },
    { name: 'a Killed process line outside an OOM is nothing', lines: ['3,1,1,-;Killed process 5 (x) total-vm:1kB', '6,2,2,-;eth0: link up'], want: [] },
  ];
  for (const tc of cases)
    it(tc.name, () => {
      const p = new OomParser();
      const got = tc.lines.map((l) => p.feed(kmsgMessage(l))).filter((x) => x !== undefined);
      assert.equal(got.length, tc.want.length);
      tc.want.forEach((w, i) => assert.deepEqual(Object.fromEntries(Object.keys(w).map((k) => [k, got[i]?.[k as keyof OomInstance]])), w));
    });
});

class FakeKernelLog extends KernelLog {
  pending: string[] = [];
  failOpen?: string;
  opened = false;
  open(): Promise<void> {
    if (this.failOpen) return Promise.reject(new Error(this.failOpen));
    this.opened = true;
    this.pending = []; // from the end
    return Promise.resolve();
  }
  readNew(): Promise<string[]> {
    return Promise.resolve(this.pending.splice(0));
  }
  close(): Promise<void> {
    this.opened = false;
    return Promise.resolve();
  }
}

describe('OomWatcher', () => {
  it('records SystemOOM on the Node for a system OOM only, as upstream words it, from what was logged after it started', async () => {
    const clock = new FakeClock();
    const log = new FakeKernelLog();
    const events = new RecordingEventRecorder();
    const watcher = new OomWatcher(log, events, clock, silentLogger());
    log.pending.push(...SYSTEM_OOM); // before the start: not reported
    await watcher.start();
    log.pending.push(...MEMCG_OOM, ...SYSTEM_OOM.map((l) => l.replace(/4242/g, '4343')));
    await clock.step(1000);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(events.events, [{ uid: '', type: 'Warning', reason: 'SystemOOM', message: 'System OOM encountered, victim process: stress, pid: 4343' }]);
    await watcher.stop();
    assert.equal(log.opened, false);
  });

  it('stays off when the kernel log cannot be read', async () => {
    const log = new FakeKernelLog();
    log.failOpen = 'EACCES: permission denied';
    const events = new RecordingEventRecorder();
    const clock = new FakeClock();
    const watcher = new OomWatcher(log, events, clock, silentLogger());
    await watcher.start();
    log.pending.push(...SYSTEM_OOM);
    await clock.step(5000);
    assert.deepEqual(events.events, []);
  });
});
