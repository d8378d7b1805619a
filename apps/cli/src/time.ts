/**
 * Times as kubectl prints them: duration.HumanDuration (k8s.io/apimachinery
 * pkg/util/duration) for ages, translateTimestampSince, and RFC1123Z for
 * describe's timestamps. Times in the output are UTC: kubectl prints the
 * reader's local zone.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * duration.HumanDuration: ~2-3 significant figures (5s, 119s, 3m20s, 15m,
 * 5h30m, 30h, 2d3h, 45d, 2y30d, 9y). Up to a second into the future reads
 * as 0s (clock skew); more is <invalid>.
 */
export function formatAge(ms: number): string {
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const years = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** A metav1.Time as ms since the epoch; undefined for the zero time (absent or unreadable). */
export function timeOf(t: string | null | undefined): number | undefined {
  if (t === undefined || t === null || t === '') return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** translateTimestampSince */
export function since(t: string | null | undefined, now: number): string {
  const ms = timeOf(t);
  return ms === undefined ? '<unknown>' : formatAge(now - ms);
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad2 = (n: number): string => String(n).padStart(2, '0');

/** time.RFC1123Z in UTC ("Mon, 02 Jan 2006 15:04:05 +0000"); Go's zero time when unset. */
export function rfc1123z(t: string | null | undefined): string {
  const ms = timeOf(t);
  if (ms === undefined) return 'Mon, 01 Jan 0001 00:00:00 +0000';
  const d = new Date(ms);
  return `${DAYS[d.getUTCDay()] ?? ''}, ${pad2(d.getUTCDate())} ${MONTHS[d.getUTCMonth()] ?? ''} ${String(d.getUTCFullYear()).padStart(4, '0')} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} +0000`;
}
