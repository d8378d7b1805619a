/**
 * Checks a request body against the CRI message it is meant to be, before
 * it reaches the runtime: proto-loader silently drops unknown fields and
 * coerces wrong types, so a typo (`podSandboxID`) or a number where a
 * string belongs would otherwise reach containerd as an empty value. Errors
 * name the field path. Also the ids each method cannot do without.
 */
import protobuf from 'protobufjs';
import { isRecord } from '@app/contracts';
import type { CriService } from '@app/cri';

/** Fields that must be non-empty, by method (paths in the JSON form). */
const REQUIRED: Readonly<Record<string, readonly string[]>> = {
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

const INT_TYPES = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32', 'int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

export class RequestSchema {
  private readonly root: protobuf.Root;

  constructor(protoPath: string) {
    this.root = protobuf.loadSync(protoPath);
  }

  /** Undefined when `body` is a valid request for the method; otherwise what is wrong. */
  check(service: CriService, method: string, body: unknown): string | undefined {
    const svc = this.root.lookupService(service === 'runtime' ? 'runtime.v1.RuntimeService' : 'runtime.v1.ImageService');
    const rpc = svc.methods[method];
    if (!rpc) return `unknown method ${method}`;
    const type = this.root.lookupType(rpc.requestType.includes('.') ? rpc.requestType : `runtime.v1.${rpc.requestType}`);
    if (!isRecord(body)) return `the request must be a JSON object (${type.name})`;
    const problem = this.checkMessage(type, body, '');
    if (problem) return problem;
    for (const path of REQUIRED[method] ?? []) {
      const v = path.split('.').reduce<unknown>((o, k) => (isRecord(o) ? o[k] : undefined), body);
      if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) return `${path} is required by ${method}`;
    }
    return undefined;
  }

  private checkMessage(type: protobuf.Type, value: Record<string, unknown>, prefix: string): string | undefined {
    for (const [key, v] of Object.entries(value)) {
      const field = type.fields[key];
      const path = prefix + key;
      if (!field) return `unknown field ${path} in ${type.name} (fields: ${Object.keys(type.fields).join(', ')})`;
      if (v === null || v === undefined) continue;
      field.resolve();
      if (field.map) {
        if (!isRecord(v)) return `${path} must be an object (a map)`;
        for (const [k, mv] of Object.entries(v)) {
          const p = this.checkValue(field, mv, `${path}.${k}`);
          if (p) return p;
        }
      } else if (field.repeated) {
        if (!Array.isArray(v)) return `${path} must be an array`;
        for (let i = 0; i < v.length; i++) {
          const p = this.checkValue(field, v[i], `${path}[${i}]`);
          if (p) return p;
        }
      } else {
        const p = this.checkValue(field, v, path);
        if (p) return p;
      }
    }
    return undefined;
  }

  private checkValue(field: protobuf.Field, v: unknown, path: string): string | undefined {
    const t = field.resolvedType;
    if (t instanceof protobuf.Type) return isRecord(v) ? this.checkMessage(t, v, `${path}.`) : `${path} must be an object (${t.name})`;
    if (t instanceof protobuf.Enum) {
      if (typeof v === 'string' && Object.hasOwn(t.values, v)) return undefined;
      if (typeof v === 'number' && Object.values(t.values).includes(v)) return undefined;
      return `${path} must be one of ${Object.keys(t.values).join(', ')}`;
    }
    if (field.type === 'string') return typeof v === 'string' ? undefined : `${path} must be a string`;
    if (field.type === 'bool') return typeof v === 'boolean' ? undefined : `${path} must be true or false`;
    if (field.type === 'bytes') return typeof v === 'string' || Array.isArray(v) ? undefined : `${path} must be base64 text`;
    if (INT_TYPES.has(field.type)) {
      const ok = (typeof v === 'number' && Number.isInteger(v)) || (typeof v === 'string' && /^-?\d+$/.test(v));
      return ok ? undefined : `${path} must be an integer`;
    }
    if (field.type === 'double' || field.type === 'float') return typeof v === 'number' ? undefined : `${path} must be a number`;
    return undefined;
  }
}
