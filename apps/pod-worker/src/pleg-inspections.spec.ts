import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PlegInspections } from './pleg-inspections.js';
import { FakePodInspector } from './testing.js';

describe('PlegInspections', () => {
  it('asks for a pod\'s inspection once per sync that changed it, with that sync\'s end', () => {
    const inspector = new FakePodInspector();
    const inspections = new PlegInspections(inspector);
    inspections.mark('a');
    inspections.mark('a');
    inspections.mark(undefined);
    assert.equal(inspections.syncEnded('b', 10), false, 'another pod\'s sync changed nothing');
    assert.equal(inspections.syncEnded('a', 20), true);
    assert.equal(inspections.syncEnded('a', 30), false, 'the next sync of the pod starts afresh');
    assert.deepEqual(inspector.asked, [{ uid: 'a', syncEnd: 20 }]);
  });

  it('a request that cannot be sent does not fail the sync: the next relist sees the pod', () => {
    const inspector = new FakePodInspector();
    inspector.unreachable = true;
    const inspections = new PlegInspections(inspector);
    inspections.mark('a');
    assert.equal(inspections.syncEnded('a', 20), true);
    assert.equal(inspections.syncEnded('a', 21), false);
  });
});
