/**
 * A PLEG switched to evented mode over HTTP (POST /mode), ours or the Go
 * one: where the runtime streams container events (containerd 2) it stays
 * evented; where it does not (containerd 1.6) it falls back to the relist
 * by itself and says why. A bad mode is refused with a clear error.
 */
import assert from 'node:assert/strict';
import { runtimeStreamsEvents } from './runtime.js';

interface Mode {
  desired?: string;
  effective?: string;
  fallbackReason?: string;
}

/** How long evented mode must hold on containerd 2 to count as held: three of the PLEG's 10 s checks of the relay would have fallen back by then. */
const HOLD_MS = 5_000;

export async function expectEventedModeFollowsRuntime(port: number): Promise<void> {
  const url = `http://127.0.0.1:${port}/mode`;
  const read = async () => (await (await fetch(url)).json()) as Mode;
  const before = await read();
  const res = await fetch(url, { method: 'POST', body: '{"mode":"evented"}' });
  assert.equal(res.status, 200);
  const streams = runtimeStreamsEvents();
  // containerd 1.6: ends when it fell back; containerd 2: ends on a fallback (the failure) or when evented held for HOLD_MS.
  const deadline = Date.now() + 60_000;
  let heldSince: number | undefined;
  let mode = await read();
  while (Date.now() < deadline) {
    mode = await read();
    if (mode.effective === 'generic') break;
    if (streams && mode.effective === 'evented') {
      heldSince ??= Date.now();
      if (Date.now() - heldSince >= HOLD_MS) break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  if (streams) {
    assert.deepEqual(mode, { desired: 'evented', effective: 'evented' }, 'containerd 2 streams container events: evented mode holds');
  } else {
    assert.equal(mode.effective, 'generic');
    assert.match(mode.fallbackReason ?? '', /does not stream container events/);
  }
  const bad = await fetch(url, { method: 'POST', body: '{"mode":"sideways"}' });
  assert.equal(bad.status, 400);
  assert.deepEqual(await bad.json(), { error: { code: 'InvalidArgument', description: 'mode must be "generic" or "evented", got "sideways"' } });
  // Back to the mode the test found, for the tests after it.
  if (before.desired && before.desired !== 'evented') await fetch(url, { method: 'POST', body: JSON.stringify({ mode: before.desired }) });
}

/** A metric's value (the first sample of `name`, whatever its labels) from a /metrics URL; NaN when absent. */
export async function metricValue(metricsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}
