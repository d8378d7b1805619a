import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SERVICE_NAMES, Subjects, type ServiceName } from '@app/contracts';
import { BUCKETS } from './buckets.js';
import { nodePressureKey, syncLoopMonitorKey } from '@app/contracts';
import { NATS_ACCESS, NATS_USERS, familySubject, inboxPrefix, natsAuthorization, natsPermissions, natsUserOf, natsUsersOf, permits, type NatsUser } from './permissions.js';
import { covers } from './topology.js';

const NODE = 'node-a';
const UID = '3f2c7a9e-1b2d-4c5e-8f90-0a1b2c3d4e5f';

/** The users that may do `op` on `subject`. */
function who(op: 'publish' | 'subscribe', subject: string): NatsUser[] {
  return NATS_USERS.filter((u) => permits(u, op, subject));
}

describe('NATS permissions: who may do what (DESIGN.md, Security)', () => {
  const cases: { name: string; op: 'publish' | 'subscribe'; subject: string; users: NatsUser[] }[] = [
    { name: 'only cri-gateway subscribes to CRI runtime calls', op: 'subscribe', subject: Subjects.criRuntime.wildcard(NODE), users: ['cri-gateway', 'admin'] },
    { name: 'only cri-gateway subscribes to CRI image calls', op: 'subscribe', subject: Subjects.criImage.wildcard(NODE), users: ['cri-gateway', 'admin'] },
    { name: 'only admin subscribes to cri.>', op: 'subscribe', subject: 'cri.>', users: ['admin'] },
    { name: 'only sync-loop publishes work', op: 'publish', subject: Subjects.work.build(NODE, 3, UID), users: ['sync-loop', 'admin'] },
    { name: 'only pod-worker subscribes to a shard', op: 'subscribe', subject: Subjects.work.wildcard(NODE, 3), users: ['pod-worker', 'admin'] },
    { name: 'only pod-worker publishes work done', op: 'publish', subject: Subjects.workDone.build(NODE, UID), users: ['pod-worker', 'admin'] },
    { name: 'only sync-loop hears work done', op: 'subscribe', subject: Subjects.workDone.wildcard(NODE), users: ['sync-loop', 'admin'] },
    { name: 'only config-source publishes pod updates', op: 'publish', subject: Subjects.podUpdate.build(NODE, 'add'), users: ['config-source', 'admin'] },
    { name: 'only pleg publishes PLEG events', op: 'publish', subject: Subjects.pleg.build(NODE, UID), users: ['pleg', 'admin'] },
    { name: 'only prober publishes probe results', op: 'publish', subject: Subjects.probeResult.build(NODE, 'readiness', UID), users: ['prober', 'admin'] },
    { name: 'only cri-gateway publishes runtime events', op: 'publish', subject: Subjects.criEvents.build(NODE), users: ['cri-gateway', 'admin'] },
    { name: 'status commands come from the sync loop and the pod workers', op: 'publish', subject: Subjects.status.build(NODE, 'SetPodStatus', UID), users: ['sync-loop', 'pod-worker', 'admin'] },
    { name: 'the runtime is read by the services that need it (kubelet-server: /containerLogs)', op: 'publish', subject: Subjects.criRuntime.build(NODE, 'ListContainers'), users: ['sync-loop', 'pod-worker', 'pleg', 'kubelet-server', 'admin'] },
    { name: 'the stats reads are the kubelet server\'s, not a change', op: 'publish', subject: Subjects.criRuntime.build(NODE, 'ListContainerStats'), users: ['sync-loop', 'pod-worker', 'pleg', 'kubelet-server', 'admin'] },
    { name: 'the runtime\'s Status is read by the Node\'s Ready condition (node-status) and the readers of the runtime', op: 'publish', subject: Subjects.criRuntime.build(NODE, 'Status'), users: ['sync-loop', 'pod-worker', 'pleg', 'kubelet-server', 'node-status', 'admin'] },
    { name: 'images are removed by pod-worker and by the sync loop\'s image GC (ADR 0014) only', op: 'publish', subject: Subjects.criImage.build(NODE, 'RemoveImage'), users: ['sync-loop', 'pod-worker', 'admin'] },
    { name: 'the image filesystem is read by the kubelet server (/stats/summary) and the image GC', op: 'publish', subject: Subjects.criImage.build(NODE, 'ImageFsInfo'), users: ['sync-loop', 'pod-worker', 'kubelet-server', 'admin'] },
    { name: 'the images are listed by pod-worker and the image GC', op: 'publish', subject: Subjects.criImage.build(NODE, 'ListImages'), users: ['sync-loop', 'pod-worker', 'admin'] },
    { name: 'only pod-worker runs sandboxes', op: 'publish', subject: Subjects.criRuntime.build(NODE, 'RunPodSandbox'), users: ['pod-worker', 'admin'] },
    { name: 'only pod-worker stops containers', op: 'publish', subject: Subjects.criRuntime.build(NODE, 'StopContainer'), users: ['pod-worker', 'admin'] },
    { name: 'exec probes, hooks and the kubelet API\'s /run run in containers', op: 'publish', subject: Subjects.criRuntime.build(NODE, 'ExecSync'), users: ['pod-worker', 'prober', 'kubelet-server', 'admin'] },
    ...(['Exec', 'Attach', 'PortForward'] as const).map((m) => ({
      name: `the kubelet API server's streams: ${m} by kubelet-server only`,
      op: 'publish' as const,
      subject: Subjects.criRuntime.build(NODE, m),
      users: ['kubelet-server', 'admin'] as NatsUser[],
    })),
    { name: 'only pod-worker pulls images', op: 'publish', subject: Subjects.criImage.build(NODE, 'PullImage'), users: ['pod-worker', 'admin'] },
    { name: 'only sync-loop writes the pods bucket', op: 'publish', subject: `$KV.${BUCKETS.pods.name}.${NODE}.pod.${UID}`, users: ['sync-loop', 'admin'] },
    { name: 'only pleg writes the pod cache', op: 'publish', subject: `$KV.${BUCKETS.podCache.name}.${NODE}.pod.${UID}`, users: ['pleg', 'admin'] },
    { name: 'only status-manager writes statuses', op: 'publish', subject: `$KV.${BUCKETS.podStatus.name}.${NODE}.${UID}`, users: ['status-manager', 'admin'] },
    { name: 'only pod-worker writes workers', op: 'publish', subject: `$KV.${BUCKETS.workers.name}.${NODE}.${UID}`, users: ['pod-worker', 'admin'] },
    { name: 'only prober writes probe results', op: 'publish', subject: `$KV.probe-results.${NODE}.${UID}`, users: ['prober', 'admin'] },
    { name: 'only pod-worker writes shard leases', op: 'publish', subject: `$KV.leases.${NODE}.pod-worker-shard.3`, users: ['pod-worker', 'admin'] },
    { name: 'only pod-worker writes replica heartbeats', op: 'publish', subject: `$KV.leases.${NODE}.pod-worker-replica.pw-0`, users: ['pod-worker', 'admin'] },
    { name: 'shared settings are recorded by the services that share them', op: 'publish', subject: `$KV.leases.${NODE}.setting.POD_WORKER_SHARDS`, users: ['sync-loop', 'pod-worker', 'admin'] },
    { name: "pleg's leader lease is pleg's", op: 'publish', subject: `$KV.leases.${NODE}.leader.pleg`, users: ['pleg', 'admin'] },
    { name: "sync-loop's leader lease is sync-loop's", op: 'publish', subject: `$KV.leases.${NODE}.leader.sync-loop`, users: ['sync-loop', 'admin'] },
    { name: "status-manager's leader lease is status-manager's", op: 'publish', subject: `$KV.leases.${NODE}.leader.status-manager`, users: ['status-manager', 'admin'] },
    { name: 'only admin deletes a bucket', op: 'publish', subject: `$JS.API.STREAM.DELETE.KV_${BUCKETS.pods.name}`, users: ['admin'] },
    { name: 'only admin purges a bucket', op: 'publish', subject: `$JS.API.STREAM.PURGE.KV_${BUCKETS.pods.name}`, users: ['admin'] },
    { name: 'only admin changes a bucket', op: 'publish', subject: `$JS.API.STREAM.UPDATE.KV_${BUCKETS.pods.name}`, users: ['admin'] },
    { name: "only sync-loop reads sync-loop's replies", op: 'subscribe', subject: `${inboxPrefix('sync-loop')}.abc.*`, users: ['sync-loop', 'admin'] },
    { name: 'nobody but admin reads the default inbox', op: 'subscribe', subject: '_INBOX.abc.*', users: ['admin'] },
    { name: 'only pod-worker asks config-source for apiserver objects (secrets cross NATS in request/reply only)', op: 'publish', subject: Subjects.apiObject.build(NODE), users: ['pod-worker', 'admin'] },
    { name: 'only pod-worker asks config-source for service account tokens', op: 'publish', subject: Subjects.serviceAccountToken.build(NODE), users: ['pod-worker', 'admin'] },
    { name: 'only pod-worker asks config-source for the Services', op: 'publish', subject: Subjects.serviceList.build(NODE), users: ['pod-worker', 'admin'] },
    { name: 'only config-source answers for service account tokens', op: 'subscribe', subject: Subjects.serviceAccountToken.wildcard(NODE), users: ['config-source', 'admin'] },
    { name: 'only config-source answers for apiserver objects', op: 'subscribe', subject: Subjects.apiObject.wildcard(NODE), users: ['config-source', 'admin'] },
    { name: 'only config-source answers for the Services', op: 'subscribe', subject: Subjects.serviceList.wildcard(NODE), users: ['config-source', 'admin'] },
    { name: "only pleg asks the event relay's state", op: 'publish', subject: Subjects.criEventsStatus.build(NODE), users: ['pleg', 'admin'] },
    { name: "only cri-gateway answers for the event relay's state", op: 'subscribe', subject: Subjects.criEventsStatus.wildcard(NODE), users: ['cri-gateway', 'admin'] },
    { name: "each service answers its own info", op: 'subscribe', subject: Subjects.serviceInfo.build(NODE, 'pleg'), users: ['pleg', 'admin'] },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.deepEqual(who(tc.op, tc.subject), tc.users, `${tc.op} ${tc.subject}`));
  }
});

describe('NATS permissions: one writer per bucket', () => {
  for (const b of Object.values(BUCKETS)) {
    it(b.name, () => {
      const writes = SERVICE_NAMES.flatMap((s) => NATS_ACCESS[s].writes.filter((w) => w.bucket === b.name).map((w) => ({ service: s, keys: w.keys })));
      assert.ok(writes.length > 0, `nobody writes ${b.name}`);
      const whole = writes.filter((w) => w.keys === undefined);
      if (whole.length > 0) assert.deepEqual(writes.map((w) => w.service), [whole[0]?.service], `${b.name}: a service writing the whole bucket is its only writer`);
      // Keys shared between writers are the shared settings only: each writer's other keys are its own.
      const keys = writes.flatMap((w) => (w.keys ?? []).filter((k) => !k.startsWith('setting.')));
      assert.equal(new Set(keys).size, keys.length, `${b.name}: a key pattern with two writers`);
    });
  }
});

describe('NATS permissions: derived from the table', () => {
  it('every user of a bucket may open it, read it and watch it', () => {
    for (const s of SERVICE_NAMES) {
      for (const bucket of [...NATS_ACCESS[s].writes.map((w) => w.bucket), ...NATS_ACCESS[s].reads]) {
        for (const subject of [
          '$JS.API.INFO',
          `$JS.API.STREAM.INFO.KV_${bucket}`,
          `$JS.API.DIRECT.GET.KV_${bucket}.$KV.${bucket}.${NODE}.x`,
          `$JS.API.CONSUMER.CREATE.KV_${bucket}.oc_abc_1.$KV.${bucket}.${NODE}.>`,
          `$JS.FC.KV_${bucket}.oc_abc_1.R808`,
        ]) {
          assert.ok(permits(s, 'publish', subject), `${s} ${subject}`);
        }
      }
    }
  });

  it('a service with no bucket has no JetStream at all', () => {
    assert.equal(permits('cri-gateway', 'publish', '$JS.API.INFO'), false);
    assert.equal(permits('cri-gateway', 'publish', '$JS.API.STREAM.INFO.KV_pods'), false);
  });

  it('every service may record trace hops under its own name only and make the trace stream; only the console reads the records', () => {
    for (const service of SERVICE_NAMES) {
      const reader = service === 'console';
      assert.equal(permits(service, 'publish', Subjects.trace.build('node-1', service, 'uid-1')), true, service);
      for (const other of SERVICE_NAMES.filter((s) => s !== service)) assert.equal(permits(service, 'publish', Subjects.trace.build('node-1', other, 'uid-1')), false, `${service} as ${other}`);
      assert.equal(permits(service, 'publish', 'trace.node-1.uid-1'), false, `${service}: the unnamed subject of before`);
      assert.equal(permits(service, 'publish', '$JS.API.STREAM.CREATE.KUBELET_TRACES'), true, service);
      assert.equal(permits(service, 'subscribe', Subjects.trace.build('node-1', service, 'uid-1')), false, service);
      assert.equal(permits(service, 'publish', '$JS.API.CONSUMER.CREATE.KUBELET_TRACES.console_1.trace.*.*.uid-1'), reader, service);
      assert.equal(permits(service, 'publish', '$JS.API.CONSUMER.MSG.NEXT.KUBELET_TRACES.console_1'), reader, service);
      assert.equal(permits(service, 'publish', '$JS.API.STREAM.DELETE.KUBELET_TRACES'), false, service);
      assert.equal(permits(service, 'publish', '$JS.API.STREAM.PURGE.KUBELET_TRACES'), false, service);
    }
    // Reading traces grants no other stream's consumers.
    assert.equal(permits('console', 'publish', '$JS.API.CONSUMER.MSG.NEXT.KV_pods.x'), false);
  });

  it('a family granted in its own right is not denied by another family\'s wildcard', () => {
    // sync-loop subscribes to work.done.* and publishes work.*.*: the deny of work.done applies to publishing only.
    assert.deepEqual(natsPermissions('sync-loop').publish.deny, [familySubject('workDone')]);
    assert.deepEqual(natsPermissions('sync-loop').subscribe.deny, []);
  });

  it('every service answers requests once, within its time', () => {
    for (const s of SERVICE_NAMES) assert.ok(natsPermissions(s).allowResponses, s);
    assert.deepEqual(natsPermissions('cri-gateway').allowResponses, { max: -1, expires: '24h' }, 'progress signs, then the answer, for as long as a CRI call may last');
    assert.deepEqual(natsPermissions('status-manager').allowResponses, { max: 1, expires: '2m' });
  });

  it('renders one nats-server user per user, with its password', () => {
    const block = natsAuthorization((u) => (u === 'pleg' ? { env: true } : `pw-${u}`));
    for (const u of NATS_USERS) assert.match(block, new RegExp(`user: "${u}"`));
    assert.match(block, /password: \$NATS_PASSWORD_PLEG\n/);
    assert.match(block, /password: "pw-sync-loop"\n/);
  });

  it('a family a service answers under its own service.<service>.* is not listed again (config-source: apiObject)', () => {
    for (const s of SERVICE_NAMES) {
      const own = `kubelet.*.service.${s}.*`;
      assert.deepEqual(natsPermissions(s).subscribe.allow.filter((a) => a !== own && covers(own, a)), [], s);
    }
    assert.ok(!natsPermissions('config-source').subscribe.allow.includes(familySubject('apiObject')));
    assert.ok(permits('config-source', 'subscribe', Subjects.apiObject.wildcard(NODE)));
  });

  it('has an entry for every service', () => {
    assert.deepEqual(Object.keys(NATS_ACCESS).sort(), [...SERVICE_NAMES].sort() satisfies ServiceName[]);
  });
});

describe('NATS permissions held to a node: a NATS shared by nodes (issue 28 item 17)', () => {
  const A = 'node-a';
  const B = 'node-b';
  /** The node an allow entry names, when it names one: the second token of a family's subject, the third of a KV key. */
  function nodeOf(entry: string): string | undefined {
    const t = entry.split('.');
    if (['kubelet', 'cri', 'trace'].includes(t[0] ?? '')) return t[1];
    if (t[0] === '$KV') return t[2];
    // The node's events consumer (event-stream.ts eventConsumerName): `status-manager_<node>`.
    const events = /^\$JS\.(?:API\.CONSUMER\.[A-Z.]+|ACK)\.KUBELET_EVENTS\.status-manager_([^.]+)/.exec(entry);
    if (events) return events[1];
    const key = /\.(\$KV\.[^.]+|trace)\.([^.]+)\./.exec(entry);
    if (/^\$JS\.API\.(DIRECT\.GET|CONSUMER\.CREATE)\./.test(entry)) return key?.[2] ?? '(any: the key in the body)';
    return undefined;
  }

  for (const service of SERVICE_NAMES) {
    it(`${service}: every subject and KV key it may touch is node-a's`, () => {
      const p = natsPermissions(service, A);
      for (const entry of [...p.publish.allow, ...p.subscribe.allow]) {
        const node = nodeOf(entry);
        if (node !== undefined) assert.equal(node, A, `${service} may touch ${entry}`);
      }
    });
  }

  const cases: { name: string; user: ServiceName; op: 'publish' | 'subscribe'; own: string; other: string }[] = [
    { name: 'pod-worker: work done', user: 'pod-worker', op: 'publish', own: Subjects.workDone.build(A, UID), other: Subjects.workDone.build(B, UID) },
    { name: 'pod-worker: a shard', user: 'pod-worker', op: 'subscribe', own: Subjects.work.wildcard(A, 3), other: Subjects.work.wildcard(B, 3) },
    { name: 'pod-worker: RunPodSandbox', user: 'pod-worker', op: 'publish', own: Subjects.criRuntime.build(A, 'RunPodSandbox'), other: Subjects.criRuntime.build(B, 'RunPodSandbox') },
    { name: 'cri-gateway: the runtime calls', user: 'cri-gateway', op: 'subscribe', own: Subjects.criRuntime.wildcard(A), other: Subjects.criRuntime.wildcard(B) },
    { name: 'sync-loop: work', user: 'sync-loop', op: 'publish', own: Subjects.work.build(A, 1, UID), other: Subjects.work.build(B, 1, UID) },
    { name: 'sync-loop: writes a pod', user: 'sync-loop', op: 'publish', own: `$KV.pods.${A}.pod.${UID}`, other: `$KV.pods.${B}.pod.${UID}` },
    { name: 'pod-worker: its shard lease', user: 'pod-worker', op: 'publish', own: `$KV.leases.${A}.pod-worker-shard.3`, other: `$KV.leases.${B}.pod-worker-shard.3` },
    { name: 'status-manager: reads a pod (DIRECT.GET)', user: 'status-manager', op: 'publish', own: `$JS.API.DIRECT.GET.KV_pods.$KV.pods.${A}.pod.${UID}`, other: `$JS.API.DIRECT.GET.KV_pods.$KV.pods.${B}.pod.${UID}` },
    { name: 'status-manager: watches the pods', user: 'status-manager', op: 'publish', own: `$JS.API.CONSUMER.CREATE.KV_pods.w1.$KV.pods.${A}.>`, other: `$JS.API.CONSUMER.CREATE.KV_pods.w1.$KV.pods.${B}.>` },
    { name: 'prober: its trace records', user: 'prober', op: 'publish', own: Subjects.trace.build(A, 'prober', UID), other: Subjects.trace.build(B, 'prober', UID) },
    { name: 'console: reads a pod trace', user: 'console', op: 'publish', own: `$JS.API.CONSUMER.CREATE.KUBELET_TRACES.c1.${Subjects.trace.forPod(UID, A)}`, other: `$JS.API.CONSUMER.CREATE.KUBELET_TRACES.c1.${Subjects.trace.forPod(UID, B)}` },
    { name: "config-source: answers the node's object requests", user: 'config-source', op: 'subscribe', own: Subjects.apiObject.wildcard(A), other: Subjects.apiObject.wildcard(B) },
  ];
  for (const tc of cases) {
    it(`${tc.name}: on node-a, not on node-b`, () => {
      assert.equal(permits(tc.user, tc.op, tc.own, A), true, tc.own);
      assert.equal(permits(tc.user, tc.op, tc.other, A), false, tc.other);
    });
  }

  it('the forms that carry a key in the body only (any node) are not granted to a node', () => {
    for (const s of ['$JS.API.DIRECT.GET.KV_pods', '$JS.API.STREAM.MSG.GET.KV_pods', '$JS.API.CONSUMER.CREATE.KV_pods', '$JS.API.CONSUMER.CREATE.KV_pods.w1', '$JS.API.CONSUMER.CREATE.KV_pods.w1.$KV.pods.>']) {
      assert.equal(permits('status-manager', 'publish', s, A), false, s);
    }
  });

  it('a server shared by two nodes has one user per service and node, each with its own inbox', () => {
    const users = natsUsersOf([A, B]);
    assert.equal(users.length, SERVICE_NAMES.length * 2 + 1);
    assert.deepEqual(users.filter((u) => u.user === 'pod-worker').map((u) => u.name), ['pod-worker@node-a', 'pod-worker@node-b']);
    const block = natsAuthorization(() => 'pw', [A, B]);
    assert.match(block, /user: "pod-worker@node-a"/);
    assert.match(block, /"_INBOX_pod-worker@node-a\.>"/);
    assert.doesNotMatch(block, /"_INBOX_pod-worker\.>"/);
    // One node: the services' own names, held to it.
    assert.deepEqual(natsUsersOf([A]).map((u) => u.name), [...NATS_USERS]);
    assert.equal(natsUserOf('pod-worker@node-a'), 'pod-worker');
    assert.equal(natsUserOf('admin@node-a'), undefined);
    assert.equal(natsUserOf('nobody'), undefined);
  });

  it('only the console (and admin) may read NATS monitoring over NATS', () => {
    for (const subject of ['$SYS.REQ.ACCOUNT.PING.CONNZ', '$SYS.REQ.ACCOUNT.PING.STATZ']) {
      assert.deepEqual(NATS_USERS.filter((u) => permits(u, 'publish', subject)), ['console', 'admin'], subject);
    }
    assert.equal(permits('console', 'publish', '$SYS.REQ.SERVER.PING.CONNZ'), false, 'not the server-wide one');
  });
});

describe('node-scoped keys of a node whose name has dots (ip-10-0-0-1.ec2.internal)', () => {
  const NODE_D = 'ip-10-0-0-1.ec2.internal';
  it('the sync loop writes its monitor and pressure records, the kubelet server and node-status read them', () => {
    for (const key of [syncLoopMonitorKey(NODE_D), nodePressureKey(NODE_D)]) {
      assert.ok(permits('sync-loop', 'publish', `$KV.pods.${key}`, NODE_D), `sync-loop writes ${key}`);
    }
    assert.ok(permits('kubelet-server', 'publish', `$JS.API.DIRECT.GET.KV_pods.$KV.pods.${syncLoopMonitorKey(NODE_D)}`, NODE_D), 'kubelet-server reads the monitor record');
    assert.ok(permits('node-status', 'publish', `$JS.API.DIRECT.GET.KV_pods.$KV.pods.${nodePressureKey(NODE_D)}`, NODE_D), 'node-status reads the pressure record');
  });
});

describe('the event relay, held to the node', () => {
  it('node-a\'s status manager makes its own durable consumer with its own node\'s filter only', () => {
    const create = (consumer: string, filter: string) => permits('status-manager', 'publish', `$JS.API.CONSUMER.CREATE.KUBELET_EVENTS.${consumer}.${filter}`, 'node-a');
    assert.ok(create('status-manager_node-a', 'kubelet.node-a.events.*'));
    assert.equal(create('status-manager_node-a', 'kubelet.*.events.*'), false, 'not redefined to read every node\'s events');
    assert.equal(create('status-manager_node-a', 'kubelet.node-b.events.*'), false);
    assert.equal(create('status-manager_node-b', 'kubelet.node-b.events.*'), false, 'not node-b\'s consumer');
    assert.equal(permits('status-manager', 'publish', '$JS.API.CONSUMER.DURABLE.CREATE.KUBELET_EVENTS.status-manager_node-a', 'node-a'), false, 'no create without a filter in the subject');
    assert.equal(permits('status-manager', 'publish', '$JS.API.CONSUMER.MSG.NEXT.KUBELET_EVENTS.status-manager_node-b', 'node-a'), false);
  });
});

