/**
 * The query of the streaming routes, after k8s.io/kubelet
 * pkg/cri/streaming/remotecommand/httpstream.go NewOptions,
 * portforward/websocket.go NewV4Options and server.go getExecRequestParams /
 * getRun. The parameter names are v1's (k8s.io/api core/v1 types.go):
 * `command` (repeated), `input`, `output`, `error`, `tty`, `port`. Pure.
 */
import { KubeletServerError, type StreamOptions } from './ports.js';

/** NewOptions: a stream is asked for by `=1`; tty with stderr drops stderr (a tty has one output); none at all is a 400. */
export function parseStreamOptions(query: URLSearchParams): StreamOptions {
  const on = (k: string) => query.get(k) === '1';
  const tty = on('tty');
  const opts = { stdin: on('input'), stdout: on('output'), stderr: on('error') && !tty, tty };
  if (!opts.stdin && !opts.stdout && !opts.stderr) throw new KubeletServerError(400, 'you must specify at least 1 of stdin, stdout, stderr');
  return opts;
}

/** The exec's command: every `command` parameter, in order. */
export function execCommand(query: URLSearchParams): string[] {
  return query.getAll('command');
}

/** `/run`'s command: `cmd`, split on spaces ("for legacy reasons, run uses different query param than exec"). */
export function runCommand(query: URLSearchParams): string[] {
  return (query.get('cmd') ?? '').split(' ');
}

/**
 * NewV4Options: a websocket port-forward names its ports in the query
 * (`port`, repeated or comma-separated, each 1..65535); an SPDY one names
 * them in each stream's headers, so none here.
 */
export function parsePortForwardPorts(query: URLSearchParams, websocket: boolean): number[] {
  if (!websocket) return [];
  const values = query.getAll('port');
  if (values.length === 0) throw new KubeletServerError(400, 'query parameter "port" is required');
  const ports: number[] = [];
  for (const v of values) {
    if (v === '') throw new KubeletServerError(400, 'query parameter "port" cannot be empty');
    for (const p of v.split(',')) {
      if (!/^\d+$/.test(p) || Number(p) > 65535) throw new KubeletServerError(400, `unable to parse "${v}" as a port`);
      if (Number(p) < 1) throw new KubeletServerError(400, `port "${v}" must be > 0`);
      ports.push(Number(p));
    }
  }
  return ports;
}

/** wsstream.IsWebSocketRequest: `Connection: Upgrade` and `Upgrade: websocket`. */
export function isWebSocketRequest(headers: Record<string, string | string[] | undefined>): boolean {
  return isUpgradeRequest(headers) && String(headers['upgrade']).toLowerCase() === 'websocket';
}

/** httpstream.IsUpgradeRequest: a `Connection` header naming `upgrade`. */
export function isUpgradeRequest(headers: Record<string, string | string[] | undefined>): boolean {
  const conn = headers['connection'];
  return (Array.isArray(conn) ? conn : [conn ?? '']).some((c) => c.split(',').some((t) => t.trim().toLowerCase() === 'upgrade'));
}
