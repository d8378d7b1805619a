/**
 * Kubernetes resource quantities, as k8s.io/apimachinery/pkg/api/resource
 * parses them:
 *
 *   <quantity>  ::= <sign>? <number> <suffix>
 *   <number>    ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
 *   <suffix>    ::= "" | n | u | m | k | M | G | T | P | E        (decimal SI)
 *                 | Ki | Mi | Gi | Ti | Pi | Ei                   (binary SI)
 *                 | e <sign>? <digits> | E <sign>? <digits>       (decimal exponent)
 *
 * Like Quantity, the value is held exactly (here as a bigint count of
 * nano-units) and never as a float until the caller asks for a number: a
 * non-zero value finer than 1n rounds up to 1n ("if you want some
 * resources, you should get some resources"), binary-SI values are capped
 * at 2^63-1, and MilliValue / Value round up (away from zero).
 *
 * Upstream's scanner also takes degenerate strings such as "-" or "." as
 * zero; we follow the documented grammar and reject them.
 */

/** A string that is not a Kubernetes quantity. */
export class QuantityError extends Error {
  override name = 'QuantityError';

  constructor(
    /** The rejected input. */
    readonly quantity: string,
    detail?: string,
  ) {
    super(`${JSON.stringify(quantity)} is not a valid quantity${detail === undefined ? '' : ` (${detail})`}`);
  }
}

const NANO = 1_000_000_000n;
const NANOS_PER_MILLI = 1_000_000n;
/** Quantity caps binary-SI values at the largest int64 (quantity.go maxAllowed). */
const MAX_BINARY_NANOS = (2n ** 63n - 1n) * NANO;
/** Beyond 10^330 base units a quantity cannot be a JavaScript number anyway. */
const MAX_DECIMAL_SCALE = 330;

const DECIMAL_SI: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SI: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

// An SI suffix is tried before an exponent, so "1E" is one exa and "1E3" is 1000.
const QUANTITY_RE = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/;

/** Divides, rounding away from zero (inf.RoundUp, as Quantity rounds). */
function divideUp(n: bigint, d: bigint): bigint {
  const q = n / d;
  if (n % d === 0n) return q;
  return n < 0n ? q - 1n : q + 1n;
}

/**
 * Parses a quantity to an exact count of nano-units (1 = 1e-9 of the base
 * unit: a core, a byte). Throws QuantityError on anything else.
 */
export function parseQuantityNanos(s: string): bigint {
  // YAML `cpu: 1` arrives as a number; Quantity's UnmarshalJSON takes it too.
  const raw: unknown = s;
  const text = typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : raw;
  if (typeof text !== 'string') throw new QuantityError(String(raw), 'not a string');

  const m = QUANTITY_RE.exec(text);
  if (!m) throw new QuantityError(text);
  const [, sign = '', whole = '', frac = '', siSuffix, exponent] = m;
  if (whole === '' && frac === '') throw new QuantityError(text, 'no digits');

  const mantissa = BigInt(whole + frac) * (sign === '-' ? -1n : 1n);
  let nanos: bigint;
  const binary = siSuffix === undefined ? undefined : BINARY_SI[siSuffix];
  if (binary !== undefined) {
    nanos = divideUp(mantissa * 2n ** BigInt(binary) * NANO, 10n ** BigInt(frac.length));
    if (nanos > MAX_BINARY_NANOS) nanos = MAX_BINARY_NANOS;
    if (nanos < -MAX_BINARY_NANOS) nanos = -MAX_BINARY_NANOS;
  } else {
    const power = exponent === undefined ? (DECIMAL_SI[siSuffix ?? ''] ?? 0) : Number(exponent);
    const scale = power + 9 - frac.length;
    if (mantissa === 0n) return 0n;
    if (scale > MAX_DECIMAL_SCALE) throw new QuantityError(text, 'out of range');
    if (scale >= 0) {
      nanos = mantissa * 10n ** BigInt(scale);
    } else if (-scale > whole.length + frac.length) {
      // Far below one nano-unit: rounds up to the smallest representable amount.
      nanos = mantissa < 0n ? -1n : 1n;
    } else {
      nanos = divideUp(mantissa, 10n ** BigInt(-scale));
    }
  }
  return nanos;
}

/** Rounds nano-units up to whole milli-units (Quantity.MilliValue). */
export function nanosToMillis(nanos: bigint): number {
  return Number(divideUp(nanos, NANOS_PER_MILLI));
}

/** Rounds nano-units up to whole units (Quantity.Value). */
export function nanosToUnits(nanos: bigint): number {
  return Number(divideUp(nanos, NANO));
}

/** A quantity as a plain number of base units: "100m" -> 0.1, "64Mi" -> 67108864. */
export function parseQuantity(s: string): number {
  const nanos = parseQuantityNanos(s);
  // Split so that small fractions stay exact and large values lose only what a double must.
  return Number(nanos / NANO) + Number(nanos % NANO) / 1e9;
}

/** A CPU quantity in whole millicores, rounded up: "0.1m" -> 1, "1.5" -> 1500. */
export function cpuMillis(s: string): number {
  return nanosToMillis(parseQuantityNanos(s));
}

/** A memory quantity in whole bytes, rounded up: "64Mi" -> 67108864, "0.5" -> 1. */
export function memoryBytes(s: string): number {
  return nanosToUnits(parseQuantityNanos(s));
}
