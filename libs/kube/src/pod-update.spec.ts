import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@app/contracts';
import { CONFIG_SEEN_ANNOTATION, diffListing, hasOperations, podsDifferSemantically } from './pod-update.js';

function pod(uid: string, patch: { image?: string; labels?: Record<string, string>; seen?: string; phase?: 'Running' | 'Pending'; deletionTimestamp?: string; deletionGracePeriodSeconds?: number } = {}): Pod {
  return {
    metadata: {
      name: `p-${uid}`,
      namespace: 'default',
      uid,
      labels: patch.labels ?? {},
      annotations: { 'kubernetes.io/config.source': 'file', ...(patch.seen ? { [CONFIG_SEEN_ANNOTATION]: patch.seen } : {}) },
      ...(patch.deletionTimestamp ? { deletionTimestamp: patch.deletionTimestamp } : {}),
      ...(patch.deletionGracePeriodSeconds !== undefined ? { deletionGracePeriodSeconds: patch.deletionGracePeriodSeconds } : {}),
    },
    spec: { containers: [{ name: 'c', image: patch.image ?? 'busybox:1' }] },
    ...(patch.phase ? { status: { phase: patch.phase } } : {}),
  };
}

const byUid = (...pods: Pod[]) => new Map(pods.map((p) => [p.metadata.uid ?? '', p]));
const uids = (pods: Pod[]) => pods.map((p) => p.metadata.uid);

describe('diffListing: a new listing against the last one', () => {
  const cases = [
    { name: 'first listing: every pod is an ADD', prev: byUid(), next: [pod('a'), pod('b')], want: { add: ['a', 'b'] } },
    { name: 'same listing: nothing', prev: byUid(pod('a')), next: [pod('a')], want: {} },
    { name: 'a pod gone: REMOVE', prev: byUid(pod('a'), pod('b')), next: [pod('a')], want: { remove: ['b'] } },
    { name: 'spec changed: UPDATE', prev: byUid(pod('a')), next: [pod('a', { image: 'busybox:2' })], want: { update: ['a'] } },
    { name: 'labels changed: UPDATE', prev: byUid(pod('a')), next: [pod('a', { labels: { x: 'y' } })], want: { update: ['a'] } },
    { name: 'only status changed: RECONCILE', prev: byUid(pod('a', { phase: 'Pending' })), next: [pod('a', { phase: 'Running' })], want: { reconcile: ['a'] } },
    { name: 'deletionTimestamp set: DELETE', prev: byUid(pod('a')), next: [pod('a', { deletionTimestamp: '2026-01-01T00:00:00Z' })], want: { delete: ['a'] } },
    {
      name: 'deleted again with a shorter grace period: DELETE again (checkAndUpdatePod)',
      prev: byUid(pod('a', { deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 })),
      next: [pod('a', { deletionTimestamp: '2026-01-01T00:00:05Z', deletionGracePeriodSeconds: 5 })],
      want: { delete: ['a'] },
    },
    { name: 'config.seen differs: nothing', prev: byUid(pod('a', { seen: '2026-01-01T00:00:00Z' })), next: [pod('a', { seen: '2026-02-02T00:00:00Z' })], want: {} },
    { name: 'mixed', prev: byUid(pod('a'), pod('b'), pod('c')), next: [pod('a'), pod('b', { image: 'x:1' }), pod('d')], want: { add: ['d'], update: ['b'], remove: ['c'] } },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const ops = diffListing(tc.prev, tc.next);
      const got = Object.fromEntries(Object.entries(ops).filter(([, v]) => v.length > 0).map(([k, v]) => [k, uids(v)]));
      assert.deepEqual(got, tc.want);
      assert.equal(hasOperations(ops), Object.keys(tc.want).length > 0);
    });
  }
});

describe('podsDifferSemantically', () => {
  it('ignores status and config.seen, sees spec and labels', () => {
    assert.equal(podsDifferSemantically(pod('a', { phase: 'Pending', seen: '1' }), pod('a', { phase: 'Running', seen: '2' })), false);
    assert.equal(podsDifferSemantically(pod('a'), pod('a', { image: 'other:1' })), true);
    assert.equal(podsDifferSemantically(pod('a'), pod('a', { labels: { k: 'v' } })), true);
  });
});
