import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MessageError, MessageTypes, READABLE_MESSAGE_VERSIONS, decodeMessage } from './messages.js';
import { POD_SYNC_STATUS_FIELDS } from './state.js';
import {
  CONTRACT_VERSION,
  classifyTypeMismatch,
  contractClaim,
  formatContractRange,
  judgePeer,
  judgeRecordVersion,
  parseContractVersion,
  parseMessageType,
  rewriteRecord,
} from './skew.js';

describe('the contract claim (docs/adr/0034-version-skew-policy.md)', () => {
  it('this build speaks contract 1, the first: it accepts 1 only', () => {
    assert.equal(CONTRACT_VERSION, 1);
    assert.deepEqual(contractClaim(), { version: 1, accepts: { oldest: 1, newest: 1 } });
  });
  it('a service of version N accepts N-1 and N (upstream n-1)', () => {
    assert.deepEqual(contractClaim(5), { version: 5, accepts: { oldest: 4, newest: 5 } });
    assert.equal(formatContractRange(contractClaim(5).accepts), '4..5');
    assert.equal(formatContractRange(contractClaim(1).accepts), '1');
  });
});

describe('judgePeer: whether a pair of versions is within the policy', () => {
  const cases: { name: string; self: number; peer: number; accepted: boolean; why: string; reason?: RegExp }[] = [
    { name: 'the same version', self: 2, peer: 2, accepted: true, why: 'same version' },
    { name: 'a peer one behind: we read its messages', self: 2, peer: 1, accepted: true, why: 'older peer within the skew' },
    { name: 'a peer one ahead: it reads ours', self: 2, peer: 3, accepted: true, why: 'newer peer within the skew' },
    { name: 'a peer two behind', self: 3, peer: 1, accepted: false, why: 'peer too old', reason: /^the peer speaks contract 1; this service speaks 3 and accepts 2\.\.3$/ },
    { name: 'a peer two ahead', self: 1, peer: 3, accepted: false, why: 'peer too new', reason: /^the peer speaks contract 3, which accepts 2\.\.3; this service speaks 1 and accepts 1$/ },
    { name: 'this build beside a service claiming 1 more', self: CONTRACT_VERSION, peer: CONTRACT_VERSION + 1, accepted: true, why: 'newer peer within the skew' },
  ];
  for (const tc of cases) {
    it(`${tc.accepted ? 'accepts' : 'refuses'} ${tc.name}`, () => {
      const j = judgePeer(contractClaim(tc.self), tc.peer);
      assert.equal(j.accepted, tc.accepted);
      assert.equal(j.why, tc.why);
      if (tc.reason) assert.match(j.accepted ? '' : j.reason, tc.reason);
    });
  }
  it('is symmetric: a pair is within the policy from both sides or from neither', () => {
    for (let a = 1; a <= 5; a++) for (let b = 1; b <= 5; b++) assert.equal(judgePeer(contractClaim(a), b).accepted, judgePeer(contractClaim(b), a).accepted, `${a} and ${b}`);
  });
});

describe('parseContractVersion: the Kubelet-Contract header', () => {
  const cases: { raw: string | undefined; want: number | undefined }[] = [
    { raw: '1', want: 1 },
    { raw: ' 12 ', want: 12 },
    { raw: undefined, want: undefined },
    { raw: '', want: undefined },
    { raw: '0', want: undefined },
    { raw: '-1', want: undefined },
    { raw: '1.5', want: undefined },
    { raw: 'v1', want: undefined },
    { raw: '99999999999999999999', want: undefined },
  ];
  for (const tc of cases) it(`${JSON.stringify(tc.raw)} reads as ${String(tc.want)}`, () => assert.equal(parseContractVersion(tc.raw), tc.want));
});

describe('message types: kind and version', () => {
  it('takes a type name apart', () => {
    assert.deepEqual(parseMessageType('kubelet.v1.work_done'), { kind: 'work_done', version: 1 });
    assert.deepEqual(parseMessageType('kubelet.v12.pod_update'), { kind: 'pod_update', version: 12 });
    for (const bad of ['kubelet.work_done', 'kubelet.v0.work_done', 'other.v1.work_done', 'kubelet.v1.', 7, null]) assert.equal(parseMessageType(bad), undefined, String(bad));
  });
  it('this build reads version 1 of every kind it knows', () => {
    assert.deepEqual(READABLE_MESSAGE_VERSIONS.get('work_done'), [1]);
    assert.equal(READABLE_MESSAGE_VERSIONS.size, Object.keys(MessageTypes).length);
  });
  const wanted = { kind: 'work_done', version: 1 };
  const cases: { name: string; got: unknown; refusal: string }[] = [
    { name: 'the same kind at another version', got: 'kubelet.v2.work_done', refusal: 'unsupported-version' },
    { name: 'a kind nobody here knows', got: 'kubelet.v1.pod_teleport', refusal: 'unknown-kind' },
    { name: 'a known kind on the wrong subject', got: 'kubelet.v1.pod_update', refusal: 'wrong-kind' },
    { name: 'no type name at all', got: 42, refusal: 'no-type' },
  ];
  for (const tc of cases) it(`classifies ${tc.name} as ${tc.refusal}`, () => assert.equal(classifyTypeMismatch(wanted, tc.got, READABLE_MESSAGE_VERSIONS).refusal, tc.refusal));
});

describe('decodeMessage by the policy: unknown fields kept, unknown versions and kinds refused with a reason', () => {
  it('keeps a field a newer writer added', () => {
    const m = decodeMessage(MessageTypes.workAccepted, { type: 'kubelet.v1.work_accepted', podUid: 'u', shard: 1, addedInV2: { x: 1 } });
    assert.deepEqual((m as unknown as Record<string, unknown>)['addedInV2'], { x: 1 });
  });
  const cases: { name: string; value: unknown; refusal: string | undefined; reason: RegExp }[] = [
    {
      name: 'a version of the kind this build does not read',
      value: { type: 'kubelet.v2.work_done', podUid: 'u', requeueAfterMs: 1 },
      refusal: 'unsupported-version',
      reason: /^refused type "kubelet\.v2\.work_done": version 2 of work_done is not one this service reads \(it reads v1; docs\/adr\/0034-version-skew-policy\.md\)$/,
    },
    { name: 'a kind this build does not know', value: { type: 'kubelet.v1.pod_teleport' }, refusal: 'unknown-kind', reason: /^ignored type "kubelet\.v1\.pod_teleport": a message kind this service does not know \(expected type "kubelet\.v1\.work_done"\)$/ },
    { name: 'another known kind', value: { type: 'kubelet.v1.pod_update' }, refusal: undefined, reason: /^expected type "kubelet\.v1\.work_done", got "kubelet\.v1\.pod_update"$/ },
  ];
  for (const tc of cases) {
    it(`refuses ${tc.name}, naming why`, () => {
      assert.throws(
        () => decodeMessage(MessageTypes.workDone, tc.value),
        (err: unknown) => err instanceof MessageError && err.refusal === tc.refusal && tc.reason.test(err.message),
      );
    });
  }
});

describe('KV record versions', () => {
  const cases: { name: string; record: unknown; accepted: boolean; reason?: RegExp }[] = [
    { name: 'a record without recordVersion (written before the policy: version 1)', record: { dueAt: 1, v: 7 }, accepted: true },
    { name: 'a record of version 1', record: { recordVersion: 1, dueAt: 1 }, accepted: true },
    { name: 'a record of version 2', record: { recordVersion: 2, dueAt: 1 }, accepted: false, reason: /^record version 2 is not one this service reads \(1\)$/ },
    { name: 'a record whose recordVersion is not a number', record: { recordVersion: 'two' }, accepted: false, reason: /record version "two"/ },
    { name: 'not an object', record: [1], accepted: false, reason: /not a JSON object/ },
  ];
  for (const tc of cases) {
    it(`${tc.accepted ? 'reads' : 'refuses'} ${tc.name}`, () => {
      const j = judgeRecordVersion(tc.record);
      assert.equal(j.accepted, tc.accepted);
      if (tc.reason) assert.match(j.accepted ? '' : j.reason, tc.reason);
    });
  }
  it('a rewrite keeps the fields a newer writer added and this one does not know, and clears the known ones it leaves out', () => {
    const previous = { syncedAt: 1, terminatingAt: 2, restartRequested: true, addedLater: 'keep me', recordVersion: 1 };
    assert.deepEqual(rewriteRecord(previous, { syncedAt: 5, terminatingAt: 2 }, POD_SYNC_STATUS_FIELDS), { syncedAt: 5, terminatingAt: 2, addedLater: 'keep me' });
    assert.deepEqual(rewriteRecord(undefined, { syncedAt: 5 }, POD_SYNC_STATUS_FIELDS), { syncedAt: 5 });
    const next = { syncedAt: 5 };
    assert.equal(rewriteRecord({ syncedAt: 1 }, next, POD_SYNC_STATUS_FIELDS), next, 'nothing unknown: the record as the writer made it');
  });
});
