import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, KV_LAYOUTS, MessageTypes, SERVICE_NAMES, Subjects } from '@app/contracts';
import { BUCKETS, NATS_ACCESS } from '@app/nats';
import { asyncApiDocument, renderAsyncApi } from './asyncapi.js';
import { checkAsyncApi, contractDifferences } from './check.js';

interface Ref {
  $ref: string;
}
interface Operation {
  action: string;
  channel: Ref;
  messages: Ref[];
  reply?: { channel: Ref; messages: Ref[] };
}
/** The parts of the document the tests read. */
interface Doc {
  asyncapi: string;
  channels: Record<string, { address: string | null; parameters?: Record<string, unknown> }>;
  operations: Record<string, Operation>;
  components: {
    messages: Record<string, { name: string; payload?: unknown }>;
    schemas: Record<string, { properties?: Record<string, { const?: string } | undefined>; required?: string[] }>;
  };
}
const doc = asyncApiDocument({ version: '0.0.0-test' }) as unknown as Doc;
const refs = (list: Ref[] | undefined) => (list ?? []).map((m) => m.$ref);

describe('the published contract (AsyncAPI 3)', () => {
  it('is valid AsyncAPI 3 structure: version, references, operations on existing channels, payloads, declared parameters', () => {
    assert.equal(doc.asyncapi, '3.0.0');
    assert.deepEqual(checkAsyncApi(doc), []);
  });

  it('has every subject family as a channel, but the services\' own commands', () => {
    const families = Object.keys(Subjects).filter((f) => f !== 'serviceCommand').sort();
    assert.deepEqual(families.filter((f) => !(f in doc.channels)), []);
    assert.equal(doc.channels['pleg']?.address, 'kubelet.{node}.pleg.{uid}');
    assert.deepEqual(Object.keys(doc.channels['probeResult']?.parameters ?? {}).sort(), ['node', 'probeType', 'uid']);
  });

  it('has a message with a JSON Schema for every message type, its `type` fixed', () => {
    for (const [id, t] of Object.entries(MessageTypes)) {
      assert.equal(doc.components.messages[id]?.name, t, id);
      assert.equal(doc.components.schemas[id]?.properties?.['type']?.const, t, id);
    }
    // The decoder's required fields are the schema's.
    assert.deepEqual(doc.components.schemas['workDone']?.required, ['type', 'podUid', 'requeueAfterMs']);
  });

  it('names who publishes and who subscribes, as NATS_ACCESS grants it', () => {
    const ops = doc.operations;
    for (const service of SERVICE_NAMES) {
      for (const f of NATS_ACCESS[service].publishes) assert.equal(ops[`${service}_send_${f}`]?.action, 'send', `${service} publishes ${f}`);
      for (const f of NATS_ACCESS[service].subscribes) assert.equal(ops[`${service}_receive_${f}`]?.action, 'receive', `${service} subscribes ${f}`);
    }
    const senders = Object.entries(ops).filter(([, o]) => o.channel.$ref === '#/channels/work' && o.action === 'send').map(([id]) => id);
    assert.deepEqual(senders, ['sync-loop_send_work']);
  });

  it('has the request/reply calls with their replies: work is answered by work_accepted, a CRI call by its response', () => {
    const work = doc.operations['pod-worker_receive_work'];
    assert.deepEqual(refs(work?.reply?.messages), ['#/channels/work_reply/messages/workAccepted', '#/channels/work_reply/messages/ErrorReply']);
    const prober = doc.operations['prober_send_criRuntime'];
    assert.deepEqual(refs(prober?.messages), ['#/channels/criRuntime/messages/cri_ExecSyncRequest']);
    assert.deepEqual(refs(prober?.reply?.messages), ['#/channels/criRuntime_reply/messages/cri_ExecSyncResponse', '#/channels/criRuntime_reply/messages/ErrorReply', '#/channels/criRuntime_reply/messages/CriProgress']);
    assert.ok(doc.components.schemas['cri_ExecSyncRequest']?.properties?.['containerId'], 'the CRI request schema comes from the descriptor');
  });

  it('has every KV bucket with its key layouts, writers and readers', () => {
    const buckets = Object.values(BUCKETS).map((b) => b.name).sort();
    assert.deepEqual(Object.keys(KV_LAYOUTS).sort(), buckets);
    assert.equal(doc.channels['kv_pods_pod']?.address, '$KV.pods.{node}.pod.{uid}');
    const writers = (channel: string) =>
      Object.entries(doc.operations).filter(([, o]) => o.channel.$ref === `#/channels/${channel}` && o.action === 'send').map(([id]) => id.split('_')[0]);
    for (const [id, writer] of [['kv_pods_pod', 'sync-loop'], ['kv_pod-cache_pod', 'pleg'], ['kv_pod-status', 'status-manager'], ['kv_workers', 'pod-worker'], ['kv_probe-results', 'prober']] as const) {
      assert.deepEqual(writers(id), [writer], id);
    }
    assert.deepEqual(writers('kv_leases_leader').sort(), ['node-status', 'pleg', 'status-manager', 'sync-loop']);
    // The layout's {service} values are the services that may write a leader lease.
    const leader = KV_LAYOUTS['leases']?.find((l) => l.key === '{node}.leader.{service}');
    assert.deepEqual([...(leader?.parameters['service']?.enum ?? [])].sort(), writers('kv_leases_leader').sort());
    assert.equal(doc.operations['kubelet-server_receive_kv_pod-status']?.action, 'receive');
  });

  it('is the same text every time (sorted keys, no time in it)', () => {
    const a = renderAsyncApi(asyncApiDocument({ version: '1' }));
    assert.equal(renderAsyncApi(asyncApiDocument({ version: '1' })), a);
    assert.doesNotMatch(a, /20\d\d-\d\d-\d\dT/);
  });

  it('the structural check names what is wrong', () => {
    const broken = structuredClone(doc);
    broken.asyncapi = '2.6.0';
    broken.channels['pleg']!.address = 'kubelet.{node}.pleg.{pod}';
    delete broken.components.messages['workDone']!.payload;
    broken.operations['pleg_send_pleg']!.channel = { $ref: '#/channels/nowhere' };
    const problems = checkAsyncApi(broken);
    for (const p of [/asyncapi must be "3.0.0"/, /channel pleg: address parameter \{pod\} is not declared/, /channel pleg: parameter uid is not in its address/, /message workDone: no payload schema/, /operation pleg_send_pleg: its channel #\/channels\/nowhere does not exist/]) {
      assert.ok(problems.some((x) => p.test(x)), `${String(p)} in ${problems.join('; ')}`);
    }
  });

  it('names the differences between two documents by where they are', () => {
    const changed = structuredClone(doc);
    changed.channels['pleg']!.address = 'x';
    delete changed.components.schemas['workDone'];
    assert.deepEqual(contractDifferences(changed, doc), ['channels.pleg: differs', 'components.schemas.workDone: only in the generated document']);
    assert.deepEqual(contractDifferences(doc, structuredClone(doc)), []);
  });

  it('CHANNELS has no family that subjects.ts lacks', () => {
    assert.deepEqual(Object.keys(CHANNELS).filter((f) => !(f in Subjects)), []);
  });
});
