/**
 * The CRI log format and the log options, after k8s.io/kubernetes
 * pkg/kubelet/kuberuntime/logs/logs.go (parseCRILog, logOptions, the
 * logWriter's limits) and pkg/util/tail (the tail lines).
 *
 * A container's log file, written by the runtime, holds one entry a line:
 *
 *     2026-01-01T00:00:00.123456789Z stdout F hello
 *     <RFC3339Nano time>             <stream> <P|F> <content>
 *
 * `P` marks a partial entry (a line the runtime split, or the last output of
 * a process that ended without a newline): its content goes on in the next
 * entries of its stream up to the `F` one, and is served as it is, without a
 * newline, as upstream's ReadLogs writes it. Pure: the files and the clock
 * are the caller's.
 */

/** One entry of the log file: a line of output, or a part of one (a partial entry). */
export interface LogLine {
  /** Its time as written (RFC3339Nano). */
  timestamp: string;
  /** Its time in milliseconds since the epoch. */
  time: number;
  stream: 'stdout' | 'stderr';
  /** The content, without the newline. */
  content: string;
  /** Whether the line ends here (an `F` entry): its content is served with a newline. */
  newline: boolean;
  /** Whether it goes on from a partial entry of its stream: served without a timestamp of its own. */
  continuation: boolean;
}

/** What a `/containerLogs` request asks for (v1.PodLogOptions as the kubelet server reads it). */
export interface LogOptions {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  /** Only the last n lines; undefined: all. */
  tailLines?: number;
  /** Only lines at or after this time (ms since the epoch); from sinceSeconds or sinceTime. */
  since?: number;
  /** Stop after this many bytes of output. */
  limitBytes?: number;
}

/** A request whose options do not parse: a 400, as the apiserver's validation answers. */
export class LogOptionsError extends Error {}

/** One entry of the file: undefined when the line is not in the CRI format (upstream skips it, logging). */
export interface CriLogEntry {
  timestamp: string;
  time: number;
  stream: 'stdout' | 'stderr';
  partial: boolean;
  content: string;
}

/** parseCRILog: `<time> <stream> <tag> <content>`. */
export function parseCriLogEntry(line: string): CriLogEntry | undefined {
  const a = line.indexOf(' ');
  if (a < 0) return undefined;
  const timestamp = line.slice(0, a);
  const time = parseRfc3339(timestamp);
  if (time === undefined) return undefined;
  const b = line.indexOf(' ', a + 1);
  if (b < 0) return undefined;
  const stream = line.slice(a + 1, b);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  // The tag: `P`, `F`, or (CRI logs of old runtimes) absent; tags may carry more, colon-separated.
  const c = line.indexOf(' ', b + 1);
  const tag = c < 0 ? line.slice(b + 1) : line.slice(b + 1, c);
  const tags = tag.split(':');
  if (tags[0] !== 'P' && tags[0] !== 'F') return undefined;
  return { timestamp, time, stream, partial: tags[0] === 'P', content: c < 0 ? '' : line.slice(c + 1) };
}

/** RFC3339 with up to nanoseconds, to milliseconds (Date.parse takes milliseconds only). */
export function parseRfc3339(s: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${(m[2] ?? '.0').slice(0, 4).padEnd(4, '0')}${m[3]}`);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Decodes a log file's text into its entries, each a LogLine (upstream's
 * ReadLogs: one message per file line, a partial entry's content written
 * without a newline, the timestamp only where a line of its stream begins;
 * `pending` carries which streams are in the middle of a line from one read
 * to the next). Returns them and the text not yet decoded (a last file line
 * without its newline), which a follower prepends to what it reads next.
 */
export function decodeCriLog(text: string, pending: Map<string, LogLine> = new Map()): { lines: LogLine[]; rest: string } {
  const lines: LogLine[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) break;
    const entry = parseCriLogEntry(text.slice(start, nl));
    start = nl + 1;
    if (!entry) continue;
    const line: LogLine = { timestamp: entry.timestamp, time: entry.time, stream: entry.stream, content: entry.content, newline: !entry.partial, continuation: pending.has(entry.stream) };
    if (entry.partial) pending.set(entry.stream, line);
    else pending.delete(entry.stream);
    lines.push(line);
  }
  return { lines, rest: text.slice(start) };
}

/** The lines the options select from a file's lines: those since `since`, then the last `tailLines` of them. */
export function selectLines(lines: readonly LogLine[], opts: Pick<LogOptions, 'since' | 'tailLines'>): LogLine[] {
  const since = opts.since;
  let out = since === undefined ? [...lines] : lines.filter((l) => l.time >= since);
  if (opts.tailLines !== undefined) out = opts.tailLines === 0 ? [] : out.slice(-opts.tailLines);
  return out;
}

/** An entry as the log server writes it: its content, a newline where the line ends, the timestamp first (with `timestamps`) where it begins. */
export function formatLine(line: LogLine, timestamps: boolean): string {
  return `${timestamps && !line.continuation ? `${line.timestamp} ` : ''}${line.content}${line.newline ? '\n' : ''}`;
}

/** Keeps the output under limitBytes (logWriter's remain): what of `chunk` may still be written. */
export class ByteLimit {
  private remaining: number;
  constructor(limit: number | undefined) {
    this.remaining = limit ?? Infinity;
  }
  get exhausted(): boolean {
    return this.remaining <= 0;
  }
  take(chunk: string): Buffer {
    const buf = Buffer.from(chunk);
    if (buf.length <= this.remaining) {
      this.remaining -= buf.length;
      return buf;
    }
    const cut = buf.subarray(0, Math.max(0, this.remaining));
    this.remaining = 0;
    return cut;
  }
}

/**
 * The query string of `/containerLogs` as v1.PodLogOptions: `follow`,
 * `previous`, `timestamps` (true for `true` or `1`, as the apiserver's
 * boolean conversion), `tailLines`, `limitBytes` (non-negative / positive
 * integers), `sinceSeconds` (positive) or `sinceTime` (RFC3339), not both.
 */
export function parseLogOptions(query: Record<string, unknown>, now: number): LogOptions {
  const str = (k: string): string | undefined => {
    const v = query[k];
    return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
  };
  const bool = (k: string): boolean => {
    const v = str(k);
    if (v === undefined || v === '' || v === 'false' || v === '0') return false;
    if (v === 'true' || v === '1') return true;
    throw new LogOptionsError(`${k}: invalid value "${v}": want true or false`);
  };
  const int = (k: string, min: number): number | undefined => {
    const v = str(k);
    if (v === undefined || v === '') return undefined;
    if (!/^-?\d+$/.test(v)) throw new LogOptionsError(`${k}: invalid value "${v}": want an integer`);
    const n = Number(v);
    if (n < min) throw new LogOptionsError(`${k}: Invalid value: ${n}: must be ${min === 0 ? 'greater than or equal to 0' : 'greater than 0'}`);
    return n;
  };
  const opts: LogOptions = { follow: bool('follow'), previous: bool('previous'), timestamps: bool('timestamps') };
  const tailLines = int('tailLines', 0);
  if (tailLines !== undefined) opts.tailLines = tailLines;
  const limitBytes = int('limitBytes', 1);
  if (limitBytes !== undefined) opts.limitBytes = limitBytes;
  const sinceSeconds = int('sinceSeconds', 1);
  const sinceTime = str('sinceTime');
  if (sinceSeconds !== undefined && sinceTime) throw new LogOptionsError('at most one of `sinceTime` or `sinceSeconds` may be specified');
  if (sinceSeconds !== undefined) opts.since = now - sinceSeconds * 1000;
  if (sinceTime) {
    const t = parseRfc3339(sinceTime);
    if (t === undefined) throw new LogOptionsError(`sinceTime: invalid value "${sinceTime}": want RFC3339`);
    opts.since = t;
  }
  return opts;
}
