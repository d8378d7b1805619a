import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RuntimeChanges } from './runtime-changes.js';
import { FakePodInspector } from './testing.js';

describe('RuntimeChanges', () => {
  it('asks for a pod\'s inspection once per sync that changed it, with that sync\'s end', () => {
    const inspector = new FakePodInspector();
    const changes = new RuntimeChanges(inspector);
    changes.mark('a');
    changes.mark('a');
    changes.mark(undefined);
    assert.equal(changes.syncEnded('b', 10), false, 'another pod\'s sync changed nothing');
    assert.equal(changes.syncEnded('a', 20), true);
    assert.equal(changes.syncEnded('a', 30), false, 'the next sync of the pod starts afresh');
    assert.deepEqual(inspector.asked, [{ uid: 'a', syncEnd: 20 }]);
  });

  it('a request that cannot be sent does not fail the sync: the next relist sees the pod', () => {
    const inspector = new FakePodInspector();
    inspector.unreachable = true;
    const changes = new RuntimeChanges(inspector);
    changes.mark('a');
    assert.equal(changes.syncEnded('a', 20), true);
    assert.equal(changes.syncEnded('a', 21), false);
  });
});
