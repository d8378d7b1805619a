import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Subjects, subjectMatches } from '@app/contracts';
import { FLEET_INBOX_PREFIX, fleetReaderPermissions, leafNodeOf, leafPermissions, leafUserName, nodeDomain } from './fleet.js';
import type { SubjectPermission } from './permissions.js';

const allows = (p: SubjectPermission, subject: string) => p.allow.some((a) => subjectMatches(a, subject)) && !p.deny.some((d) => subjectMatches(d, subject));

describe('the fleet fabric permissions', () => {
  const A = 'node-a';
  const B = 'node-b';

  it("lets the hub send a node's leaf only the fleet reader's requests for that node", () => {
    const a = leafPermissions(A).subscribe;
    for (const s of [Subjects.serviceInfo.build(A, 'pleg'), Subjects.serviceCommand.build(A, 'status-manager', 'pods'), Subjects.podEvents.build(A), `$JS.${nodeDomain(A)}.API.STREAM.INFO.KUBELET_TRACES`]) {
      assert.ok(allows(a, s), `${leafUserName(A)} receives ${s}`);
    }
    for (const s of [Subjects.serviceInfo.build(B, 'pleg'), Subjects.serviceCommand.build(B, 'status-manager', 'pods'), `$JS.${nodeDomain(B)}.API.STREAM.INFO.KV_pods`, `cri.${A}.runtime.RunPodSandbox`, `kubelet.${A}.work.0.x`, '$JS.API.STREAM.INFO.KV_pods']) {
      assert.ok(!allows(a, s), `${leafUserName(A)} must not receive ${s}`);
    }
  });

  it("lets a node's leaf send the hub only answers to the fleet reader", () => {
    const a = leafPermissions(A).publish;
    assert.ok(allows(a, `${FLEET_INBOX_PREFIX}.abc.1`));
    for (const s of [Subjects.serviceCommand.build(B, 'status-manager', 'pods'), `$JS.${nodeDomain(B)}.API.STREAM.INFO.KV_pods`, `kubelet.${B}.work.0.x`, '_INBOX.x', `trace.${B}.pod-worker.u`]) {
      assert.ok(!allows(a, s), `${leafUserName(A)} must not send ${s}`);
    }
  });

  it('lets the fleet reader read every node and change nothing', () => {
    const f = fleetReaderPermissions();
    for (const s of [Subjects.serviceInfo.build(B, 'cri-gateway'), Subjects.serviceCommand.build(A, 'status-manager', 'pods'), `$JS.${nodeDomain(B)}.API.CONSUMER.MSG.NEXT.KUBELET_TRACES.c1`, '$SYS.REQ.SERVER.PING.LEAFZ']) {
      assert.ok(allows(f.publish, s), `fleet reads ${s}`);
    }
    for (const s of [
      `$JS.${nodeDomain(A)}.API.STREAM.DELETE.KUBELET_TRACES`,
      `$JS.${nodeDomain(A)}.API.CONSUMER.DURABLE.CREATE.KUBELET_TRACES.d`,
      `$JS.${nodeDomain(A)}.API.DIRECT.GET.KV_pods`,
      `$KV.pods.${A}.x`,
      `cri.${A}.runtime.StopContainer`,
      `kubelet.${A}.work.0.x`,
      `kubelet.${A}.service.pleg.mode`,
    ]) {
      assert.ok(!allows(f.publish, s), `fleet must not publish ${s}`);
    }
    assert.deepEqual(f.subscribe.allow, [`${FLEET_INBOX_PREFIX}.>`]);
  });
});

describe('leafNodeOf', () => {
  it("tells a leaf's node from the interest it sends the hub", () => {
    assert.equal(leafNodeOf(['_INBOX_fleet.x', `$JS.${nodeDomain('node-a.example')}.API.>`]), 'node-a.example');
    assert.equal(leafNodeOf([Subjects.serviceInfo.build('node-b', 'pleg')]), 'node-b');
    assert.equal(leafNodeOf(['foo.bar']), undefined);
    assert.equal(leafNodeOf(undefined), undefined);
  });

  it("lets a node's leaf receive the fleet reader's request for its Node's conditions, and only its own", () => {
    assert.ok(allows(leafPermissions('node-a').subscribe, 'kubelet.node-a.service.node-status.conditions'));
    assert.ok(!allows(leafPermissions('node-a').subscribe, 'kubelet.node-b.service.node-status.conditions'));
  });
});
