import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, HTTPGetAction } from '@app/contracts';
import { canonicalHeaderName, doHttpGet, httpProbeOutcome, newRequestForHttpGetAction, type HttpGetResult } from './http.js';
import type { HttpRequest } from './ports.js';
import { KUBE_LIFECYCLE_USER_AGENT, KUBE_PROBE_USER_AGENT, type ProbeOutcome } from './probe.js';
import { FakeHttpClient, type FakeHttpAnswer } from './testing.js';

const container: Container = { name: 'app', ports: [{ name: 'http', containerPort: 8080 }] };

describe('newRequestForHttpGetAction (request.go)', () => {
  const cases: { name: string; action: HTTPGetAction; podIP: string; want: { url: string; host?: string } }[] = [
    { name: 'the pod IP, the port by number, the path', action: { port: 80, path: '/healthz' }, podIP: '10.0.0.5', want: { url: 'http://10.0.0.5/healthz' } },
    { name: 'the port by name', action: { port: 'http', path: '/' }, podIP: '10.0.0.5', want: { url: 'http://10.0.0.5:8080/' } },
    { name: 'a path without a leading slash gets one', action: { port: 8080, path: 'foo' }, podIP: '10.0.0.5', want: { url: 'http://10.0.0.5:8080/foo' } },
    { name: 'no path is /', action: { port: 8080 }, podIP: '10.0.0.5', want: { url: 'http://10.0.0.5:8080/' } },
    { name: 'an IPv6 pod IP in brackets', action: { port: 8080, path: '/' }, podIP: 'fd00::5', want: { url: 'http://[fd00::5]:8080/' } },
    { name: 'the action host wins over the pod IP', action: { port: 8080, host: 'example.test', path: '/' }, podIP: '10.0.0.5', want: { url: 'http://example.test:8080/' } },
    { name: 'HTTPS', action: { port: 8443, scheme: 'HTTPS', path: '/x?y=1' }, podIP: '10.0.0.5', want: { url: 'https://10.0.0.5:8443/x?y=1' } },
    { name: 'a Host header becomes the request host', action: { port: 8080, httpHeaders: [{ name: 'host', value: 'svc.test' }] }, podIP: '10.0.0.5', want: { url: 'http://10.0.0.5:8080/', host: 'svc.test' } },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const r = newRequestForHttpGetAction(tc.action, container, tc.podIP, KUBE_PROBE_USER_AGENT);
      assert.equal(r.url.href, tc.want.url);
      assert.equal(r.host, tc.want.host);
      assert.equal(r.headers['Host'], undefined, 'Host is never a header');
    });
  }

  it('sets User-Agent for its purpose and Accept */*, unless the action sets them', () => {
    assert.deepEqual(newRequestForHttpGetAction({ port: 80 }, container, '10.0.0.5', KUBE_LIFECYCLE_USER_AGENT).headers, { 'User-Agent': 'kube-lifecycle/1.34', Accept: '*/*' });
    assert.deepEqual(newRequestForHttpGetAction({ port: 80 }, container, '10.0.0.5', KUBE_PROBE_USER_AGENT).headers, { 'User-Agent': 'kube-probe/1.34', Accept: '*/*' });
    const own = newRequestForHttpGetAction({ port: 80, httpHeaders: [{ name: 'user-agent', value: 'mine' }, { name: 'Accept', value: '' }, { name: 'x-a', value: '1' }, { name: 'X-A', value: '2' }] }, container, '10.0.0.5', KUBE_PROBE_USER_AGENT);
    assert.deepEqual(own.headers, { 'User-Agent': 'mine', 'X-A': ['1', '2'] });
  });

  it('a port the container does not name throws', () => {
    assert.throws(() => newRequestForHttpGetAction({ port: 'metrics' }, container, '10.0.0.5', KUBE_PROBE_USER_AGENT), /"metrics" is neither a port name/);
  });
});

describe('doHttpGet (FakeHttpClient, FakeClock): RedirectChecker(false)', () => {
  const request = (o: Partial<HttpRequest> = {}): HttpRequest => ({ url: new URL('http://10.0.0.5:8080/start'), headers: { Accept: '*/*' }, ...o });
  const cases: { name: string; answers: FakeHttpAnswer[]; host?: string; want: HttpGetResult; wantUrls: string[]; wantHosts?: (string | undefined)[] }[] = [
    { name: 'a response is the answer, its body read up to 10 KiB', answers: [{ status: 200, body: 'ok' }], want: { ok: true, status: 200, body: 'ok' }, wantUrls: ['http://10.0.0.5:8080/start'] },
    {
      name: 'a redirect on the same host is followed',
      answers: [{ status: 302, location: '/next' }, { status: 204 }],
      want: { ok: true, status: 204, body: '' },
      wantUrls: ['http://10.0.0.5:8080/start', 'http://10.0.0.5:8080/next'],
    },
    {
      name: 'a redirect to another host is not followed: the 3xx is the answer',
      answers: [{ status: 301, location: 'http://elsewhere.test/', body: 'moved' }],
      want: { ok: true, status: 301, body: 'moved' },
      wantUrls: ['http://10.0.0.5:8080/start'],
    },
    {
      name: 'a relative redirect keeps the Host header, an absolute one drops it',
      host: 'svc.test',
      answers: [{ status: 302, location: '/a' }, { status: 302, location: 'http://10.0.0.5:8080/b' }, { status: 200 }],
      want: { ok: true, status: 200, body: '' },
      wantUrls: ['http://10.0.0.5:8080/start', 'http://10.0.0.5:8080/a', 'http://10.0.0.5:8080/b'],
      wantHosts: ['svc.test', 'svc.test', undefined],
    },
    {
      name: 'a redirect loop stops after 10 requests',
      answers: Array.from({ length: 12 }, () => ({ status: 302, location: '/start' })),
      want: { ok: false, error: 'Get "http://10.0.0.5:8080/start": stopped after 10 redirects' },
      wantUrls: Array.from({ length: 10 }, () => 'http://10.0.0.5:8080/start'),
    },
    {
      name: 'a refused connection is an error worded as Go',
      answers: [{ error: 'ECONNREFUSED' }],
      want: { ok: false, error: 'Get "http://10.0.0.5:8080/start": dial tcp 10.0.0.5:8080: connect: connection refused' },
      wantUrls: ['http://10.0.0.5:8080/start'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const client = new FakeHttpClient().answer(...tc.answers);
      const got = await doHttpGet(client, new FakeClock(), request(tc.host ? { host: tc.host } : {}), 1000);
      assert.deepEqual(got, tc.want);
      assert.deepEqual(
        client.requests.map((r) => r.url.href),
        tc.wantUrls,
      );
      if (tc.wantHosts)
        assert.deepEqual(
          client.requests.map((r) => r.host),
          tc.wantHosts,
        );
    });
  }

  it('on the scheme\'s default port, the error still names the port, as Go\'s formatURL and dialer do', async () => {
    const req = newRequestForHttpGetAction({ port: 443, scheme: 'HTTPS', path: '/readyz' }, container, '10.0.0.5', KUBE_PROBE_USER_AGENT);
    const got = await doHttpGet(new FakeHttpClient().answer({ error: 'ECONNREFUSED' }), new FakeClock(), req, 1000);
    assert.deepEqual(got, { ok: false, error: 'Get "https://10.0.0.5:443/readyz": dial tcp 10.0.0.5:443: connect: connection refused' });
  });

  it('the body is read with the 10 KiB limit', async () => {
    const client = new FakeHttpClient({ status: 200, body: 'y'.repeat(20_000) });
    const got = await doHttpGet(client, new FakeClock(), request(), 1000);
    assert.deepEqual(client.bodyLimits, [10 * 1024]);
    assert.equal(got.ok && got.body.length, 10 * 1024);
  });

  it('no answer within the timeout is a client timeout, on the clock', async () => {
    const clock = new FakeClock();
    const client = new FakeHttpClient('hang');
    let done: HttpGetResult | undefined;
    const pending = doHttpGet(client, clock, request(), 1000).then((r) => (done = r));
    await clock.step(999);
    assert.equal(done, undefined, 'still waiting at 999ms');
    await clock.step(1);
    await pending;
    assert.deepEqual(done, { ok: false, error: 'Get "http://10.0.0.5:8080/start": context deadline exceeded (Client.Timeout exceeded while awaiting headers)' });
  });
});

describe('httpProbeOutcome (DoHTTPProbe)', () => {
  const cases: { name: string; result: HttpGetResult; want: ProbeOutcome }[] = [
    { name: '200 is a success with the body', result: { ok: true, status: 200, body: 'ok' }, want: { result: 'Success', output: 'ok' } },
    { name: '399 is a success with a warning', result: { ok: true, status: 302, body: 'moved' }, want: { result: 'Success', output: 'Probe terminated redirects, Response body: moved', warning: true } },
    { name: '400 is a failure without the body', result: { ok: true, status: 400, body: 'secret' }, want: { result: 'Failure', output: 'HTTP probe failed with statuscode: 400' } },
    { name: '500 is a failure without the body', result: { ok: true, status: 500, body: 'secret' }, want: { result: 'Failure', output: 'HTTP probe failed with statuscode: 500' } },
    { name: 'a client error is a failure with its text', result: { ok: false, error: 'Get "x": boom' }, want: { result: 'Failure', output: 'Get "x": boom' } },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(httpProbeOutcome(tc.result), tc.want));
});

describe('canonicalHeaderName', () => {
  const cases: [string, string][] = [
    ['x-custom-header', 'X-Custom-Header'],
    ['USER-AGENT', 'User-Agent'],
    ['host', 'Host'],
    ['bad header', 'bad header'],
  ];
  for (const [name, want] of cases) it(`${name} -> ${want}`, () => assert.equal(canonicalHeaderName(name), want));
});
