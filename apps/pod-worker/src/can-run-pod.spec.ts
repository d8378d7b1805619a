import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodStatus } from '@app/contracts';
import { canRunPod } from './can-run-pod.js';
import { blockedStatus } from './kubelet-sync.js';

const pod = (patch: (p: Pod) => void = () => undefined): Pod => {
  const p: Pod = { metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } };
  patch(p);
  return p;
};

describe('canRunPod', () => {
  const cases: { name: string; pod: Pod; appArmor: boolean; admit: boolean }[] = [
    { name: 'a plain pod runs', pod: pod(), appArmor: false, admit: true },
    { name: 'an unconfined profile runs', pod: pod((p) => (p.spec.containers[0]!.securityContext = { appArmorProfile: { type: 'Unconfined' } })), appArmor: false, admit: true },
    { name: 'a container profile without AppArmor on the host is refused', pod: pod((p) => (p.spec.containers[0]!.securityContext = { appArmorProfile: { type: 'RuntimeDefault' } })), appArmor: false, admit: false },
    { name: 'a pod-level profile without AppArmor on the host is refused', pod: pod((p) => (p.spec.securityContext = { appArmorProfile: { type: 'Localhost', localhostProfile: 'x' } })), appArmor: false, admit: false },
    { name: 'the legacy annotation counts', pod: pod((p) => (p.metadata.annotations = { 'container.apparmor.security.beta.kubernetes.io/c': 'runtime/default' })), appArmor: false, admit: false },
    { name: 'with AppArmor on the host it runs', pod: pod((p) => (p.spec.containers[0]!.securityContext = { appArmorProfile: { type: 'RuntimeDefault' } })), appArmor: true, admit: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const v = canRunPod(tc.pod, { appArmorEnabled: tc.appArmor });
      assert.equal(v.admit, tc.admit);
      if (!tc.admit) {
        assert.equal(v.reason, 'AppArmor');
        assert.equal(v.message, 'Cannot enforce AppArmor: AppArmor is not enabled on the host');
      }
    });
  }

  it('a blocked pod is Pending with the reason, its waiting containers Blocked', () => {
    const status: PodStatus = { phase: 'Pending', containerStatuses: [{ name: 'c', ready: false, restartCount: 0, image: 'x:1', imageID: '', state: { waiting: { reason: 'ContainerCreating' } } }] };
    const b = blockedStatus(status, 'AppArmor', 'Cannot enforce AppArmor: AppArmor is not enabled on the host');
    assert.equal(b.phase, 'Pending');
    assert.equal(b.reason, 'AppArmor');
    assert.equal(b.containerStatuses?.[0]?.state?.waiting?.reason, 'Blocked');
    assert.equal(blockedStatus({ phase: 'Failed' }, 'AppArmor', 'm').phase, 'Failed', 'a terminal phase stays');
  });
});
