import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@app/contracts';
import { APPARMOR_NOT_ENABLED, appArmorRefusal } from './apparmor.js';
import { canAdmitPod, nodeInfoFrom } from './admission.js';

function pod(edit: (p: Pod) => void = () => undefined): Pod {
  const p: Pod = { metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { containers: [{ name: 'c', image: 'busybox' }] }, status: { phase: 'Pending' } };
  edit(p);
  return p;
}
const NO_APPARMOR = { hostError: APPARMOR_NOT_ENABLED };
const APPARMOR = {};

describe('the AppArmor admit handler (lifecycle appArmorAdmitHandler)', () => {
  const cases: { name: string; pod: Pod; host: { hostError?: string }; refusal?: string }[] = [
    { name: 'a pod without a profile is admitted', pod: pod(), host: NO_APPARMOR },
    { name: 'an Unconfined profile is admitted', pod: pod((p) => (p.spec.containers[0]!.securityContext = { appArmorProfile: { type: 'Unconfined' } })), host: NO_APPARMOR },
    { name: 'a container profile without AppArmor on the host is refused', pod: pod((p) => (p.spec.containers[0]!.securityContext = { appArmorProfile: { type: 'RuntimeDefault' } })), host: NO_APPARMOR, refusal: 'Cannot enforce AppArmor: AppArmor is not enabled on the host' },
    { name: 'a pod-level profile without AppArmor on the host is refused', pod: pod((p) => (p.spec.securityContext = { appArmorProfile: { type: 'Localhost', localhostProfile: 'x' } })), host: NO_APPARMOR, refusal: 'Cannot enforce AppArmor: AppArmor is not enabled on the host' },
    { name: 'an init container\'s profile counts', pod: pod((p) => (p.spec.initContainers = [{ name: 'i', image: 'busybox', securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } }])), host: NO_APPARMOR, refusal: 'Cannot enforce AppArmor: AppArmor is not enabled on the host' },
    { name: 'the beta annotation counts', pod: pod((p) => (p.metadata.annotations = { 'container.apparmor.security.beta.kubernetes.io/c': 'runtime/default' })), host: NO_APPARMOR, refusal: 'Cannot enforce AppArmor: AppArmor is not enabled on the host' },
    { name: 'the beta annotation set to unconfined is admitted', pod: pod((p) => (p.metadata.annotations = { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' })), host: NO_APPARMOR },
    { name: 'with AppArmor on the host a profile is admitted', pod: pod((p) => (p.spec.containers[0]!.securityContext = { appArmorProfile: { type: 'RuntimeDefault' } })), host: APPARMOR },
    { name: 'with AppArmor on the host an empty localhost profile (beta annotation) is refused', pod: pod((p) => (p.metadata.annotations = { 'container.apparmor.security.beta.kubernetes.io/c': 'localhost/' })), host: APPARMOR, refusal: 'Cannot enforce AppArmor: invalid empty AppArmor profile name: {"type":"Localhost","localhostProfile":""}' },
    { name: 'a pod already past Pending is not checked again', pod: pod((p) => ((p.spec.containers[0]!.securityContext = { appArmorProfile: { type: 'RuntimeDefault' } }), (p.status = { phase: 'Running' }))), host: NO_APPARMOR },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(appArmorRefusal(tc.pod, tc.host), tc.refusal));

  it('canAdmitPod asks it after the predicates: reason AppArmor', () => {
    const node = { ...nodeInfoFrom({ name: 'n', cpu: '2', memory: '4Gi', maxPods: 110, labels: {} }), appArmor: NO_APPARMOR };
    const armored = pod((p) => (p.spec.containers[0]!.securityContext = { appArmorProfile: { type: 'RuntimeDefault' } }));
    assert.deepEqual(canAdmitPod([], armored, node), { admit: false, reason: 'AppArmor', message: 'Cannot enforce AppArmor: AppArmor is not enabled on the host' });
    const wrongNode = { ...armored, spec: { ...armored.spec, nodeName: 'other' } };
    assert.equal(canAdmitPod([], wrongNode, node).reason, 'NodeName', 'a predicate failure is reported first');
    assert.deepEqual(canAdmitPod([], armored, { ...node, appArmor: APPARMOR }), { admit: true });
  });
});
