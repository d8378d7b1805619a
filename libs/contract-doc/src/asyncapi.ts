/**
 * The node's published contract: an AsyncAPI 3.0 document of every subject
 * family, who sends and who receives on it, each message's JSON Schema, the
 * request/reply calls, and the KV buckets as what they are on the wire
 * (a put is a publish on `$KV.<bucket>.<key>`, a watch a receive), with
 * their key layouts, writers and readers (docs/adr/0033-published-contract.md).
 *
 * Generated, never hand-kept, from:
 *  - @app/contracts CHANNELS and KV_LAYOUTS (contract.ts): each family's
 *    address and messages, each bucket's keys and records;
 *  - the field specs (schema.ts) that decodeMessage checks with: the
 *    messages' and records' JSON Schemas;
 *  - @app/nats NATS_ACCESS: who publishes, subscribes, asks, answers,
 *    writes and reads what (the table the NATS permissions come from);
 *  - @app/cri's descriptor (criJsonSchemas): the CRI over NATS.
 *
 * Pure: the same inputs give the same document, byte for byte once written
 * with sorted keys (renderAsyncApi); no time, no path, no host in it.
 */
import {
  CHANNELS,
  KV_LAYOUTS,
  MessageTypes,
  RECORD_FIELDS,
  SERVICE_INFO_FIELDS,
  SERVICE_NAMES,
  UNTYPED_BODIES,
  checkedMessageFields,
  fieldSpecs,
  messageSchema,
  recordSchema,
  type ChannelContract,
  type ContractFamily,
  type ContractMessage,
  type FieldsOf,
  type JsonSchema,
  type KvKeyLayout,
  type KvRecordName,
  type ServiceName,
} from '@app/contracts';
import { CRI_PROGRESS_HEADER, CRI_PROGRESS_INTERVAL_MS, CRI_PROGRESS_STALL_MS, CRI_TIMEOUT_HEADER, criJsonSchemas, type CriMethodSchema } from '@app/cri';
import type { LeaderElectionRecord } from '@app/leader-election';
import { BUCKETS, NATS_ACCESS, type FamilySubset, type NatsAccess, type SharedSettingRecord, type SubjectFamily } from '@app/nats';
import { Headers, type TraceRecord } from '@app/tracing';
import { stringify } from 'yaml';

const { S, describe, objectSchema, optional } = fieldSpecs;

/** What the document says of itself. */
export interface AsyncApiInfo {
  /** The project's version (package.json). */
  version: string;
}

/** The source's doc comments (deploy/contract doc-comments.ts reads them), for the descriptions. */
export interface ContractDocs {
  /** Each Subjects family's doc comment, by family. */
  families: Readonly<Record<string, string>>;
  /** Each interface's doc comment and its fields', by interface name; `messageType`: the MessageTypes key of its `type`. */
  types: Readonly<Record<string, { doc?: string; fields: Readonly<Record<string, string>>; messageType?: string }>>;
}

const NO_DOCS: ContractDocs = { families: {}, types: {} };

/** The schema with each property that has no description given its field's doc comment. */
function withFieldDocs(schema: JsonSchema, fields: Readonly<Record<string, string>> | undefined): JsonSchema {
  const properties = schema['properties'] as Record<string, JsonSchema> | undefined;
  if (!fields || !properties) return schema;
  const described = Object.fromEntries(
    Object.entries(properties).map(([name, p]) => {
      const doc = fields[name];
      if (!doc || p['description'] !== undefined) return [name, p];
      // Beside a $ref, a keyword is ignored (draft 07): the reference goes in an allOf.
      return [name, p['$ref'] !== undefined ? { allOf: [p], description: doc } : { ...p, description: doc }];
    }),
  );
  return { ...schema, properties: described };
}

type Doc = Record<string, unknown>;
const ref = ($ref: string) => ({ $ref });
const schemaRef = (name: string) => `#/components/schemas/${name}`;

/** The records defined beside the code that writes them (not in @app/contracts), typed against their interfaces. */
const OTHER_RECORDS: Record<Exclude<KvRecordName, keyof typeof RECORD_FIELDS>, { schema: JsonSchema; description: string }> = {
  LeaderElectionRecord: {
    description: "@app/leader-election's lease value, as client-go's LeaderElectionRecord",
    schema: objectSchema({
      holderIdentity: describe("the holder's INSTANCE_ID", S.string()),
      holderIncarnation: optional(describe("the holder's process start", S.string())),
      leaseDurationMs: S.integer(),
      acquireTime: S.dateTime(),
      renewTime: S.dateTime(),
      leaderTransitions: S.integer(),
    } satisfies FieldsOf<LeaderElectionRecord>),
  },
  SharedSettingRecord: {
    description: "@app/nats's agreed setting",
    schema: objectSchema({ value: S.string(), recordedBy: describe('the connection name of the service that recorded it', S.string()), recordedAt: S.dateTime() } satisfies FieldsOf<SharedSettingRecord>),
  },
  // apps/pod-worker ports.ts ShardLease and ReplicaHeartbeat: an app's own types, which a lib may not import; the
  // shape is its KvLeaseStore's. Only pod-worker replicas read and write them.
  ShardLease: { description: "a pod-worker replica's hold on a shard (apps/pod-worker ShardLease)", schema: { type: 'object', properties: { owner: { type: 'string' }, expiresAt: { type: 'integer' } }, required: ['owner', 'expiresAt'], additionalProperties: true } },
  ReplicaHeartbeat: {
    description: "a pod-worker replica's heartbeat (apps/pod-worker ReplicaHeartbeat)",
    schema: { type: 'object', properties: { owner: { type: 'string' }, expiresAt: { type: 'integer' } }, required: ['owner', 'expiresAt'], additionalProperties: true },
  },
};

const TRACE_RECORD_SCHEMA = objectSchema(
  {
    traceId: S.string(),
    spanId: S.string(),
    parentSpanId: optional(S.string()),
    kind: S.string(['handle', 'publish', 'request', 'cri', 'kv.put', 'kv.watch'] as const),
    podUid: S.string(),
    instance: describe('`<service>@<node>#<instance>`', S.string()),
    at: S.epochMs(),
    durationMs: S.number(),
    subject: optional(S.string()),
    from: optional(S.string()),
    method: optional(S.string()),
    messageType: optional(S.string()),
    detail: optional(S.map(S.any<string | number | boolean>())),
    bucket: optional(S.string()),
    key: optional(S.string()),
    revision: optional(S.integer()),
    error: optional(S.string()),
  } satisfies FieldsOf<TraceRecord>,
  'kubelet.v1.trace_hop',
);

/** The Kubernetes objects our messages carry: core/v1 as the API defines them, not restated here. */
const KUBE_SCHEMAS: Record<string, JsonSchema> = {
  Pod: {
    type: 'object',
    description: 'a core/v1 Pod (Kubernetes v1.34 API, JSON as the apiserver gives it); metadata and spec are always present. See https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/',
    properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec: { type: 'object' }, status: ref(schemaRef('PodStatus')) },
    required: ['metadata', 'spec'],
    additionalProperties: true,
  },
  PodStatus: {
    type: 'object',
    description: 'a core/v1 PodStatus (Kubernetes v1.34 API); a condition\'s lastProbeTime may be null. See https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#PodStatus',
    additionalProperties: true,
  },
  NodeCondition: {
    type: 'object',
    description: "a core/v1 NodeCondition (Kubernetes v1.34 API): type, status, reason, message, lastHeartbeatTime, lastTransitionTime. See https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/node-v1/#NodeStatus",
    properties: { type: { type: 'string' }, status: { type: 'string', enum: ['True', 'False', 'Unknown'] } },
    required: ['type', 'status'],
    additionalProperties: true,
  },
  Service: {
    type: 'object',
    description: 'a core/v1 Service (Kubernetes v1.34 API): metadata and spec. See https://kubernetes.io/docs/reference/kubernetes-api/service-resources/service-v1/',
    additionalProperties: true,
  },
};

/** The NATS headers every message may carry (@app/tracing Headers, each of them: one missing does not compile): none is required of a sender. */
const HEADER_PROPERTIES: Record<(typeof Headers)[keyof typeof Headers], JsonSchema> = {
  [Headers.traceparent]: { type: 'string', description: 'W3C trace context (https://www.w3.org/TR/trace-context/) of the hop that sent it (docs/adr/0015-tracing.md)' },
  [Headers.podUid]: { type: 'string', description: 'the pod the message is about' },
  [Headers.service]: { type: 'string', description: 'the sending service' },
  [Headers.sender]: { type: 'string', description: 'the sending instance: `<service>@<node>#<instance>`' },
  [Headers.leaderRevision]: { type: 'string', description: "the sender's leader fencing token (its lease revision), on what a single-active service's leader sends (docs/adr/0011-leader-election.md)" },
  [Headers.contract]: { type: 'string', pattern: '^[0-9]+$', description: 'the contract version the sender speaks, on every message and reply; a receiver outside its accepted range logs it and degrades /readyz (docs/adr/0034-version-skew-policy.md)' },
};
const HEADERS: JsonSchema = { type: 'object', properties: HEADER_PROPERTIES, additionalProperties: true };
/** A CRI request's headers besides: its deadline and its ask for signs of life (@app/cri). */
const CRI_REQUEST_HEADERS: JsonSchema = {
  type: 'object',
  properties: {
    ...HEADER_PROPERTIES,
    [CRI_TIMEOUT_HEADER]: { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$', description: "the call's deadline in milliseconds from when it was sent; the gateway makes it the gRPC deadline (none: the gateway's own timeouts)" },
    [CRI_PROGRESS_HEADER]: {
      type: 'string',
      description: `ask for signs of life every that many milliseconds (the clients ask every ${CRI_PROGRESS_INTERVAL_MS}): the gateway sends an empty message carrying this header to the reply subject until the answer; a caller that hears nothing for ${CRI_PROGRESS_STALL_MS} ms gives the call up (Unavailable)`,
    },
  },
  additionalProperties: true,
};

/** What one service does on one channel, as an AsyncAPI operation. */
interface OperationPlan {
  service: ServiceName;
  action: 'send' | 'receive';
  channel: string;
  /** The channel's messages this service sends or receives (all, when absent). */
  messages?: readonly string[];
  /** For request/reply: the reply channel and the replies (all, when absent). */
  reply?: { channel: string; messages?: readonly string[] };
  summary: string;
}

const CRI_FAMILIES = { criRuntime: 'runtime', criImage: 'image' } as const;

/** Builds the document (plain data, for renderAsyncApi). */
export function asyncApiDocument(info: AsyncApiInfo, docs: ContractDocs = NO_DOCS): Doc {
  const cri = criJsonSchemas((name) => schemaRef(`cri_${name}`), ['ContainerEventResponse']);
  const schemas: Record<string, JsonSchema> = { ...KUBE_SCHEMAS, MessageHeaders: HEADERS, CriRequestHeaders: CRI_REQUEST_HEADERS };
  for (const [name, s] of Object.entries(cri.schemas)) schemas[`cri_${name}`] = s;
  const messages: Record<string, Doc> = {};
  const channels: Record<string, Doc> = {};
  const operations: Record<string, Doc> = {};

  const interfaceOf = (id: string) => Object.entries(docs.types).find(([, t]) => t.messageType === id)?.[0];
  /** A message and its payload's schema; `typeName`: the interface whose doc comments describe it. */
  const addMessage = (id: string, name: string, summary: string, schema: JsonSchema, typeName?: string) => {
    const t = typeName === undefined ? undefined : docs.types[typeName];
    schemas[id] ??= withFieldDocs(schema, t?.fields);
    messages[id] ??= { name, title: name, summary, ...(t?.doc ? { description: t.doc } : {}), contentType: 'application/json', headers: ref(schemaRef('MessageHeaders')), payload: ref(schemaRef(id)) };
  };
  const contractMessage = (id: ContractMessage): string => {
    if (id in MessageTypes) {
      const t = MessageTypes[id as keyof typeof MessageTypes];
      const refused = checkedMessageFields(t);
      addMessage(id, t, `${t}; decodeMessage refuses it (MessageError) when \`type\` is not "${t}"${refused.length > 0 ? ` or without a valid ${refused.join(', ')}` : ''}, and keeps the fields it does not know`, messageSchema(t), interfaceOf(id));
    } else if (id in UNTYPED_BODIES) {
      const b = UNTYPED_BODIES[id as keyof typeof UNTYPED_BODIES];
      addMessage(id, id, b.description, b.schema);
    } else if (id === 'serviceInfo') {
      addMessage(id, 'kubelet.v1.service_info', 'one instance of one service, as it describes itself', objectSchema(SERVICE_INFO_FIELDS, 'kubelet.v1.service_info'), 'ServiceInfo');
    } else if (id === 'traceRecord') {
      addMessage(id, 'kubelet.v1.trace_hop', 'one hop of a pod\'s trace (docs/adr/0015-tracing.md), stored in the JetStream stream KUBELET_TRACES', TRACE_RECORD_SCHEMA, 'TraceRecord');
    } else {
      // The CRI's own message: its schema is the descriptor's, already among the schemas under this id.
      messages[id] ??= {
        name: 'runtime.v1.ContainerEventResponse',
        title: id,
        summary: 'a CRI container event (GetContainerEvents), relayed by cri-gateway as JSON',
        contentType: 'application/json',
        headers: ref(schemaRef('MessageHeaders')),
        payload: ref(schemaRef(id)),
      };
    }
    return id;
  };
  const criMessage = (m: CriMethodSchema, which: 'request' | 'response'): string => {
    const proto = which === 'request' ? m.request : m.response;
    const id = `cri_${proto}`;
    messages[id] ??= {
      name: `runtime.v1.${proto}`,
      title: `${m.method} ${which}`,
      contentType: 'application/json',
      headers: ref(schemaRef(which === 'request' ? 'CriRequestHeaders' : 'MessageHeaders')),
      payload: ref(schemaRef(id)),
    };
    return id;
  };

  const channelParameters = (parameters: ChannelContract['parameters'] | KvKeyLayout['parameters']) =>
    Object.fromEntries(Object.entries(parameters).map(([k, p]) => [k, { description: p.description, ...(p.enum ? { enum: [...p.enum] } : {}) }]));

  // The families.
  for (const family of Object.keys(CHANNELS).sort() as ContractFamily[]) {
    const c = CHANNELS[family];
    const criService = c.cri;
    const methods = criService ? cri.methods.filter((m) => m.service === criService) : [];
    const sent = criService ? methods.map((m) => criMessage(m, 'request')) : c.messages.map(contractMessage);
    channels[family] = {
      address: c.address,
      title: family,
      ...(docs.families[family] ? { description: docs.families[family] } : {}),
      ...(Object.keys(c.parameters).length > 0 ? { parameters: channelParameters(criService ? { ...c.parameters, method: { ...c.parameters['method']!, enum: methods.map((m) => m.method) } } : c.parameters) } : {}),
      messages: Object.fromEntries(sent.map((id) => [id, ref(`#/components/messages/${id}`)])),
    };
    if (c.reply || criService) {
      const replies = [...(criService ? methods.map((m) => criMessage(m, 'response')) : (c.reply ?? []).map(contractMessage)), contractMessage('ErrorReply')];
      if (criService) {
        messages['CriProgress'] ??= {
          name: 'CriProgress',
          title: 'CriProgress',
          summary: `a sign of life before the answer, to a caller that asked for it (${CRI_PROGRESS_HEADER}): no payload, the header set`,
          contentType: 'application/octet-stream',
          headers: ref(schemaRef('CriRequestHeaders')),
          payload: ref(schemaRef('CriProgress')),
        };
        schemas['CriProgress'] = { type: 'string', maxLength: 0, description: 'zero bytes' };
        replies.push('CriProgress');
      }
      channels[`${family}_reply`] = {
        address: null,
        title: `${family} reply`,
        description: `The replies to ${family}: on the NATS reply subject of the request, the asker's own inbox (\`_INBOX_<service>.>\`).`,
        messages: Object.fromEntries(replies.map((id) => [id, ref(`#/components/messages/${id}`)])),
      };
    }
  }

  // Who does what on the families, from NATS_ACCESS.
  const plans: OperationPlan[] = [];
  const criMethodsOf = (f: FamilySubset) => cri.methods.filter((m) => m.service === CRI_FAMILIES[f.family as keyof typeof CRI_FAMILIES] && f.only.includes(m.method));
  const familyPlan = (service: ServiceName, how: 'publishes' | 'subscribes' | 'requests' | 'serves', f: SubjectFamily | FamilySubset): OperationPlan => {
    const family = typeof f === 'string' ? f : f.family;
    const action = how === 'publishes' || how === 'requests' ? 'send' : 'receive';
    // A family with replies is request/reply however NATS_ACCESS lists it (work: published and subscribed, answered by work_accepted).
    const isRequest = how === 'requests' || how === 'serves' || CHANNELS[family].reply !== undefined;
    const subset = typeof f === 'string' ? undefined : criMethodsOf(f);
    return {
      service,
      action,
      channel: family,
      ...(subset ? { messages: subset.map((m) => `cri_${m.request}`) } : {}),
      ...(isRequest ? { reply: { channel: `${family}_reply`, ...(subset ? { messages: [...new Set(subset.map((m) => `cri_${m.response}`))].concat('ErrorReply', 'CriProgress') } : {}) } } : {}),
      summary: `${service} ${how === 'requests' ? 'asks' : how === 'serves' ? 'answers' : how} ${family}${subset ? ` (${subset.map((m) => m.method).join(', ')} only)` : ''}`,
    };
  };
  for (const service of SERVICE_NAMES) {
    const a: NatsAccess = NATS_ACCESS[service];
    for (const how of ['publishes', 'subscribes', 'requests', 'serves'] as const) for (const f of a[how]) plans.push(familyPlan(service, how, f));
    plans.push({ service, action: 'receive', channel: 'serviceInfo', reply: { channel: 'serviceInfo_reply' }, summary: `${service} answers serviceInfo (every instance, no queue group)` });
    plans.push({ service, action: 'send', channel: 'trace', summary: `${service} records its hops (trace.<node>.${service}.<uid> only)` });
    if (a.readsTraces) plans.push({ service, action: 'receive', channel: 'trace', summary: `${service} reads pods' trace records through a consumer of KUBELET_TRACES` });
  }

  // The buckets: a channel per key layout; writers send, readers receive.
  for (const bucket of Object.keys(KV_LAYOUTS).sort()) {
    for (const layout of KV_LAYOUTS[bucket] ?? []) {
      const id = kvChannelId(bucket, layout);
      const recordId = layout.record;
      const recordDoc = layout.record in RECORD_FIELDS ? `the ${layout.record} of @app/contracts state.ts` : OTHER_RECORDS[layout.record as keyof typeof OTHER_RECORDS].description;
      addMessage(recordId, layout.record, recordDoc, layout.record in RECORD_FIELDS ? recordSchema(layout.record as keyof typeof RECORD_FIELDS) : OTHER_RECORDS[layout.record as keyof typeof OTHER_RECORDS].schema, layout.record);
      const bucketSpec = Object.values(BUCKETS).find((b) => b.name === bucket);
      channels[id] = {
        address: `$KV.${bucket}.${layout.key}`,
        title: `KV ${bucket}: ${layout.key}`,
        description: `JetStream KV bucket \`${bucket}\` (stream KV_${bucket}, history ${bucketSpec?.history ?? 1}), key \`${layout.key}\`: ${layout.description}. A put is a publish here; a delete or purge (a KV-Operation header) is the record gone.`,
        parameters: channelParameters(layout.parameters),
        messages: { [recordId]: ref(`#/components/messages/${recordId}`) },
      };
      const keyAfterNode = layout.key.split('.').slice(1);
      for (const service of SERVICE_NAMES) {
        const a = NATS_ACCESS[service];
        const w = a.writes.find((x) => x.bucket === bucket);
        const keys = w ? (w.keys ?? ['>']).filter((k) => keysOverlap(k.split('.'), keyAfterNode)) : [];
        if (keys.length > 0) plans.push({ service, action: 'send', channel: id, summary: `${service} writes ${bucket} ${w?.keys ? `keys <node>.${keys.join(', <node>.')}` : 'keys'}` });
        if (keys.length > 0 || a.reads.includes(bucket)) plans.push({ service, action: 'receive', channel: id, summary: `${service} reads ${bucket} (get, watch)` });
      }
    }
  }

  for (const p of plans) {
    const channel = channels[p.channel] as { messages: Record<string, unknown> } | undefined;
    if (!channel) throw new Error(`${p.summary}: the contract has no channel ${p.channel}`);
    const opId = `${p.service}_${p.action}_${p.channel}`;
    const msgs = (p.messages ?? Object.keys(channel.messages)).map((m) => ref(`#/channels/${p.channel}/messages/${m}`));
    operations[opId] = {
      action: p.action,
      channel: ref(`#/channels/${p.channel}`),
      summary: p.summary,
      messages: msgs,
      ...(p.reply
        ? {
            reply: {
              channel: ref(`#/channels/${p.reply.channel}`),
              messages: (p.reply.messages ?? Object.keys((channels[p.reply.channel] as { messages: Record<string, unknown> }).messages)).map((m) => ref(`#/channels/${p.reply!.channel}/messages/${m}`)),
            },
          }
        : {}),
      tags: [{ name: p.service }],
    };
  }

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'kubelet-split node contract',
      version: info.version,
      description: [
        "The messages and records kubelet-split's services exchange on one node's NATS: what a team reads to write its own subsystem (docs/contract.md).",
        'Generated by `npm run contract` from libs/contracts, libs/nats NATS_ACCESS and the CRI descriptor (docs/adr/0033-published-contract.md); do not edit.',
        'Every payload is JSON. Every message carries a `type` versioned in its name; fields are only ever added, never repurposed, and a receiver keeps the fields it does not know.',
        'Operations are per service (tagged with its name): `send` is what it publishes (or asks, with a reply), `receive` what it subscribes to (or answers); the NATS permissions of each service user are derived from the same table.',
      ].join('\n'),
    },
    defaultContentType: 'application/json',
    servers: {
      nats: {
        host: 'localhost:4222',
        protocol: 'nats',
        description: "the node's nats-server, loopback only; every client authenticates as its service's user (deploy/nats), whose permissions allow exactly the operations below",
        security: [ref('#/components/securitySchemes/serviceUser')],
      },
    },
    channels,
    operations,
    components: {
      schemas,
      messages,
      securitySchemes: { serviceUser: { type: 'userPassword', description: 'one NATS user per service (its name), password NATS_PASSWORD_<SERVICE>' } },
    },
  };
}

/** `kv_<bucket>` or `kv_<bucket>_<first fixed token after the node>`: `kv_pods_queue`. */
function kvChannelId(bucket: string, layout: KvKeyLayout): string {
  const fixed = layout.key.split('.').slice(1).find((t) => !t.startsWith('{'));
  return `kv_${bucket}${fixed ? `_${fixed}` : ''}`;
}

/** Whether a granted key pattern (`leader.sync-loop`, `pod-worker-shard.*`, `>`) can match a key of the layout (`leader.{service}`). */
function keysOverlap(pattern: readonly string[], layout: readonly string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '>') return layout.length > i;
    if (i >= layout.length) return false;
    const l = layout[i] as string;
    if (pattern[i] !== '*' && !l.startsWith('{') && pattern[i] !== l) return false;
  }
  return pattern.length === layout.length;
}

/** The document as YAML: keys sorted at every level, so it is the same byte for byte for the same contract. */
export function renderAsyncApi(doc: Doc): string {
  return stringify(doc, { sortMapEntries: true, lineWidth: 0, aliasDuplicateObjects: false });
}
