import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, Pod, PodStatus, Probe, ProbeType } from '@app/contracts';
import type { ProbeOutcome } from './handlers/index.js';
import { FakeProbeHandler } from './testing.js';
import { ProbeWorker, type ProbeUpdate } from './worker.js';

const S = 1000;
const T0 = Date.UTC(2026, 0, 1); // FakeClock's start
const exec = { command: ['cat', '/tmp/healthy'] };

function running(id: string, o: { started?: boolean; startedAt?: number; podIP?: string } = {}): PodStatus {
  return {
    phase: 'Running',
    ...(o.podIP !== '' ? { podIP: o.podIP ?? '10.88.0.5' } : {}),
    hostIP: '192.168.1.2',
    containerStatuses: [
      {
        name: 'app',
        ready: false,
        restartCount: 0,
        image: 'busybox',
        imageID: '',
        containerID: `containerd://${id}`,
        state: { running: { startedAt: new Date(o.startedAt ?? T0).toISOString() } },
        started: o.started ?? true,
      },
    ],
  };
}

function terminated(id: string, phase: PodStatus['phase'] = 'Running'): PodStatus {
  const s = running(id);
  const cs = s.containerStatuses?.[0];
  if (cs) cs.state = { terminated: { exitCode: 1, reason: 'Error' } };
  return { ...s, phase };
}

interface HarnessOptions {
  probeType: ProbeType;
  probe: Probe;
  status?: PodStatus | undefined;
  random?: () => number;
  proberStartedAt?: number;
  restartPolicy?: 'Always' | 'Never';
  deleting?: boolean;
  hostNetwork?: boolean;
}

function harness(o: HarnessOptions) {
  const clock = new FakeClock();
  const handler = new FakeProbeHandler();
  const updates: ProbeUpdate[] = [];
  const probeField = `${o.probeType}Probe` as const;
  const container: Container = { name: 'app', image: 'busybox', [probeField]: o.probe };
  const pod: Pod = {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-1', ...(o.deleting ? { deletionTimestamp: new Date(T0).toISOString() } : {}) },
    spec: { containers: [container], restartPolicy: o.restartPolicy ?? 'Always', ...(o.hostNetwork ? { hostNetwork: true } : {}) },
  };
  const h = {
    clock,
    handler,
    updates,
    status: 'status' in o ? o.status : running('c1', { started: o.probeType !== 'startup' }),
    stops: 0,
    worker: undefined as unknown as ProbeWorker,
    results: (from = 0) => updates.slice(from).map((u) => u.result),
  };
  h.worker = new ProbeWorker(
    {
      clock,
      handler,
      getStatus: () => h.status,
      onResult: (u) => updates.push(u),
      random: o.random ?? (() => 0),
      ...(o.proberStartedAt !== undefined ? { proberStartedAt: o.proberStartedAt } : {}),
      onStopped: () => h.stops++,
    },
    pod,
    container,
    o.probeType,
  );
  return h;
}

/** Starts the worker and runs `n` probe passes one period apart; the results published in each pass. */
async function passes(h: ReturnType<typeof harness>, n: number, periodMs: number): Promise<string[][]> {
  const out: string[][] = [];
  h.worker.start();
  for (let i = 0; i < n; i++) {
    const before = h.updates.length;
    await h.clock.step(i === 0 ? 0 : periodMs);
    out.push(h.results(before));
  }
  return out;
}

describe('ProbeWorker thresholds', () => {
  const cases: { name: string; probeType: ProbeType; probe: Partial<Probe>; answers: ProbeOutcome['result'][]; want: string[][] }[] = [
    {
      name: 'liveness with failureThreshold 3 fails only at the third failure in a row',
      probeType: 'liveness',
      probe: { failureThreshold: 3 },
      answers: ['Failure', 'Failure', 'Failure'],
      want: [['Success'], [], ['Failure']],
    },
    {
      name: 'liveness with failureThreshold 1 fails at the first failure',
      probeType: 'liveness',
      probe: { failureThreshold: 1 },
      answers: ['Failure'],
      want: [['Success', 'Failure']],
    },
    {
      name: 'failures broken by a success do not add up',
      probeType: 'liveness',
      probe: { failureThreshold: 3 },
      answers: ['Failure', 'Failure', 'Success', 'Failure', 'Failure'],
      want: [['Success'], [], [], [], []],
    },
    {
      name: 'readiness starts as Failure and with successThreshold 2 succeeds at the second success',
      probeType: 'readiness',
      probe: { successThreshold: 2 },
      answers: ['Success', 'Success'],
      want: [['Failure'], ['Success']],
    },
    {
      name: 'readiness successes broken by a failure start counting again',
      probeType: 'readiness',
      probe: { successThreshold: 2 },
      answers: ['Success', 'Failure', 'Success', 'Success'],
      want: [['Failure'], [], [], ['Success']],
    },
    {
      name: 'readiness goes back to Failure after failureThreshold failures',
      probeType: 'readiness',
      probe: { failureThreshold: 3 },
      answers: ['Success', 'Failure', 'Failure', 'Failure', 'Success'],
      want: [['Failure', 'Success'], [], [], ['Failure'], ['Success']],
    },
    {
      name: 'startup starts Unknown and succeeds at the first success',
      probeType: 'startup',
      probe: { failureThreshold: 30 },
      answers: ['Success'],
      want: [['Unknown', 'Success']],
    },
    {
      name: 'startup fails after failureThreshold failures',
      probeType: 'startup',
      probe: { failureThreshold: 2 },
      answers: ['Failure', 'Failure'],
      want: [['Unknown'], ['Failure']],
    },
    {
      name: 'a probe that cannot run (Unknown) is thrown away',
      probeType: 'liveness',
      probe: { failureThreshold: 1 },
      answers: ['Unknown', 'Unknown', 'Unknown', 'Unknown', 'Unknown', 'Unknown'],
      want: [['Success'], []],
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const h = harness({ probeType: tc.probeType, probe: { exec, periodSeconds: 1, ...tc.probe } });
      h.handler.answer(...tc.answers);
      assert.deepEqual(await passes(h, tc.want.length, S), tc.want);
    });
  }

  it('retries a probe that cannot run three times in a pass', async () => {
    const h = harness({ probeType: 'liveness', probe: { exec, periodSeconds: 10 } });
    h.handler.otherwise = { result: 'Unknown', output: 'port "http" is neither a port name nor a number' };
    await passes(h, 1, 10 * S);
    assert.equal(h.handler.runs.length, 3);
  });
});

describe('ProbeWorker timing', () => {
  const delays: { name: string; initialDelaySeconds: number; firstProbeAfter: number }[] = [
    { name: 'no initial delay: the first pass probes', initialDelaySeconds: 0, firstProbeAfter: 0 },
    { name: 'initialDelaySeconds 5: nothing probed in the first 5s after the container started', initialDelaySeconds: 5, firstProbeAfter: 5 },
  ];
  for (const tc of delays) {
    it(tc.name, async () => {
      const h = harness({ probeType: 'readiness', probe: { exec, periodSeconds: 1, initialDelaySeconds: tc.initialDelaySeconds } });
      h.worker.start();
      await h.clock.step(0);
      for (let t = 0; t < tc.firstProbeAfter; t++) {
        assert.equal(h.handler.runs.length, 0, `no probe at ${t}s`);
        assert.deepEqual(h.results(), ['Failure'], 'readiness is Failure during the delay');
        await h.clock.step(S);
      }
      assert.equal(h.handler.runs.length, 1, `the first probe at ${tc.firstProbeAfter}s`);
      assert.deepEqual(h.results(), ['Failure', 'Success']);
    });
  }

  const offsets: { name: string; random: number; proberStartedAt?: number; firstAt: number }[] = [
    { name: 'random 0: the first probe at once', random: 0, firstAt: 0 },
    { name: 'random 0.25 of a 10s period: the first probe at 2.5s', random: 0.25, firstAt: 2_500 },
    { name: 'random 0.999: the first probe still within the period', random: 0.999, firstAt: 9_990 },
    { name: 'a prober up for longer than a period does not wait', random: 0.5, proberStartedAt: T0 - 60 * S, firstAt: 0 },
  ];
  for (const tc of offsets) {
    it(`random offset: ${tc.name}`, async () => {
      const h = harness({ probeType: 'liveness', probe: { exec, periodSeconds: 10 }, random: () => tc.random, ...(tc.proberStartedAt !== undefined ? { proberStartedAt: tc.proberStartedAt } : {}) });
      h.worker.start();
      if (tc.firstAt > 0) {
        await h.clock.step(tc.firstAt - 1);
        assert.equal(h.handler.runs.length, 0, 'not before the offset');
        await h.clock.step(1);
      } else await h.clock.step(0);
      assert.equal(h.handler.runs.length, 1, 'at the offset');
      assert.ok(tc.firstAt < 10 * S);
      await h.clock.step(10 * S);
      assert.equal(h.handler.runs.length, 2, 'then every period');
    });
  }

  it('a manual trigger probes at once and restarts the period', async () => {
    const h = harness({ probeType: 'readiness', probe: { exec, periodSeconds: 10 } });
    h.worker.start();
    await h.clock.step(0);
    await h.clock.step(3 * S);
    h.worker.trigger();
    await h.clock.step(0);
    assert.equal(h.handler.runs.length, 2);
    await h.clock.step(9 * S);
    assert.equal(h.handler.runs.length, 2, 'not at 10s: the period counts from the trigger');
    await h.clock.step(1 * S);
    assert.equal(h.handler.runs.length, 3, 'at 13s');
  });

  it('passes the timeout, the bare container ID and the pod IP to the handler', async () => {
    const h = harness({ probeType: 'liveness', probe: { exec, timeoutSeconds: 4 } });
    await passes(h, 1, 10 * S);
    const run = h.handler.runs[0];
    assert.equal(run?.timeoutMs, 4000);
    assert.equal(run?.target.containerId, 'c1');
    assert.equal(run?.target.podIP, '10.88.0.5');
    assert.equal(run?.target.hostIP, '192.168.1.2');
  });

  it('a hostNetwork pod without a pod IP is probed on the host IP', async () => {
    const h = harness({ probeType: 'liveness', probe: { exec }, hostNetwork: true, status: running('c1', { podIP: '' }) });
    await passes(h, 1, 10 * S);
    assert.equal(h.handler.runs[0]?.target.podIP, '192.168.1.2');
  });
});

describe('ProbeWorker startup gating', () => {
  for (const probeType of ['liveness', 'readiness'] as const) {
    it(`${probeType} waits until the container has started`, async () => {
      const h = harness({ probeType, probe: { exec, periodSeconds: 1 }, status: running('c1', { started: false }) });
      await passes(h, 5, S);
      assert.equal(h.handler.runs.length, 0);
      h.status = running('c1', { started: true });
      await h.clock.step(S);
      assert.equal(h.handler.runs.length, 1);
    });
  }

  it('a startup probe stops probing once the container has started', async () => {
    const h = harness({ probeType: 'startup', probe: { exec, periodSeconds: 1 }, status: running('c1', { started: true }) });
    await passes(h, 3, S);
    assert.equal(h.handler.runs.length, 0);
    assert.deepEqual(h.results(), ['Unknown']);
  });

  it('a startup probe holds after its verdict until a new container', async () => {
    const h = harness({ probeType: 'startup', probe: { exec, periodSeconds: 1 }, status: running('c1', { started: false }) });
    await passes(h, 4, S);
    assert.equal(h.handler.runs.length, 1, 'one success, then on hold');
    h.status = running('c2', { started: false });
    await h.clock.step(S);
    assert.equal(h.handler.runs.length, 2);
    assert.deepEqual(h.results(), ['Unknown', 'Success', 'Unknown', 'Success']);
  });
});

describe('ProbeWorker results per container ID', () => {
  it('a new container ID starts fresh: readiness Failure until its first success', async () => {
    const h = harness({ probeType: 'readiness', probe: { exec, periodSeconds: 1 } });
    h.handler.answer('Success', 'Failure', 'Success');
    await passes(h, 1, S);
    assert.equal(h.worker.resultFor('containerd://c1'), 'Success');
    h.status = running('c2');
    await h.clock.step(S); // fails on c2: already Failure, nothing new but the initial value
    assert.deepEqual(
      h.updates.map((u) => [u.containerId, u.result]),
      [
        ['c1', 'Failure'],
        ['c1', 'Success'],
        ['c2', 'Failure'],
      ],
    );
    assert.equal(h.worker.resultFor('c1'), undefined, 'the old container result is gone');
    await h.clock.step(S);
    assert.equal(h.worker.resultFor('c2'), 'Success');
  });

  it('failures counted on the old container do not carry over', async () => {
    const h = harness({ probeType: 'liveness', probe: { exec, periodSeconds: 1, failureThreshold: 2 } });
    h.handler.answer('Failure', 'Failure');
    await passes(h, 1, S);
    h.status = running('c2');
    await h.clock.step(S);
    assert.deepEqual(
      h.updates.map((u) => [u.containerId, u.result]),
      [
        ['c1', 'Success'],
        ['c2', 'Success'],
      ],
    );
  });

  it('a liveness failure is sent again every period while the container runs, then a new container starts fresh', async () => {
    const h = harness({ probeType: 'liveness', probe: { exec, periodSeconds: 10, failureThreshold: 1, terminationGracePeriodSeconds: 7 } });
    h.handler.answer({ result: 'Failure', output: 'cat: /tmp/healthy: No such file or directory' });
    await passes(h, 4, 10 * S);
    assert.equal(h.handler.runs.length, 1, 'on hold after the failure: not probed again');
    const failures = h.updates.filter((u) => u.result === 'Failure');
    assert.deepEqual(
      failures.map((u) => u.repeat),
      [false, true, true, true],
    );
    assert.equal(failures[0]?.message, 'Liveness probe failed: cat: /tmp/healthy: No such file or directory');
    assert.equal(failures[3]?.message, failures[0]?.message);
    assert.equal(failures[0]?.terminationGracePeriodSeconds, 7);

    h.status = terminated('c1');
    await h.clock.step(10 * S);
    assert.equal(h.updates.filter((u) => u.result === 'Failure').length, 4, 'no repeats for an exited container');

    h.status = running('c2');
    await h.clock.step(10 * S);
    assert.deepEqual(h.updates.at(-1), { probeType: 'liveness', podUid: 'uid-1', containerName: 'app', containerId: 'c2', result: 'Success', repeat: false, terminationGracePeriodSeconds: 7 });
    assert.equal(h.handler.runs.length, 2, 'probing resumed on the new container');
  });
});

describe('ProbeWorker teardown', () => {
  const cases: { name: string; probeType: ProbeType; status: PodStatus; restartPolicy?: 'Always' | 'Never'; deleting?: boolean; stops: boolean; results: string[] }[] = [
    { name: 'the pod Succeeded', probeType: 'readiness', status: terminated('c1', 'Succeeded'), stops: true, results: [] },
    { name: 'the pod Failed', probeType: 'liveness', status: terminated('c1', 'Failed'), stops: true, results: [] },
    { name: 'the container terminated under restartPolicy Never', probeType: 'readiness', status: terminated('c1'), restartPolicy: 'Never', stops: true, results: ['Failure'] },
    { name: 'a terminated container under restartPolicy Always keeps its worker', probeType: 'liveness', status: terminated('c1'), restartPolicy: 'Always', stops: false, results: ['Success', 'Failure'] },
    { name: 'the pod is being deleted: liveness ends with a success', probeType: 'liveness', status: running('c1'), deleting: true, stops: true, results: ['Success'] },
    { name: 'the pod is being deleted: readiness keeps probing', probeType: 'readiness', status: running('c1'), deleting: true, stops: false, results: ['Failure', 'Success'] },
    { name: 'no status yet: waits', probeType: 'liveness', status: undefined as unknown as PodStatus, stops: false, results: [] },
    { name: 'the container has no ID yet: waits', probeType: 'liveness', status: { phase: 'Pending', containerStatuses: [{ name: 'app', ready: false, restartCount: 0, image: '', imageID: '', state: { waiting: { reason: 'ContainerCreating' } } }] }, stops: false, results: [] },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const h = harness({ probeType: tc.probeType, probe: { exec, periodSeconds: 1 }, status: tc.status, ...(tc.restartPolicy ? { restartPolicy: tc.restartPolicy } : {}), ...(tc.deleting ? { deleting: true } : {}) });
      await passes(h, 3, S);
      assert.equal(h.worker.stopped, tc.stops);
      assert.equal(h.stops, tc.stops ? 1 : 0);
      assert.deepEqual(h.results(), tc.results);
      if (tc.stops) assert.equal(h.clock.waiting, 0, 'no timers left');
    });
  }

  it('stop() drops the result of a probe in flight and cancels its timers', async () => {
    const h = harness({ probeType: 'liveness', probe: { exec, periodSeconds: 1, failureThreshold: 1 } });
    h.handler.answer('Failure').block();
    await passes(h, 1, S);
    assert.equal(h.handler.runs.length, 1);
    h.worker.stop();
    h.worker.stop();
    h.handler.unblock();
    await h.clock.step(5 * S);
    assert.deepEqual(h.results(), ['Success'], 'the failure came after stop');
    assert.equal(h.stops, 1);
    assert.equal(h.clock.waiting, 0);
  });

  it('a tick during a slow probe runs the next probe as soon as it is done', async () => {
    const h = harness({ probeType: 'readiness', probe: { exec, periodSeconds: 1 } });
    h.handler.block();
    await passes(h, 1, S);
    await h.clock.step(3 * S);
    assert.equal(h.handler.runs.length, 1);
    h.handler.unblock();
    await h.clock.step(0);
    assert.equal(h.handler.runs.length, 2, 'one catch-up probe, not three');
  });
});
