import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { POD_STATUS_MERGE_KEYS, applyStrategicMergePatch, createTwoWayMergePatch } from './strategic-merge-patch.js';

const cond = (type: string, status: string, extra: Record<string, unknown> = {}) => ({ type, status, ...extra });

describe('createTwoWayMergePatch (strategicpatch.CreateTwoWayMergePatch)', () => {
  const cases: { name: string; original: object; modified: object; patch: object }[] = [
    { name: 'equal objects: an empty patch', original: { status: { phase: 'Running' } }, modified: { status: { phase: 'Running' } }, patch: {} },
    { name: 'a changed scalar', original: { status: { phase: 'Pending' } }, modified: { status: { phase: 'Running' } }, patch: { status: { phase: 'Running' } } },
    { name: 'an added field, and a removed one as null', original: { status: { reason: 'X' } }, modified: { status: { podIP: '10.0.0.1' } }, patch: { status: { podIP: '10.0.0.1', reason: null } } },
    { name: 'null and undefined are absent', original: { status: { reason: null, message: undefined } }, modified: { status: { reason: undefined } }, patch: {} },
    {
      name: 'an atomic list (containerStatuses) is replaced whole',
      original: { status: { containerStatuses: [{ name: 'a', ready: false }, { name: 'b', ready: true }] } },
      modified: { status: { containerStatuses: [{ name: 'a', ready: true }, { name: 'b', ready: true }] } },
      patch: { status: { containerStatuses: [{ name: 'a', ready: true }, { name: 'b', ready: true }] } },
    },
    {
      name: 'conditions merge by type: the changed fields with the key, the new order',
      original: { status: { conditions: [cond('Ready', 'False', { reason: 'ContainersNotReady' }), cond('PodScheduled', 'True')] } },
      modified: { status: { conditions: [cond('Ready', 'True'), cond('PodScheduled', 'True')] } },
      patch: { status: { conditions: [{ type: 'Ready', status: 'True', reason: null }], '$setElementOrder/conditions': [{ type: 'Ready' }, { type: 'PodScheduled' }] } },
    },
    {
      name: 'a condition added and one removed ($patch: delete)',
      original: { status: { conditions: [cond('Ready', 'True'), cond('Gone', 'True')] } },
      modified: { status: { conditions: [cond('Ready', 'True'), cond('New', 'False')] } },
      patch: { status: { conditions: [cond('New', 'False'), { type: 'Gone', $patch: 'delete' }], '$setElementOrder/conditions': [{ type: 'Ready' }, { type: 'New' }] } },
    },
    {
      name: 'an empty original list is replaced whole',
      original: { status: { podIPs: [] } },
      modified: { status: { podIPs: [{ ip: '10.0.0.1' }] } },
      patch: { status: { podIPs: [{ ip: '10.0.0.1' }] } },
    },
    {
      name: 'only the order changed: just $setElementOrder',
      original: { status: { conditions: [cond('A', 'True'), cond('B', 'True')] } },
      modified: { status: { conditions: [cond('B', 'True'), cond('A', 'True')] } },
      patch: { status: { '$setElementOrder/conditions': [{ type: 'B' }, { type: 'A' }] } },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const patch = createTwoWayMergePatch(tc.original, tc.modified, POD_STATUS_MERGE_KEYS);
      assert.deepEqual(patch, tc.patch);
      // Applied the apiserver's way, the patch gives the modified object (absent fields being absent).
      assert.deepEqual(stripEmpty(applyStrategicMergePatch(tc.original, patch, POD_STATUS_MERGE_KEYS)), stripEmpty(tc.modified));
    });
  }

  it('a list merged by key keeps the items the patch does not name (a condition the kubelet does not own)', () => {
    const original = { status: { conditions: [cond('DisruptionTarget', 'True'), cond('Ready', 'False')] } };
    const patched = applyStrategicMergePatch(original, { status: { conditions: [cond('Ready', 'True')] } }, POD_STATUS_MERGE_KEYS);
    assert.deepEqual(patched, { status: { conditions: [cond('DisruptionTarget', 'True'), cond('Ready', 'True')] } });
  });
});

/** The modified objects above with their null/undefined fields and empty lists dropped. */
function stripEmpty(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripEmpty);
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (x === null || x === undefined ? [] : [[k, stripEmpty(x)]])));
  }
  return v;
}
