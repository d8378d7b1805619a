/**
 * Settings that every service of a node must agree on (POD_WORKER_SHARDS:
 * the sync loop sends a pod's work to shard shardOf(uid, N) and pod workers
 * own shards 0..N-1; two values of N lose pods silently). The first service
 * to start records the value in the `leases` bucket under
 * `<node>.setting.<NAME>`, create-if-absent; a later one with another value
 * refuses to start instead of running beside it.
 */
import type { KV } from '@nats-io/kv';
import { kvKey } from './buckets.js';

/** What a recorded setting says. */
export interface SharedSettingRecord {
  value: string;
  /** The connection name of the service that recorded it. */
  recordedBy: string;
  recordedAt: string;
}

/** What agreeOnSetting uses of the `leases` bucket. */
export type SettingsKv = Pick<KV, 'create' | 'get'>;

export function sharedSettingKey(node: string, name: string): string {
  return kvKey(node, 'setting', name);
}

/** This service's value differs from the node's recorded one. */
export class SharedSettingMismatchError extends Error {
  constructor(
    readonly setting: string,
    readonly value: string,
    readonly recorded: SharedSettingRecord,
    readonly node: string,
  ) {
    const key = sharedSettingKey(node, setting);
    super(
      `${setting} is ${value} here, but ${setting}=${recorded.value} is recorded for node "${node}" ` +
        `(by ${recorded.recordedBy} at ${recorded.recordedAt}); every service of a node must use the same value. ` +
        `Start this service with ${setting}=${recorded.value}, or, to change it, stop every service of the node that reads ${setting}, ` +
        `delete the record (nats kv del leases ${key}) and start them all with the new value.`,
    );
    this.name = 'SharedSettingMismatchError';
  }
}

const decoder = new TextDecoder();

/**
 * Records `name=value` for the node unless a value is already recorded;
 * resolves 'recorded' or 'agreed', throws SharedSettingMismatchError when the
 * recorded value is another one.
 */
export async function agreeOnSetting(kv: SettingsKv, node: string, name: string, value: string, recordedBy: string, now: Date): Promise<'recorded' | 'agreed'> {
  const key = sharedSettingKey(node, name);
  const record: SharedSettingRecord = { value, recordedBy, recordedAt: now.toISOString() };
  let lastError: unknown;
  // Two attempts: a record deleted between our create and our get is created again.
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await kv.create(key, JSON.stringify(record));
      return 'recorded';
    } catch (err) {
      lastError = err;
    }
    const e = await kv.get(key);
    if (!e || e.operation !== 'PUT' || e.value.length === 0) continue;
    const recorded = JSON.parse(decoder.decode(e.value)) as SharedSettingRecord;
    if (recorded.value === value) return 'agreed';
    throw new SharedSettingMismatchError(name, value, recorded, node);
  }
  throw lastError;
}
