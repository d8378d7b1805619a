import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MessageError, MessageTypes, apiObjectResource, decodeMessage, parseJson } from './messages.js';

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

describe('the apiserver object request/reply (ADR 0014)', () => {
  const cases: { name: string; value: Record<string, unknown>; reason?: RegExp }[] = [
    { name: 'a configMap of a namespace', value: { type: 'kubelet.v1.api_object_request', kind: 'ConfigMap', namespace: 'ns', name: 'cfg' } },
    { name: 'a RuntimeClass, cluster-scoped', value: { type: 'kubelet.v1.api_object_request', kind: 'RuntimeClass', name: 'gvisor' } },
    { name: 'a secret without its namespace', value: { type: 'kubelet.v1.api_object_request', kind: 'Secret', name: 's' }, reason: /field "namespace" must be a non-empty string for a Secret/ },
    { name: 'a RuntimeClass with a namespace', value: { type: 'kubelet.v1.api_object_request', kind: 'RuntimeClass', namespace: 'ns', name: 'x' }, reason: /field "namespace" must be absent for a RuntimeClass/ },
    { name: 'a kind not served', value: { type: 'kubelet.v1.api_object_request', kind: 'Pod', namespace: 'ns', name: 'x' }, reason: /field "kind" must be one of ConfigMap, Secret, RuntimeClass/ },
    { name: 'no name', value: { type: 'kubelet.v1.api_object_request', kind: 'ConfigMap', namespace: 'ns' }, reason: /field "name" must be a non-empty string/ },
  ];
  for (const tc of cases) {
    it(tc.reason ? `refuses ${tc.name}` : `accepts ${tc.name}`, () => {
      if (!tc.reason) assert.equal(decodeMessage(MessageTypes.apiObjectRequest, tc.value).name, tc.value['name']);
      else assert.throws(() => decodeMessage(MessageTypes.apiObjectRequest, tc.value), (err: unknown) => err instanceof MessageError && (tc.reason as RegExp).test(err.message));
    });
  }

  it('a reply says whether the object was found', () => {
    assert.equal(decodeMessage(MessageTypes.apiObject, { type: 'kubelet.v1.api_object', kind: 'ConfigMap', namespace: 'ns', name: 'cfg', found: false }).found, false);
    assert.throws(() => decodeMessage(MessageTypes.apiObject, { type: 'kubelet.v1.api_object', kind: 'ConfigMap', name: 'cfg' }), /field "found" must be a boolean/);
  });

  it('names objects as upstream\'s managers do in their errors', () => {
    assert.deepEqual((['ConfigMap', 'Secret', 'RuntimeClass'] as const).map(apiObjectResource), ['configmap', 'secret', 'runtimeclass.node.k8s.io']);
  });
});

describe('the service list request/reply (a pod\'s service environment variables)', () => {
  it('a request names its namespace; a reply carries a list', () => {
    assert.equal(decodeMessage(MessageTypes.serviceListRequest, { type: 'kubelet.v1.service_list_request', namespace: 'ns' }).namespace, 'ns');
    assert.throws(() => decodeMessage(MessageTypes.serviceListRequest, { type: 'kubelet.v1.service_list_request' }), /field "namespace" must be a non-empty string/);
    assert.deepEqual(decodeMessage(MessageTypes.serviceList, { type: 'kubelet.v1.service_list', services: [] }).services, []);
    assert.throws(() => decodeMessage(MessageTypes.serviceList, { type: 'kubelet.v1.service_list' }), /field "services" must be an array/);
  });
});
