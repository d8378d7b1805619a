import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeKv } from './testing.js';
import { SharedSettingMismatchError, agreeOnSetting, sharedSettingKey, type SharedSettingRecord } from './shared-settings.js';

const at = new Date(Date.UTC(2026, 0, 1));

describe('agreeOnSetting', () => {
  it('the first service records the value, the next ones with the same value agree', async () => {
    const kv = new FakeKv('leases');
    assert.equal(await agreeOnSetting(kv, 'n1', 'POD_WORKER_SHARDS', '4', 'pod-worker@n1#a', at), 'recorded');
    assert.equal(await agreeOnSetting(kv, 'n1', 'POD_WORKER_SHARDS', '4', 'sync-loop@n1#b', at), 'agreed');
    assert.deepEqual(JSON.parse(kv.text(sharedSettingKey('n1', 'POD_WORKER_SHARDS')) ?? ''), { value: '4', recordedBy: 'pod-worker@n1#a', recordedAt: at.toISOString() });
  });

  it('another value is refused with both values, who recorded it and how to fix it', async () => {
    const kv = new FakeKv('leases');
    await agreeOnSetting(kv, 'n1', 'POD_WORKER_SHARDS', '4', 'pod-worker@n1#a', at);
    const err = await agreeOnSetting(kv, 'n1', 'POD_WORKER_SHARDS', '8', 'sync-loop@n1#b', at).then(
      () => assert.fail('agreed on another value'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof SharedSettingMismatchError);
    assert.match(err.message, /POD_WORKER_SHARDS is 8 here, but POD_WORKER_SHARDS=4 is recorded for node "n1"/);
    assert.match(err.message, /by pod-worker@n1#a/);
    assert.match(err.message, /Start this service with POD_WORKER_SHARDS=4/);
    assert.match(err.message, /nats kv del leases n1\.setting\.POD_WORKER_SHARDS/);
    assert.equal((JSON.parse(kv.text(sharedSettingKey('n1', 'POD_WORKER_SHARDS')) ?? '') as SharedSettingRecord).value, '4', 'the record is kept');
  });

  it('each node records its own value', async () => {
    const kv = new FakeKv('leases');
    await agreeOnSetting(kv, 'n1', 'POD_WORKER_SHARDS', '4', 'a', at);
    assert.equal(await agreeOnSetting(kv, 'n2', 'POD_WORKER_SHARDS', '8', 'b', at), 'recorded');
  });

  it('a deleted record is recorded again with the new value', async () => {
    const kv = new FakeKv('leases');
    await agreeOnSetting(kv, 'n1', 'POD_WORKER_SHARDS', '4', 'a', at);
    await kv.delete(sharedSettingKey('n1', 'POD_WORKER_SHARDS'));
    assert.equal(await agreeOnSetting(kv, 'n1', 'POD_WORKER_SHARDS', '8', 'b', at), 'recorded');
  });

  it('a bucket that fails is an error, not an agreement', async () => {
    const kv = new FakeKv('leases');
    kv.failNext('create', new Error('timeout'));
    kv.failNext('get', new Error('timeout'));
    await assert.rejects(agreeOnSetting(kv, 'n1', 'POD_WORKER_SHARDS', '4', 'a', at), /timeout/);
  });
});
