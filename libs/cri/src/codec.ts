/**
 * The CRI's JSON codec, built on the generated code: a request that arrives
 * as JSON (over NATS or HTTP) is checked against the message it is meant to
 * be, field by field, using the file descriptor ts-proto embeds
 * (`outputSchema`), then turned into the generated message by its
 * `fromJSON`. `fromJSON` alone would silently drop unknown fields and coerce
 * wrong types, so a typo (`podSandboxID`) or a number where a string belongs
 * would reach containerd as an empty value; here it is an error that names
 * the field's path. The ids each method cannot do without are checked too.
 * Replies go back as JSON with bytes as base64 text (`Json<T>`).
 */
import { protoMetadata } from './generated/runtime/v1/api.js';
import type { CriService } from './messages.js';

/** Fields that must be non-empty, by method (paths in the JSON form). */
export const REQUIRED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  RunPodSandbox: ['config.metadata.name', 'config.metadata.namespace', 'config.metadata.uid'],
  StopPodSandbox: ['podSandboxId'],
  RemovePodSandbox: ['podSandboxId'],
  PodSandboxStatus: ['podSandboxId'],
  PodSandboxStats: ['podSandboxId'],
  CreateContainer: ['podSandboxId', 'config.metadata.name', 'config.image.image'],
  StartContainer: ['containerId'],
  StopContainer: ['containerId'],
  RemoveContainer: ['containerId'],
  ContainerStatus: ['containerId'],
  ContainerStats: ['containerId'],
  UpdateContainerResources: ['containerId'],
  ReopenContainerLog: ['containerId'],
  ExecSync: ['containerId', 'cmd'],
  ImageStatus: ['image.image'],
  PullImage: ['image.image'],
  RemoveImage: ['image.image'],
};

// google.protobuf.FieldDescriptorProto: the parts of the descriptor read here.
const TYPE = { double: 1, float: 2, int64: 3, uint64: 4, int32: 5, fixed64: 6, fixed32: 7, bool: 8, string: 9, message: 11, bytes: 12, uint32: 13, enum: 14, sfixed32: 15, sfixed64: 16, sint32: 17, sint64: 18 } as const;
const LABEL_REPEATED = 3;
const INT32 = new Set<number>([TYPE.int32, TYPE.sint32, TYPE.sfixed32]);
const UINT32 = new Set<number>([TYPE.uint32, TYPE.fixed32]);
const INT64 = new Set<number>([TYPE.int64, TYPE.sint64, TYPE.sfixed64]);
const UINT64 = new Set<number>([TYPE.uint64, TYPE.fixed64]);

interface FieldDesc {
  name: string;
  jsonName: string;
  label: number;
  type: number;
  typeName: string;
}
interface MessageDesc {
  name: string;
  field: FieldDesc[];
  nestedType: MessageDesc[];
  enumType: EnumDesc[];
  options?: { mapEntry?: boolean } | undefined;
}
interface EnumDesc {
  name: string;
  value: { name: string; number: number }[];
}
interface MethodDesc {
  name: string;
  inputType: string;
  outputType: string;
  clientStreaming: boolean;
  serverStreaming: boolean;
}

interface Field {
  /** The JSON (camelCase) name. */
  name: string;
  repeated: boolean;
  type: number;
  /** For messages and enums: the fully qualified name (`.runtime.v1.PodSandboxMetadata`). */
  typeName: string;
}
interface Message {
  /** As the proto names it (`LinuxPodSandboxConfig.SysctlsEntry`). */
  name: string;
  fields: Map<string, Field>;
  mapEntry: boolean;
  /** Whether a bytes field is somewhere inside (only those replies are rewritten). */
  hasBytes?: boolean;
}
interface Enum {
  name: string;
  names: Set<string>;
  numbers: Set<number>;
}
interface Codec {
  fromJSON(object: unknown): unknown;
}

/** The index of the descriptor ts-proto embeds in the generated code. */
class Schema {
  readonly messages = new Map<string, Message>();
  readonly enums = new Map<string, Enum>();
  readonly methods = new Map<string, { input: string; output: string }>();

  constructor() {
    const fd = protoMetadata.fileDescriptor as unknown as { package: string; messageType: MessageDesc[]; enumType: EnumDesc[]; service: { name: string; method: MethodDesc[] }[] };
    const prefix = `.${fd.package}.`;
    const addEnum = (e: EnumDesc, scope: string) =>
      this.enums.set(`${prefix}${scope}${e.name}`, { name: `${scope}${e.name}`, names: new Set(e.value.map((v) => v.name)), numbers: new Set(e.value.map((v) => v.number)) });
    const addMessage = (m: MessageDesc, scope: string) => {
      const name = `${scope}${m.name}`;
      this.messages.set(`${prefix}${name}`, {
        name,
        mapEntry: m.options?.mapEntry === true,
        fields: new Map(m.field.map((f) => [f.jsonName, { name: f.jsonName, repeated: f.label === LABEL_REPEATED, type: f.type, typeName: f.typeName }])),
      });
      for (const n of m.nestedType) addMessage(n, `${name}.`);
      for (const e of m.enumType) addEnum(e, `${name}.`);
    };
    for (const m of fd.messageType) addMessage(m, '');
    for (const e of fd.enumType) addEnum(e, '');
    for (const s of fd.service) {
      const service: CriService = s.name === 'ImageService' ? 'image' : 'runtime';
      for (const m of s.method) if (!m.clientStreaming && !m.serverStreaming) this.methods.set(`${service}/${m.name}`, { input: m.inputType, output: m.outputType });
    }
  }

  message(typeName: string): Message {
    const m = this.messages.get(typeName);
    if (!m) throw new Error(`the CRI descriptor has no message ${typeName}`);
    return m;
  }

  /** Whether a bytes field is somewhere inside the message (the CRI has no recursive messages; a cycle would count as none). */
  hasBytes(typeName: string): boolean {
    const m = this.message(typeName);
    if (m.hasBytes === undefined) {
      m.hasBytes = false;
      m.hasBytes = [...m.fields.values()].some((f) => f.type === TYPE.bytes || (f.type === TYPE.message && this.hasBytes(f.typeName)));
    }
    return m.hasBytes;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

let schema: Schema | undefined;
const theSchema = (): Schema => (schema ??= new Schema());

/**
 * What is wrong with `body` as the request of `service`/`method`, or
 * undefined when it is a valid one: an unknown method, an unknown field, a
 * value of the wrong type, or a field the method requires left empty. Every
 * problem names the field's path (`config.metadata.nme: unknown field of
 * PodSandboxMetadata ...`).
 */
export function checkRequest(service: CriService, method: string, body: unknown): string | undefined {
  const s = theSchema();
  const rpc = s.methods.get(`${service}/${method}`);
  if (!rpc) return `unknown ${service} method ${method}`;
  const type = s.message(rpc.input);
  if (!isObject(body)) return `the request must be a JSON object (${type.name})`;
  const problem = checkMessage(s, type, body, '');
  if (problem) return problem;
  for (const path of REQUIRED_FIELDS[method] ?? []) {
    const v = path.split('.').reduce<unknown>((o, k) => (isObject(o) ? o[k] : undefined), body);
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) return `${path} is required by ${method}`;
  }
  return undefined;
}

/**
 * The generated message for a request body that checkRequest accepted
 * (every field present, proto defaults where the body had none), ready for
 * the generated gRPC client.
 */
export function decodeRequest(service: CriService, method: string, body: unknown): unknown {
  const s = theSchema();
  const rpc = s.methods.get(`${service}/${method}`);
  const codec = rpc ? (protoMetadata.references[rpc.input] as Codec | undefined) : undefined;
  if (!codec) throw new Error(`no generated codec for ${service} method ${method}`);
  return codec.fromJSON(body);
}

/**
 * A reply of `service`/`method` as the generated client decoded it, made
 * JSON-safe: bytes fields become base64 text; nothing else changes (scalars,
 * lists and maps are all present; int64 are decimal strings; enums their
 * names). Replies without bytes are returned as they are.
 */
export function encodeResponse(service: CriService, method: string, reply: unknown): unknown {
  const s = theSchema();
  const rpc = s.methods.get(`${service}/${method}`);
  if (!rpc || !s.hasBytes(rpc.output)) return reply;
  return bytesToBase64(s, rpc.output, reply);
}

function bytesToBase64(s: Schema, typeName: string, value: unknown): unknown {
  if (!isObject(value)) return value;
  const m = s.message(typeName);
  const out: Record<string, unknown> = { ...value };
  for (const f of m.fields.values()) {
    const v = value[f.name];
    if (v === undefined || v === null) continue;
    const one = (x: unknown): unknown =>
      f.type === TYPE.bytes && x instanceof Uint8Array ? Buffer.from(x.buffer, x.byteOffset, x.byteLength).toString('base64') : f.type === TYPE.message && s.hasBytes(f.typeName) ? bytesToBase64(s, f.typeName, x) : x;
    out[f.name] = Array.isArray(v) ? v.map(one) : one(v);
  }
  return out;
}

function checkMessage(s: Schema, type: Message, value: Record<string, unknown>, prefix: string): string | undefined {
  for (const [key, v] of Object.entries(value)) {
    const field = type.fields.get(key);
    const path = prefix + key;
    if (!field) return `${path}: unknown field of ${type.name} (its fields: ${[...type.fields.keys()].join(', ')})`;
    if (v === null || v === undefined) continue;
    const entry = field.type === TYPE.message ? s.message(field.typeName) : undefined;
    if (entry?.mapEntry) {
      if (!isObject(v)) return `${path} must be an object (a map)`;
      const valueField = entry.fields.get('value');
      if (!valueField) continue;
      for (const [k, mv] of Object.entries(v)) {
        const p = checkValue(s, valueField, mv, `${path}.${k}`);
        if (p) return p;
      }
    } else if (field.repeated) {
      if (!Array.isArray(v)) return `${path} must be an array`;
      for (let i = 0; i < v.length; i++) {
        const p = checkValue(s, field, v[i], `${path}[${i}]`);
        if (p) return p;
      }
    } else {
      const p = checkValue(s, field, v, path);
      if (p) return p;
    }
  }
  return undefined;
}

function checkValue(s: Schema, field: Field, v: unknown, path: string): string | undefined {
  switch (field.type) {
    case TYPE.message: {
      const t = s.message(field.typeName);
      return isObject(v) ? checkMessage(s, t, v, `${path}.`) : `${path} must be an object (${t.name})`;
    }
    case TYPE.enum: {
      const e = s.enums.get(field.typeName);
      if (!e) return undefined;
      if (typeof v === 'string' && e.names.has(v)) return undefined;
      if (typeof v === 'number' && e.numbers.has(v)) return undefined;
      return `${path} must be one of ${[...e.names].join(', ')}`;
    }
    case TYPE.string:
      return typeof v === 'string' ? undefined : `${path} must be a string`;
    case TYPE.bool:
      return typeof v === 'boolean' ? undefined : `${path} must be true or false`;
    case TYPE.bytes:
      return typeof v === 'string' && /^[A-Za-z0-9+/_-]*={0,2}$/.test(v) ? undefined : `${path} must be base64 text`;
    case TYPE.double:
    case TYPE.float:
      return typeof v === 'number' ? undefined : `${path} must be a number`;
    default:
      return checkInteger(field.type, v, path);
  }
}

function checkInteger(type: number, v: unknown, path: string): string | undefined {
  const text = typeof v === 'number' && Number.isInteger(v) ? String(v) : typeof v === 'string' && /^-?\d+$/.test(v) ? v : undefined;
  if (text === undefined) return `${path} must be an integer`;
  const n = BigInt(text);
  const [min, max, kind] = INT32.has(type)
    ? [-(2n ** 31n), 2n ** 31n - 1n, 'int32']
    : UINT32.has(type)
      ? [0n, 2n ** 32n - 1n, 'uint32']
      : INT64.has(type)
        ? [-(2n ** 63n), 2n ** 63n - 1n, 'int64']
        : UINT64.has(type)
          ? [0n, 2n ** 64n - 1n, 'uint64']
          : [undefined, undefined, ''];
  if (min === undefined || max === undefined) return undefined;
  return n < min || n > max ? `${path} must be an integer in the ${kind} range (${min}..${max})` : undefined;
}

/** A JSON Schema (draft 07), as plain data. */
export type CriJsonSchema = { readonly [keyword: string]: unknown };

/** One unary CRI method as it travels over NATS: its request and reply messages by their proto names (`PodSandboxStatusRequest`). */
export interface CriMethodSchema {
  service: CriService;
  method: string;
  request: string;
  response: string;
}

/**
 * The CRI over NATS as JSON Schemas, generated from the descriptor the codec
 * checks requests against (so the published contract says what
 * checkRequest accepts): every unary method's request and reply, and every
 * message they reach, each named by its proto name. `ref(name)` says how a
 * schema refers to another (the AsyncAPI document's `#/components/schemas/...`).
 * The JSON form is the codec's: camelCase fields, enums by name (a request
 * may give the number), int64 as decimal strings (a request may give a
 * number), bytes as base64 text, maps as objects. The fields a method cannot
 * do without (REQUIRED_FIELDS) are in its request's description. `also`:
 * other messages to include (`ContainerEventResponse`, a stream's).
 */
export function criJsonSchemas(ref: (protoName: string) => string, also: readonly string[] = []): { methods: CriMethodSchema[]; schemas: Record<string, CriJsonSchema> } {
  const s = theSchema();
  const schemas: Record<string, CriJsonSchema> = {};
  const short = (typeName: string) => s.message(typeName).name;
  const fieldSchema = (f: Field): CriJsonSchema => {
    const entry = f.type === TYPE.message ? s.message(f.typeName) : undefined;
    if (entry?.mapEntry) {
      const v = entry.fields.get('value');
      return { type: 'object', additionalProperties: v ? valueSchema(v) : {} };
    }
    return f.repeated ? { type: 'array', items: valueSchema(f) } : valueSchema(f);
  };
  const valueSchema = (f: Field): CriJsonSchema => {
    switch (f.type) {
      case TYPE.message:
        visit(f.typeName);
        return { $ref: ref(short(f.typeName)) };
      case TYPE.enum: {
        const e = s.enums.get(f.typeName);
        return e ? { type: ['string', 'integer'], enum: [...e.names, ...e.numbers], description: `${e.name}: by name (a request may give its number)` } : { type: ['string', 'integer'] };
      }
      case TYPE.string:
        return { type: 'string' };
      case TYPE.bool:
        return { type: 'boolean' };
      case TYPE.bytes:
        return { type: 'string', contentEncoding: 'base64' };
      case TYPE.double:
      case TYPE.float:
        return { type: 'number' };
      default:
        return INT64.has(f.type) || UINT64.has(f.type) ? { type: ['string', 'integer'], pattern: '^-?[0-9]+$', description: '64-bit integer: a decimal string (a request may give a number)' } : { type: 'integer' };
    }
  };
  const visit = (typeName: string, description?: string): void => {
    const m = s.message(typeName);
    if (schemas[m.name] !== undefined || m.mapEntry) return;
    const properties: Record<string, CriJsonSchema> = {};
    schemas[m.name] = { type: 'object', properties, description: description ?? `runtime.v1.${m.name}` };
    for (const f of [...m.fields.values()].sort((a, b) => a.name.localeCompare(b.name))) properties[f.name] = fieldSchema(f);
  };
  const methods: CriMethodSchema[] = [];
  for (const [key, rpc] of [...s.methods.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const [service, method] = key.split('/') as [CriService, string];
    const required = REQUIRED_FIELDS[method];
    visit(rpc.input, `runtime.v1.${short(rpc.input)}: the request of ${method}${required ? `; required non-empty: ${required.join(', ')}` : ''}; a field it does not know is refused`);
    visit(rpc.output, `runtime.v1.${short(rpc.output)}: the reply of ${method}`);
    methods.push({ service, method, request: short(rpc.input), response: short(rpc.output) });
  }
  for (const name of also) visit(`.runtime.v1.${name}`);
  return { methods, schemas };
}
