/**
 * The httpGet action (pkg/probe/http: request.go, http.go), shared by probes
 * and lifecycle hooks: the request built from an HTTPGetAction, the GET with
 * the kubelet's redirect rule and a timeout, and the probe's verdict.
 *
 * Both the prober's client and the lifecycle client follow redirects on the
 * same host only (RedirectChecker(false)): a redirect elsewhere is not
 * followed and its response is the answer; after 10 requests the chain fails.
 */
import { untilAborted, type Clock } from '@app/clock';
import type { Container, HTTPGetAction } from '@app/contracts';
import { joinHostPort } from '@app/kube';
import type { HttpClient, HttpRequest } from './ports.js';
import { MAX_PROBE_OUTPUT_BYTES, dialErrorText, failureOutcome, resolveContainerPort, type ProbeOutcome } from './probe.js';

/** Go's http.Client stops after 10 requests in a redirect chain. */
const MAX_REDIRECT_REQUESTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * NewRequestForHTTPGetAction: scheme HTTP or HTTPS, host defaulting to
 * `podIP` (an IPv6 one in brackets), port by number or by the container's
 * port name, the action's headers with a User-Agent and `Accept: *\/*`
 * unless set, a Host header as the request's host. Throws when the port
 * does not resolve.
 */
export function newRequestForHttpGetAction(action: HTTPGetAction, container: Container, podIP: string, userAgent: string): HttpRequest {
  const host = action.host || podIP;
  const port = resolveContainerPort(action.port, container);
  const path = action.path ?? '';
  const scheme = (action.scheme ?? 'HTTP').toLowerCase();
  const url = new URL(`${scheme}://${joinHostPort(host, port)}${path.startsWith('/') ? path : `/${path}`}`);
  const { headers, host: hostHeader } = probeHeaders(action.httpHeaders ?? [], userAgent);
  return { url, headers, ...(hostHeader !== undefined ? { host: hostHeader } : {}) };
}

/**
 * The probe's headers as Go's http.Header holds them (canonical names, a
 * repeated name sent once per value), with a User-Agent and `Accept: *\/*`
 * unless the probe set them (an empty Accept removes it). Host is not sent
 * as a header: it becomes the request's host.
 */
export function probeHeaders(list: readonly { name: string; value: string }[], userAgent: string): { headers: Record<string, string | string[]>; host: string | undefined } {
  const values = new Map<string, string[]>();
  for (const h of list) {
    const name = canonicalHeaderName(h.name);
    values.set(name, [...(values.get(name) ?? []), h.value]);
  }
  if (!values.has('User-Agent')) values.set('User-Agent', [userAgent]);
  if (!values.has('Accept')) values.set('Accept', ['*/*']);
  else if ((values.get('Accept')?.[0] ?? '') === '') values.delete('Accept');
  const host = values.get('Host')?.[0];
  values.delete('Host');
  const headers: Record<string, string | string[]> = {};
  for (const [name, v] of values) headers[name] = v.length === 1 ? (v[0] ?? '') : v;
  return { headers, host: host === '' ? undefined : host };
}

/** textproto.CanonicalMIMEHeaderKey: `x-custom-header` -> `X-Custom-Header`; names with other characters stay. */
export function canonicalHeaderName(name: string): string {
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) return name;
  return name
    .toLowerCase()
    .split('-')
    .map((p) => (p.length > 0 ? (p[0] ?? '').toUpperCase() + p.slice(1) : p))
    .join('-');
}

/** What a GET came to: a final response (its status and the first 10 KiB of its body), or the client's error. */
export type HttpGetResult = { ok: true; status: number; body: string } | { ok: false; error: string };

/**
 * client.Do with RedirectChecker(false) and a timeout on `clock`: the
 * final response, or the error as Go's client words it
 * (`Get "<url>": <reason>`).
 */
/** host:port as Go's URL and dialer write it: the default port of the scheme spelt out (WHATWG URL drops it). */
function hostWithPort(u: URL): string {
  return u.port ? u.host : `${u.host}:${u.protocol === 'https:' ? '443' : '80'}`;
}

/** The URL as Go prints the probe's: formatURL always writes the port, which WHATWG's href leaves out when it is the scheme's. */
function goHref(u: URL): string {
  return `${u.protocol}//${hostWithPort(u)}${u.pathname}${u.search}`;
}

export async function doHttpGet(client: HttpClient, clock: Clock, request: HttpRequest, timeoutMs: number, cancel?: AbortSignal): Promise<HttpGetResult> {
  const abort = new AbortController();
  const timer = clock.setTimer(timeoutMs, () => abort.abort());
  // The caller's cancellation (a lifecycle hook's sync cancelled) ends the request as its timeout does.
  const onCancel = () => abort.abort();
  if (cancel?.aborted) abort.abort();
  else cancel?.addEventListener('abort', onCancel, { once: true });
  const first = request.url;
  // The first URL is formatURL's, port and all; a redirect's is as its Location says.
  const shown = (u: URL) => (u === first ? goHref(u) : u.href);
  const customHost = request.host;
  let url = first;
  let hostHeader = customHost;
  let readingBody = false;
  try {
    for (let requests = 1; ; requests++) {
      const res = await untilAborted(client.get({ url, headers: request.headers, ...(hostHeader !== undefined ? { host: hostHeader } : {}) }, abort.signal), abort.signal, aborted);
      const location = res.location;
      if (REDIRECT_STATUSES.has(res.status) && location) {
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          res.discard();
          return { ok: false, error: `Get ${JSON.stringify(shown(url))}: failed to parse Location header ${JSON.stringify(location)}` };
        }
        // RedirectChecker(false): a redirect to another host is not followed, its response is the answer.
        if (next.hostname === first.hostname) {
          res.discard();
          if (requests >= MAX_REDIRECT_REQUESTS) return { ok: false, error: `Get ${JSON.stringify(next.href)}: stopped after 10 redirects` };
          // Go keeps a custom Host header through a redirect only when the Location is relative.
          hostHeader = customHost !== undefined && !/^[a-z][a-z0-9+.-]*:/i.test(location) ? customHost : undefined;
          url = next;
          continue;
        }
      }
      readingBody = true;
      const body = await untilAborted(res.readBody(MAX_PROBE_OUTPUT_BYTES), abort.signal, aborted);
      return { ok: true, status: res.status, body };
    }
  } catch (err) {
    if (abort.signal.aborted) {
      const what = readingBody ? 'Client.Timeout or context cancellation while reading body' : 'Client.Timeout exceeded while awaiting headers';
      return { ok: false, error: `Get ${JSON.stringify(shown(url))}: context deadline exceeded (${what})` };
    }
    return { ok: false, error: `Get ${JSON.stringify(shown(url))}: ${dialErrorText(err, hostWithPort(url))}` };
  } finally {
    timer.cancel();
    cancel?.removeEventListener('abort', onCancel);
  }
}

/**
 * DoHTTPProbe's verdict: 200-399 is a success (3xx, a redirect not
 * followed, with a warning), any other status or a client error a failure.
 */
export function httpProbeOutcome(result: HttpGetResult): ProbeOutcome {
  if (!result.ok) return failureOutcome(result.error);
  const { status, body } = result;
  if (status >= 200 && status < 400) {
    if (status >= 300) return { result: 'Success', output: `Probe terminated redirects, Response body: ${body}`, warning: true };
    return { result: 'Success', output: body };
  }
  // Upstream keeps the body out of the message (kubernetes#99425).
  return failureOutcome(`HTTP probe failed with statuscode: ${status}`);
}

const aborted = () => new Error('aborted');
