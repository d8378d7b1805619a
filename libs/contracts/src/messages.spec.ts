import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MessageError, MessageTypes, decodeMessage, parseJson } from './messages.js';

describe('decodeMessage', () => {
  it('accepts a well-formed PodUpdate', () => {
    const m = decodeMessage(MessageTypes.podUpdate, { type: 'kubelet.v1.pod_update', op: 'add', source: 'file', pods: [] });
    assert.equal(m.op, 'add');
  });

  it('keeps fields it does not know (fields are only ever added)', () => {
    const m = decodeMessage(MessageTypes.workDone, { type: 'kubelet.v1.work_done', podUid: 'u', requeueAfterMs: 10, later: 1 });
    assert.equal((m as unknown as Record<string, unknown>)['later'], 1);
  });

  const bad = [
    { name: 'not an object', value: 'hello', reason: /expected a JSON object/ },
    { name: 'an array', value: [], reason: /expected a JSON object/ },
    { name: 'no type', value: { op: 'add' }, reason: /expected type "kubelet.v1.pod_update", got null/ },
    { name: 'another type', value: { type: 'kubelet.v1.work_done' }, reason: /got "kubelet.v1.work_done"/ },
    { name: 'unknown op', value: { type: 'kubelet.v1.pod_update', op: 'upsert', source: 'file', pods: [] }, reason: /field "op" must be one of add, update, remove, reconcile, delete/ },
    { name: 'pods not an array', value: { type: 'kubelet.v1.pod_update', op: 'add', source: 'file', pods: {} }, reason: /field "pods" must be an array/ },
    { name: 'empty source', value: { type: 'kubelet.v1.pod_update', op: 'add', source: '', pods: [] }, reason: /field "source" must be a non-empty string/ },
  ];
  for (const tc of bad) {
    it(`names what is wrong: ${tc.name}`, () => {
      assert.throws(() => decodeMessage(MessageTypes.podUpdate, tc.value), (err: unknown) => err instanceof MessageError && tc.reason.test(err.message));
    });
  }

  it('parseJson refuses bytes that are not JSON', () => {
    assert.throws(() => parseJson(new TextEncoder().encode('{not json')), (err: unknown) => err instanceof MessageError && /payload is not JSON/.test(err.message));
    assert.deepEqual(parseJson(new TextEncoder().encode('{"a":1}')), { a: 1 });
  });
});
