import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PodConditionType, podConditionByKubelet, podConditionSharedByKubelet } from './kubetypes.js';

describe('kubelet condition ownership (kubetypes)', () => {
  const cases: { type: string; owned: boolean; shared: boolean }[] = [
    { type: PodConditionType.PodScheduled, owned: true, shared: false },
    { type: PodConditionType.PodReady, owned: true, shared: false },
    { type: PodConditionType.PodInitialized, owned: true, shared: false },
    { type: PodConditionType.ContainersReady, owned: true, shared: false },
    { type: PodConditionType.PodReadyToStartContainers, owned: true, shared: false },
    { type: PodConditionType.PodResizePending, owned: true, shared: false },
    { type: PodConditionType.PodResizeInProgress, owned: true, shared: false },
    // Set by the eviction managers, carried by the kubelet: compared, never regenerated.
    { type: PodConditionType.DisruptionTarget, owned: false, shared: true },
    // A readiness gate's condition belongs to whoever sets it.
    { type: 'example.com/feature-ready', owned: false, shared: false },
  ];
  for (const tc of cases) {
    it(`${tc.type}: owned ${tc.owned}, shared ${tc.shared}`, () => {
      assert.equal(podConditionByKubelet(tc.type), tc.owned);
      assert.equal(podConditionSharedByKubelet(tc.type), tc.shared);
    });
  }
});
