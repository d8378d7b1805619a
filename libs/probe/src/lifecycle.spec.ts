import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, LifecycleHandler, Pod } from '@app/contracts';
import { CriError } from '@app/cri';
import { LifecycleHandlerRunner, type LifecycleHookTarget } from './lifecycle.js';
import { HTTP_RESPONSE_TO_HTTPS_CLIENT } from './ports.js';
import { FakeCommandRunner, FakeHttpClient, type FakeHttpAnswer } from './testing.js';

const pod: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'uid-1' }, spec: { containers: [] } };
const container: Container = { name: 'app', ports: [{ name: 'http', containerPort: 8080 }] };

function setup(o: { http?: FakeHttpAnswer[]; exec?: (CriError | { stdout?: string; stderr?: string; exitCode: number })[] } = {}) {
  const clock = new FakeClock();
  const http = new FakeHttpClient({ status: 200 }).answer(...(o.http ?? []));
  const commands = new FakeCommandRunner().answer(...(o.exec ?? []));
  const fallbacks: { pod: string; message: string }[] = [];
  const runner = new LifecycleHandlerRunner({ commands, http, clock, onHttpFallback: (p, message) => fallbacks.push({ pod: p.metadata.name ?? '', message }) });
  return { clock, http, commands, runner, fallbacks };
}

/** A hook target whose pod IP is `podIP`; `asked` counts how often the runner asked for it. */
function target(o: { podIP?: string; timeoutSeconds?: number } = {}): LifecycleHookTarget & { asked: number } {
  const t: LifecycleHookTarget & { asked: number } = {
    pod,
    container,
    containerId: 'abc',
    timeoutSeconds: o.timeoutSeconds ?? 30,
    asked: 0,
    podIP: () => {
      t.asked++;
      return Promise.resolve(o.podIP);
    },
  };
  return t;
}

describe('LifecycleHandlerRunner: exec (handlers.go Run, RunInContainer)', () => {
  const hook: LifecycleHandler = { exec: { command: ['sh', '-c', 'echo hi'] } };
  const cases: { name: string; exec: CriError | { stdout?: string; stderr?: string; exitCode: number }; want: string | undefined }[] = [
    { name: 'exit 0 is a success', exec: { stdout: 'hi', exitCode: 0 }, want: undefined },
    {
      name: "a non-zero exit fails with upstream's message, output included",
      exec: { stdout: 'out', stderr: 'token=s3cret', exitCode: 1 },
      want: `Exec lifecycle hook ([sh -c echo hi]) for Container "app" in Pod "web_default(uid-1)" failed - error: command 'sh -c echo hi' exited with 1: token=s3cret, message: "outtoken=s3cret"`,
    },
    {
      name: 'a timeout fails',
      exec: new CriError('DeadlineExceeded', 'deadline'),
      want: 'Exec lifecycle hook ([sh -c echo hi]) for Container "app" in Pod "web_default(uid-1)" failed - error: command "sh -c echo hi" timed out, message: ""',
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { runner, commands } = setup({ exec: [tc.exec] });
      assert.equal(await runner.run(target({ timeoutSeconds: 7 }), hook), tc.want);
      assert.deepEqual(commands.calls, [{ containerId: 'abc', cmd: ['sh', '-c', 'echo hi'], timeoutSeconds: 7 }]);
    });
  }
});

describe('LifecycleHandlerRunner: httpGet (runHTTPHandler)', () => {
  const cases: { name: string; hook: LifecycleHandler['httpGet'] & object; podIP?: string; http?: FakeHttpAnswer[]; want: string | undefined; wantUrls: string[]; wantHost?: string; wantAsked: number }[] = [
    { name: 'a 200 is a success', hook: { port: 8080, path: '/hook' }, podIP: '10.0.0.5', want: undefined, wantUrls: ['http://10.0.0.5:8080/hook'], wantAsked: 1 },
    {
      name: 'any status is a success: only a transport error fails a hook',
      hook: { port: 8080, path: '/hook' },
      podIP: '10.0.0.5',
      http: [{ status: 500, body: 'secret' }],
      want: undefined,
      wantUrls: ['http://10.0.0.5:8080/hook'],
      wantAsked: 1,
    },
    { name: 'an IPv6 pod IP in brackets', hook: { port: 'http', path: '/hook' }, podIP: 'fd00::5', want: undefined, wantUrls: ['http://[fd00::5]:8080/hook'], wantAsked: 1 },
    {
      name: 'the Host header is the request host; the action host is used without asking for the pod IP',
      hook: { port: 8080, host: '192.168.1.9', path: '/hook', httpHeaders: [{ name: 'Host', value: 'svc.test' }] },
      want: undefined,
      wantUrls: ['http://192.168.1.9:8080/hook'],
      wantHost: 'svc.test',
      wantAsked: 0,
    },
    {
      name: 'a redirect on the same host is followed, one elsewhere is not',
      hook: { port: 8080, path: '/hook' },
      podIP: '10.0.0.5',
      http: [{ status: 302, location: '/moved' }, { status: 302, location: 'http://elsewhere.test/' }],
      want: undefined,
      wantUrls: ['http://10.0.0.5:8080/hook', 'http://10.0.0.5:8080/moved'],
      wantAsked: 1,
    },
    {
      name: "a refused connection fails with upstream's message",
      hook: { port: 8080, path: '/hook' },
      podIP: '10.0.0.5',
      http: [{ error: 'ECONNREFUSED' }],
      want: 'HTTP lifecycle hook (/hook) for Container "app" in Pod "web_default(uid-1)" failed - error: Get "http://10.0.0.5:8080/hook": dial tcp 10.0.0.5:8080: connect: connection refused',
      wantUrls: ['http://10.0.0.5:8080/hook'],
      wantAsked: 1,
    },
    {
      name: 'no pod IP fails without a request',
      hook: { port: 8080, path: '/hook' },
      want: 'HTTP lifecycle hook (/hook) for Container "app" in Pod "web_default(uid-1)" failed - error: failed to find networking container: pod web_default(uid-1) has no IP',
      wantUrls: [],
      wantAsked: 1,
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { runner, http } = setup({ ...(tc.http ? { http: tc.http } : {}) });
      const t = target(tc.podIP ? { podIP: tc.podIP } : {});
      assert.equal(await runner.run(t, { httpGet: tc.hook }), tc.want);
      assert.deepEqual(
        http.requests.map((r) => r.url.href),
        tc.wantUrls,
      );
      assert.equal(http.requests[0]?.host, tc.wantHost);
      assert.equal(t.asked, tc.wantAsked, 'times the pod IP was asked for');
    });
  }

  it('identifies itself as kube-lifecycle, not kube-probe', async () => {
    const { runner, http } = setup();
    await runner.run(target({ podIP: '10.0.0.5' }), { httpGet: { port: 8080 } });
    assert.deepEqual(http.requests[0]?.headers, { 'User-Agent': 'kube-lifecycle/1.34', Accept: '*/*' });
  });

  it('no answer within the hook timeout fails, on the clock', async () => {
    const { runner, clock } = setup({ http: ['hang'] });
    let done: string | undefined | null = null;
    const pending = runner.run(target({ podIP: '10.0.0.5', timeoutSeconds: 2 }), { httpGet: { port: 8080, path: '/slow' } }).then((m) => (done = m));
    await clock.step(1999);
    assert.equal(done, null, 'still waiting');
    await clock.step(1);
    await pending;
    assert.equal(done, 'HTTP lifecycle hook (/slow) for Container "app" in Pod "web_default(uid-1)" failed - error: Get "http://10.0.0.5:8080/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)');
  });
});

describe('LifecycleHandlerRunner: an HTTPS hook answered in plain HTTP (isHTTPResponseError)', () => {
  const plainHttp: FakeHttpAnswer = { error: 'EPROTO', message: HTTP_RESPONSE_TO_HTTPS_CLIENT };
  const hook: LifecycleHandler = { httpGet: { port: 8443, scheme: 'HTTPS', path: '/hook', httpHeaders: [{ name: 'Authorization', value: 'Bearer s3cret' }, { name: 'X-A', value: '1' }] } };

  it('is retried over HTTP without the Authorization header; success records LifecycleHTTPFallback', async () => {
    const { runner, http, fallbacks } = setup({ http: [plainHttp, { status: 200 }] });
    assert.equal(await runner.run(target({ podIP: '10.0.0.5' }), hook), undefined);
    assert.deepEqual(
      http.requests.map((r) => [r.url.href, r.headers['Authorization']]),
      [
        ['https://10.0.0.5:8443/hook', 'Bearer s3cret'],
        ['http://10.0.0.5:8443/hook', undefined],
      ],
    );
    assert.equal(http.requests[1]?.headers['X-A'], '1', 'the other headers stay');
    assert.deepEqual(fallbacks, [{ pod: 'web', message: 'request to HTTPS lifecycle hook 10.0.0.5:8443 got HTTP response, retry with HTTP succeeded' }]);
  });

  it('a failed retry fails the hook with the HTTPS error, no fallback recorded', async () => {
    const { runner, fallbacks } = setup({ http: [plainHttp, { error: 'ECONNRESET' }] });
    assert.equal(
      await runner.run(target({ podIP: '10.0.0.5' }), hook),
      `HTTP lifecycle hook (/hook) for Container "app" in Pod "web_default(uid-1)" failed - error: Get "https://10.0.0.5:8443/hook": ${HTTP_RESPONSE_TO_HTTPS_CLIENT}`,
    );
    assert.deepEqual(fallbacks, []);
  });

  it('other HTTPS errors are not retried', async () => {
    const { runner, http } = setup({ http: [{ error: 'ECONNREFUSED' }] });
    assert.match((await runner.run(target({ podIP: '10.0.0.5' }), hook)) ?? '', /connection refused$/);
    assert.equal(http.requests.length, 1);
  });
});

describe('LifecycleHandlerRunner: handlers it refuses', () => {
  const cases: { name: string; hook: LifecycleHandler; want: string }[] = [
    {
      name: 'tcpSocket is refused as an invalid handler, nothing dialled',
      hook: { tcpSocket: { port: 8080 } },
      want: 'Cannot run handler: invalid handler: &LifecycleHandler{Exec:nil,HTTPGet:nil,TCPSocket:&TCPSocketAction{Port:{0 8080 },Host:,},Sleep:nil,}',
    },
    {
      name: 'tcpSocket by port name and host',
      hook: { tcpSocket: { port: 'http', host: '10.0.0.9' } },
      want: 'Cannot run handler: invalid handler: &LifecycleHandler{Exec:nil,HTTPGet:nil,TCPSocket:&TCPSocketAction{Port:{1 0 http},Host:10.0.0.9,},Sleep:nil,}',
    },
    { name: 'a handler of no kind', hook: {}, want: 'Cannot run handler: invalid handler: &LifecycleHandler{Exec:nil,HTTPGet:nil,TCPSocket:nil,Sleep:nil,}' },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { runner, http, commands } = setup();
      assert.equal(await runner.run(target({ podIP: '10.0.0.5' }), tc.hook), tc.want);
      assert.equal(http.requests.length + commands.calls.length, 0);
    });
  }
});

describe('LifecycleHandlerRunner: sleep', () => {
  it('waits its seconds on the clock, at most the hook timeout', async () => {
    const { runner, clock } = setup();
    let done = false;
    const pending = runner.run(target({ timeoutSeconds: 3 }), { sleep: { seconds: 10 } }).then((m) => {
      done = true;
      return m;
    });
    await clock.step(2999);
    assert.equal(done, false);
    await clock.step(1);
    assert.equal(await pending, undefined);
  });
});

describe('LifecycleHandlerRunner: a cancelled hook (its sync cancelled to hurry a termination)', () => {
  const cases: { name: string; handler: LifecycleHandler; prepare?: (s: ReturnType<typeof setup>) => void; want: RegExp }[] = [
    {
      name: 'exec: the ExecSync is cancelled at once, the hook fails',
      handler: { exec: { command: ['sh', '-c', 'sleep 600'] } },
      prepare: (s) => {
        s.commands.hold = new Promise(() => undefined);
      },
      want: /^Exec lifecycle hook \(\[sh -c sleep 600\]\) for Container "app" in Pod "web_default\(uid-1\)" failed - error: .*[Cc]ancel/,
    },
    { name: 'httpGet: the GET is cancelled at once, the hook fails', handler: { httpGet: { port: 8080, path: '/slow' } }, prepare: (s) => s.http.answer('hang'), want: /^HTTP lifecycle hook \(\/slow\) .* failed - error: Get "http:\/\/10\.0\.0\.5:8080\/slow": context deadline exceeded/ },
    { name: 'sleep: the sleep ends at once, the hook fails as upstream\'s runSleepHandler', handler: { sleep: { seconds: 600 } }, want: /^container terminated before sleep hook finished$/ },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const s = setup();
      tc.prepare?.(s);
      const abort = new AbortController();
      let done: string | undefined | null = null;
      const pending = s.runner.run({ ...target({ podIP: '10.0.0.5', timeoutSeconds: 600 }), signal: abort.signal }, tc.handler).then((m) => (done = m));
      await s.clock.step(1000);
      assert.equal(done, null, 'the hook runs until cancelled');
      abort.abort();
      await pending;
      assert.match(String(done), tc.want);
      assert.equal(s.clock.now() - Date.UTC(2026, 0, 1), 1000, 'no time passed after the cancellation');
    });
  }
});
