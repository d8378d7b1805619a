/**
 * What the kubelet does to a pod read from a file or a URL before it is one
 * of the node's pods (pkg/kubelet/config/common.go applyDefaults, and the
 * source annotation of config.go): a UID that is a digest of the manifest
 * and where it came from, a name unique among nodes, the node's name, the
 * config annotations, and the API server's defaults.
 */
import { createHash } from 'node:crypto';
import { isRecord, type Pod, type Toleration } from '@app/contracts';
import { applyPodDefaults } from './defaults.js';

/** Which source a pod came from: "file", "http" or "api" (kubetypes.ConfigSourceAnnotationKey). */
export const ConfigSourceAnnotation = 'kubernetes.io/config.source';
/** The static pod's UID, the digest of its manifest unless the manifest sets one (kubetypes.ConfigHashAnnotationKey). */
export const ConfigHashAnnotation = 'kubernetes.io/config.hash';
/** When the kubelet first saw the pod, RFC 3339 (kubetypes.ConfigFirstSeenAnnotationKey). */
export const ConfigFirstSeenAnnotation = 'kubernetes.io/config.seen';
/** Marks the API server's mirror of a static pod (kubetypes.ConfigMirrorAnnotationKey). */
export const ConfigMirrorAnnotation = 'kubernetes.io/config.mirror';

/** The source name of pods from the API server: every other source makes static pods. */
const ApiserverSource = 'api';

/** Where a static pod's manifest was read. */
export interface StaticPodOrigin {
  source: 'file' | 'http';
  /** The manifest's file path, or the URL it was fetched from. */
  location: string;
  nodeName: string;
}

/**
 * The static pod for a pod as read from `origin`: a new object (the input is
 * not changed) with
 *  - metadata.uid: kept when the manifest sets one, else staticPodUID (a
 *    digest of the whole pod: any edit makes a new pod);
 *  - metadata.name: `<name>-<node name, lowercased>` (a missing name stays
 *    missing, for validation to report);
 *  - metadata.namespace: "default" when empty;
 *  - spec.nodeName: the node;
 *  - annotations config.hash (the UID, as upstream's) and config.source
 *    (file or http);
 *  - for file sources, a toleration of every NoExecute taint, so the node's
 *    own problems never evict its static pods;
 *  - status.phase Pending;
 *  - then the API server's defaults (applyPodDefaults).
 * No config.seen: that is a time, and the caller owns the clock.
 */
export function makeStaticPod(raw: Pod, origin: StaticPodOrigin): Pod {
  const pod = structuredClone(raw);
  const meta = isRecord(pod.metadata) ? pod.metadata : (pod.metadata = {});
  if (!isRecord(pod.spec)) pod.spec = { containers: [] };

  const uid = typeof meta.uid === 'string' && meta.uid !== '' ? meta.uid : staticPodUID(raw, origin);
  meta.uid = uid;
  if (typeof meta.name === 'string' && meta.name !== '') meta.name = generatePodName(meta.name, origin.nodeName);
  if (meta.namespace === undefined || meta.namespace === null || meta.namespace === '') meta.namespace = 'default';
  pod.spec.nodeName = origin.nodeName;
  meta.annotations = {
    ...(isRecord(meta.annotations) ? meta.annotations : {}),
    [ConfigHashAnnotation]: uid,
    [ConfigSourceAnnotation]: origin.source,
  };
  if (origin.source === 'file') {
    pod.spec.tolerations = addOrUpdateToleration(Array.isArray(pod.spec.tolerations) ? pod.spec.tolerations : [], { operator: 'Exists', effect: 'NoExecute' });
  }
  pod.status = { ...(isRecord(pod.status) ? pod.status : {}), phase: 'Pending' };
  return applyPodDefaults(pod);
}

/**
 * A static pod's UID (applyDefaults): the md5 (hex) of the pod as read,
 * serialized with sorted keys, then `host:<node>file:<path>` for a file or
 * `url:<url>` for http. The same manifest at the same place on the same node
 * gives the same UID across restarts; any edit of it (a container, a volume,
 * the pod's securityContext, a label) gives a new UID, so the edited pod is
 * a new pod: the old one is killed, and the new one starts once the old one
 * has terminated (the pod workers' allowStaticPodStart). Upstream hashes the
 * decoded object with DeepHashObject; the key-sorted JSON plays that part
 * here (the file's formatting and key order change nothing).
 * docs/adr/0030-static-pod-generations.md.
 */
export function staticPodUID(raw: Pod, origin: StaticPodOrigin): string {
  return digest(stableJson(raw), origin);
}

function digest(text: string, origin: StaticPodOrigin): string {
  const hasher = createHash('md5');
  hasher.update(text);
  if (origin.source === 'file') {
    hasher.update(`host:${origin.nodeName}`);
    hasher.update(`file:${origin.location}`);
  } else {
    hasher.update(`url:${origin.location}`);
  }
  return hasher.digest('hex');
}

/** generatePodName: unique among nodes by the node's name. */
export function generatePodName(name: string, nodeName: string): string {
  return `${name}-${nodeName.toLowerCase()}`;
}

/** Whether the pod came from a file or http source (its source annotation is there and is not "api"). */
export function isStaticPod(pod: Pod): boolean {
  const source = pod.metadata.annotations?.[ConfigSourceAnnotation];
  return source !== undefined && source !== ApiserverSource;
}

/** Whether the pod is the API server's mirror of a static pod. */
export function isMirrorPod(pod: Pod): boolean {
  const annotations = pod.metadata.annotations;
  return annotations !== undefined && Object.hasOwn(annotations, ConfigMirrorAnnotation);
}

/** helper.AddOrUpdateTolerationInPod: replace a toleration with the same key, operator, value and effect, or append. */
function addOrUpdateToleration(tolerations: Toleration[], toleration: Toleration): Toleration[] {
  const same = (t: Toleration) =>
    (t.key ?? '') === (toleration.key ?? '') &&
    (t.operator ?? '') === (toleration.operator ?? '') &&
    (t.value ?? '') === (toleration.value ?? '') &&
    (t.effect ?? '') === (toleration.effect ?? '');
  const out: Toleration[] = [];
  let updated = false;
  for (const t of tolerations) {
    if (isRecord(t) && same(t)) {
      if (!updated) out.push({ ...toleration });
      updated = true;
    } else {
      out.push(t);
    }
  }
  if (!updated) out.push({ ...toleration });
  return out;
}

/** JSON with object keys sorted (undefined members left out, as JSON.stringify does). */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : stableJson(x))).join(',')}]`;
  if (isRecord(v)) {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
