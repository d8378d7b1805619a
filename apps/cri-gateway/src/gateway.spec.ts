import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { CriError, type ContainerEventResponse, type CriService } from '@app/cri';
import { CriGateway } from './gateway.js';
import { RuntimeChangeQueue } from './runtime-change-queue.js';
import { RuntimeMetrics } from './ports.js';
import { RuntimeConnection, type EventStream } from './ports.js';

interface Sent {
  service: CriService;
  method: string;
  request: unknown;
  deadlineMs: number;
}

/** A RuntimeConnection that records calls and answers from a script. */
class FakeConnection extends RuntimeConnection {
  readonly sent: Sent[] = [];
  answer: (s: Sent) => Promise<unknown> = () => Promise.resolve({});
  unary(service: CriService, method: string, request: unknown, deadlineMs: number): Promise<unknown> {
    const s = { service, method, request, deadlineMs };
    this.sent.push(s);
    return this.answer(s);
  }
  containerEvents(_onEvent: (e: ContainerEventResponse) => void): EventStream {
    return { done: new Promise(() => undefined), cancel: () => undefined };
  }
  hasMethod(_service: CriService, method: string): boolean {
    return method !== 'GetContainerEvents' && method !== 'NoSuchMethod';
  }
  close(): void {}
}

class RecordingMetrics extends RuntimeMetrics {
  readonly ops: { operation: string; seconds: number; failed: boolean }[] = [];
  readonly sandboxes: { handler: string; failed: boolean }[] = [];
  observe(operation: string, seconds: number, failed: boolean): void {
    this.ops.push({ operation, seconds, failed });
  }
  observeRunPodSandbox(handler: string, _seconds: number, failed: boolean): void {
    this.sandboxes.push({ handler, failed });
  }
}

const timeouts = { requestMs: 120_000, listMs: 30_000, pullMs: 60_000 };

function setup() {
  const conn = new FakeConnection();
  const metrics = new RecordingMetrics();
  const clock = new FakeClock(0);
  return { conn, metrics, clock, gw: new CriGateway(conn, timeouts, metrics, clock) };
}

describe('CriGateway: deadlines by method', () => {
  const cases = [
    { name: 'ListContainers gets the list timeout', service: 'runtime' as const, method: 'ListContainers', request: {}, want: 30_000 },
    { name: 'ContainerStatus gets the list timeout', service: 'runtime' as const, method: 'ContainerStatus', request: { containerId: 'c1' }, want: 30_000 },
    { name: 'RunPodSandbox gets the request timeout', service: 'runtime' as const, method: 'RunPodSandbox', request: { config: { metadata: { name: 'p', namespace: 'd', uid: 'u' } } }, want: 120_000 },
    { name: 'ExecSync gets its timeout plus the request timeout', service: 'runtime' as const, method: 'ExecSync', request: { containerId: 'c1', cmd: ['true'], timeout: 5 }, want: 125_000 },
    { name: 'ExecSync without a timeout gets the request timeout', service: 'runtime' as const, method: 'ExecSync', request: { containerId: 'c1', cmd: ['true'] }, want: 120_000 },
    { name: 'PullImage gets the pull timeout', service: 'image' as const, method: 'PullImage', request: { image: { image: 'x' } }, want: 60_000 },
    { name: 'ImageFsInfo gets the list timeout', service: 'image' as const, method: 'ImageFsInfo', request: {}, want: 30_000 },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { conn, gw } = setup();
      await gw.call(tc.service, tc.method, tc.request);
      assert.equal(conn.sent[0]?.deadlineMs, tc.want);
    });
  }
});

describe('CriGateway: bad input never reaches the runtime', () => {
  const cases = [
    { name: 'unknown method', method: 'NoSuchMethod', request: {}, code: 'Unimplemented', re: /unknown runtime method "NoSuchMethod"/ },
    { name: 'not an object', method: 'ListContainers', request: 'hello', code: 'InvalidArgument', re: /must be a JSON object/ },
    { name: 'misspelled field', method: 'StopPodSandbox', request: { podSandboxID: 'x' }, code: 'InvalidArgument', re: /^StopPodSandbox: podSandboxID: unknown field of StopPodSandboxRequest \(its fields: podSandboxId\)$/ },
    { name: 'misspelled nested field', method: 'RunPodSandbox', request: { config: { metadata: { nme: 'p', namespace: 'd', uid: 'u' } } }, code: 'InvalidArgument', re: /config\.metadata\.nme: unknown field of PodSandboxMetadata/ },
    { name: 'a field upstream does not have (the old invented audit_request_id)', method: 'Exec', request: { containerId: 'c', cmd: ['sh'], auditRequestId: 'a' }, code: 'InvalidArgument', re: /auditRequestId: unknown field of ExecRequest/ },
    { name: 'a string where an object belongs', method: 'CreateContainer', request: { podSandboxId: 's', config: { metadata: { name: 'c' }, image: 'busybox' } }, code: 'InvalidArgument', re: /config\.image must be an object \(ImageSpec\)/ },
    { name: 'an int32 out of range', method: 'RunPodSandbox', request: { config: { metadata: { name: 'p', namespace: 'd', uid: 'u', attempt: -1 } } }, code: 'InvalidArgument', re: /config\.metadata\.attempt must be an integer in the uint32 range/ },
    { name: 'a map value of the wrong type', method: 'RunPodSandbox', request: { config: { metadata: { name: 'p', namespace: 'd', uid: 'u' }, labels: { a: 1 } } }, code: 'InvalidArgument', re: /config\.labels\.a must be a string/ },
    { name: 'missing id', method: 'StopPodSandbox', request: {}, code: 'InvalidArgument', re: /podSandboxId is required by StopPodSandbox/ },
    { name: 'empty id', method: 'RemoveContainer', request: { containerId: '' }, code: 'InvalidArgument', re: /containerId is required/ },
    { name: 'wrong type', method: 'StopContainer', request: { containerId: 'c', timeout: 'soon' }, code: 'InvalidArgument', re: /timeout must be an integer/ },
    { name: 'wrong nested type', method: 'ListContainers', request: { filter: { state: { state: 'SLEEPING' } } }, code: 'InvalidArgument', re: /filter.state.state must be one of CONTAINER_CREATED/ },
    { name: 'label selector not a map', method: 'ListContainers', request: { filter: { labelSelector: ['a'] } }, code: 'InvalidArgument', re: /filter.labelSelector must be an object/ },
    { name: 'ExecSync without a command', method: 'ExecSync', request: { containerId: 'c', cmd: [] }, code: 'InvalidArgument', re: /cmd is required/ },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { conn, gw } = setup();
      await assert.rejects(gw.call('runtime', tc.method, tc.request), (err: unknown) => err instanceof CriError && err.code === tc.code && tc.re.test(err.description));
      assert.equal(conn.sent.length, 0);
    });
  }
});

describe('CriGateway: the caller\'s deadline', () => {
  const cases = [
    { name: 'a caller with a 5-minute pull timeout gets a 5-minute gRPC deadline', service: 'image' as const, method: 'PullImage', request: { image: { image: 'x' } }, caller: 300_000, want: 300_000 },
    { name: 'a caller\'s short deadline wins over the gateway\'s longer one', service: 'runtime' as const, method: 'StopContainer', request: { containerId: 'c' }, caller: 1500, want: 1500 },
    { name: 'a call without one gets the gateway\'s own', service: 'image' as const, method: 'PullImage', request: { image: { image: 'x' } }, caller: undefined, want: 60_000 },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { conn, gw } = setup();
      await gw.call(tc.service, tc.method, tc.request, tc.caller);
      assert.equal(conn.sent[0]?.deadlineMs, tc.want);
    });
  }
});

describe('CriGateway: the generated messages on both sides', () => {
  it('sends the runtime the generated request, proto defaults filled in, int64 given as numbers or strings', async () => {
    const { conn, gw } = setup();
    await gw.call('runtime', 'StopContainer', { containerId: 'c1', timeout: 30 });
    await gw.call('runtime', 'StopContainer', { containerId: 'c1', timeout: '30' });
    assert.deepEqual(conn.sent.map((s) => s.request), [{ containerId: 'c1', timeout: '30' }, { containerId: 'c1', timeout: '30' }]);
  });

  it('answers ExecSync with stdout and stderr as base64 text', async () => {
    const { conn, gw } = setup();
    conn.answer = () => Promise.resolve({ stdout: Buffer.from('out\n'), stderr: Buffer.from('err\n'), exitCode: 3 });
    const reply = await gw.call('runtime', 'ExecSync', { containerId: 'c1', cmd: ['sh'] });
    assert.deepEqual(reply, { stdout: Buffer.from('out\n').toString('base64'), stderr: Buffer.from('err\n').toString('base64'), exitCode: 3 });
    assert.equal((JSON.parse(JSON.stringify(reply)) as { stdout: string }).stdout, 'b3V0Cg==');
  });
});

describe('CriGateway: results, errors and metrics', () => {
  it('passes the runtime answer through and records the operation', async () => {
    const { conn, gw, metrics, clock } = setup();
    conn.answer = async () => {
      await clock.step(250);
      return { containers: [{ id: 'c1' }] };
    };
    assert.deepEqual(await gw.call('runtime', 'ListContainers', {}), { containers: [{ id: 'c1' }] });
    assert.deepEqual(metrics.ops, [{ operation: 'list_containers', seconds: 0.25, failed: false }]);
  });

  it('keeps the gRPC code of a runtime error and counts it as an error', async () => {
    const { conn, gw, metrics } = setup();
    conn.answer = () => Promise.reject(new CriError('NotFound', 'container "c9" not found'));
    await assert.rejects(gw.call('runtime', 'ContainerStatus', { containerId: 'c9' }), { code: 'NotFound', description: 'container "c9" not found' });
    assert.deepEqual(metrics.ops.map((o) => [o.operation, o.failed]), [['container_status', true]]);
  });

  it('records RunPodSandbox by runtime handler, with its errors', async () => {
    const { conn, gw, metrics } = setup();
    conn.answer = () => Promise.reject(new CriError('Unknown', 'failed to setup network'));
    await assert.rejects(gw.call('runtime', 'RunPodSandbox', { config: { metadata: { name: 'p', namespace: 'd', uid: 'u' } }, runtimeHandler: 'runc' }));
    assert.deepEqual(metrics.sandboxes, [{ handler: 'runc', failed: true }]);
  });
});

describe('CriGateway: runtime changes wait for a slot (RUNTIME_CHANGE_CONCURRENCY)', () => {
  it('a second RunPodSandbox is sent once the first is answered, with its deadline less the wait; reads are not held', async () => {
    const conn = new FakeConnection();
    const clock = new FakeClock(0);
    const gw = new CriGateway(conn, timeouts, new RecordingMetrics(), clock, new RuntimeChangeQueue(1, clock));
    const answers: (() => void)[] = [];
    conn.answer = (s) => (s.method === 'RunPodSandbox' ? new Promise((r) => answers.push(() => r({ podSandboxId: 'sb' }))) : Promise.resolve({ containers: [] }));
    const sandbox = { config: { metadata: { name: 'p', namespace: 'd', uid: 'u' } } };
    const first = gw.call('runtime', 'RunPodSandbox', sandbox);
    const second = gw.call('runtime', 'RunPodSandbox', sandbox);
    await gw.call('runtime', 'ListContainers', {});
    assert.deepEqual(conn.sent.map((s) => s.method), ['RunPodSandbox', 'ListContainers'], 'the second sandbox waits; the read does not');
    await clock.step(3000);
    answers[0]?.();
    await first;
    await clock.step(0);
    assert.deepEqual(conn.sent.map((s) => [s.method, s.deadlineMs]), [['RunPodSandbox', 120_000], ['ListContainers', 30_000], ['RunPodSandbox', 117_000]]);
    answers[1]?.();
    await second;
  });
});
