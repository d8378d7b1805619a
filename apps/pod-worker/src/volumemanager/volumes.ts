/**
 * The kubelet's volume manager (pkg/kubelet/volumemanager
 * WaitForAttachAndMount; pkg/volume/emptydir, hostpath, downwardapi,
 * configmap, secret and projected; kubelet_pods.go makeMounts), for the pod
 * worker: syncPod mounts every volume of the pod before any of its
 * containers (init included) is started, and a volume that cannot be set up
 * is a FailedMount, the containers left waiting (ContainerCreating) and the
 * mount retried at the next sync. Every sync mounts again, so a configMap or
 * secret that changed is rewritten then (upstream's periodic remount).
 *
 *   <POD_ROOT_DIR>/<uid>/volumes/kubernetes.io~empty-dir/<name>     emptyDir (a tmpfs with medium: Memory)
 *   <POD_ROOT_DIR>/<uid>/volumes/kubernetes.io~downward-api/<name>  downwardAPI (AtomicWriter layout)
 *   <POD_ROOT_DIR>/<uid>/volumes/kubernetes.io~configmap/<name>     configMap (AtomicWriter, on disk as upstream)
 *   <POD_ROOT_DIR>/<uid>/volumes/kubernetes.io~secret/<name>        secret (AtomicWriter on a tmpfs, as upstream)
 *   <POD_ROOT_DIR>/<uid>/volumes/kubernetes.io~projected/<name>     projected (AtomicWriter on a tmpfs, as upstream)
 *   hostPath                                                        the host's path itself, its type checked
 *
 * configMap and secret contents come from the apiserver through
 * config-source (ApiObjects, ADR 0014). A missing object is a FailedMount
 * with upstream's `configmap "x" not found`, never an empty directory,
 * unless the volume (or projection) says `optional: true`: then the volume
 * is set up without it. A projected serviceAccountToken is the pod's
 * service account token bound to the pod (TokenRequest, by config-source's
 * token manager). Nothing is written before every object of the volume has
 * been read, so a failed mount leaves no half-filled volume.
 *
 * Invariants: a pod's directory is removed only after every mount under it
 * is unmounted (a tmpfs still mounted makes the removal fail, to be retried),
 * and nothing outside it is ever removed: a hostPath is bind-mounted by the
 * runtime straight from the host, never under the pod's directory.
 */
import { join } from 'node:path';
import { apiObjectResource, type Container, type Pod, type Volume } from '@app/contracts';
import { VOLUME_SOURCE_FIELDS, cpuMillis, extractFieldPathAsString, memoryBytes } from '@app/kube';
import type { ApiObjectPayload, ApiObjects, ServiceAccountTokens } from '../ports.js';

/** What is at a path on the host (hostutil.GetFileType). */
export type FileKind = 'missing' | 'directory' | 'file' | 'socket' | 'char' | 'block' | 'other';

/** One file of an AtomicWriter payload: text, or bytes (a secret, a configMap's binaryData). */
export interface PayloadFile {
  content: string | Uint8Array;
  mode: number;
}

/** The host's file system and mount table, as the volume plugins use them. */
export abstract class VolumeHost {
  /** What is at `path` (not following a final symlink's absence: a dangling link is missing). */
  abstract fileKind(path: string): Promise<FileKind>;
  /** mkdir -p with `mode` for the directories it creates. */
  abstract mkdir(path: string, mode: number): Promise<void>;
  /** Creates an empty file if nothing is there (hostPath FileOrCreate: no parent directories made). */
  abstract createFile(path: string, mode: number): Promise<void>;
  /** The mount points of the host's mount table. */
  abstract mountPoints(): Promise<string[]>;
  /** Mounts a tmpfs of `sizeBytes` at `path`. */
  abstract mountTmpfs(path: string, sizeBytes: number): Promise<void>;
  abstract unmount(path: string): Promise<void>;
  /** Writes `files` into `dir` atomically (AtomicWriter: `..data` switched at once), when they differ from what is there; says whether it wrote. */
  abstract writeAtomic(dir: string, files: Map<string, PayloadFile>): Promise<boolean>;
  /** Removes `path` and everything under it, never following a symlink. */
  abstract removeAll(path: string): Promise<void>;
  /**
   * SetVolumeOwnership (pkg/volume/volume_linux.go) for a pod's fsGroup:
   * everything under `dir` (never following a symlink) gets the group
   * `fsGroup`, and its mode the group's share: files `| 0440` on a read-only
   * volume, `| 0660` otherwise; directories also `| 0110` and setgid.
   */
  abstract setOwnership(dir: string, fsGroup: number, readOnly: boolean): Promise<void>;
}

/** changeFilePermission's masks: what a file's mode gains under an fsGroup (read-only volumes: configMap, secret, downwardAPI, projected). */
export function fsGroupFileMode(mode: number, readOnly: boolean): number {
  return mode | (readOnly ? 0o440 : 0o660);
}

/** The payload's modes as SetVolumeOwnership leaves them, so that the writer's comparison with what is there holds after it ran. */
function withFsGroupModes(files: Map<string, PayloadFile>, fsGroup: number | undefined): Map<string, PayloadFile> {
  if (fsGroup === undefined) return files;
  return new Map([...files].map(([path, f]) => [path, { ...f, mode: fsGroupFileMode(f.mode, true) }]));
}

/** A volume that could not be set up, and upstream's FailedMount message. */
export interface VolumeFailure {
  volume: string;
  message: string;
}

/** The volumes whose content is refreshed at every sync from the apiserver's objects. */
const REFRESHED_KINDS = new Set(['configMap', 'secret', 'projected']);

/** The volumes of a pod that could not be set up (upstream's FailedMount events, one per volume). */
export class VolumeMountError extends Error {
  constructor(readonly failures: VolumeFailure[]) {
    super(`unmounted volumes=[${failures.map((f) => f.volume).join(' ')}]: ${failures.map((f) => f.message).join('; ')}`);
  }
}

/** `<podRoot>/<uid>` */
export function podDir(pod: Pod, podRoot: string): string {
  return join(podRoot, pod.metadata.uid ?? '');
}

/** The plugin directory names of upstream (`kubernetes.io~empty-dir`). */
const PLUGIN_DIRS: Readonly<Record<string, string>> = {
  emptyDir: 'kubernetes.io~empty-dir',
  downwardAPI: 'kubernetes.io~downward-api',
  configMap: 'kubernetes.io~configmap',
  secret: 'kubernetes.io~secret',
  projected: 'kubernetes.io~projected',
};

/** The source field of a volume (`emptyDir`, `hostPath`, `configMap`, ...), emptyDir when none is set (SetDefaults_Volume). */
export function volumeKind(v: Volume): string {
  const record = v as unknown as Record<string, unknown>;
  return VOLUME_SOURCE_FIELDS.find((f) => record[f] !== undefined && record[f] !== null) ?? 'emptyDir';
}

/** The host path a volume is mounted from (makeMounts), undefined for a kind this node cannot set up. */
export function volumeHostPath(pod: Pod, v: Volume, podRoot: string): string | undefined {
  const kind = volumeKind(v);
  if (kind === 'hostPath') return v.hostPath?.path;
  const plugin = PLUGIN_DIRS[kind];
  return plugin ? join(podDir(pod, podRoot), 'volumes', plugin, v.name) : undefined;
}

/** What checkTypeInternal decides for a hostPath of `type` at a path holding `kind`. */
export type HostPathCheck = { ok: true; create?: 'directory' | 'file' } | { ok: false; message: string };

/** pkg/volume/hostpath checkTypeInternal, pure. */
export function checkHostPathType(type: string | undefined, path: string, kind: FileKind): HostPathCheck {
  const fail = (what: string): HostPathCheck => ({ ok: false, message: `hostPath type check failed: ${path} is not ${what}` });
  switch (type ?? '') {
    case '':
      return { ok: true };
    case 'DirectoryOrCreate':
      if (kind === 'missing') return { ok: true, create: 'directory' };
      return kind === 'directory' ? { ok: true } : fail('a directory');
    case 'Directory':
      return kind === 'directory' ? { ok: true } : fail('a directory');
    case 'FileOrCreate':
      if (kind === 'missing') return { ok: true, create: 'file' };
      return kind === 'file' ? { ok: true } : fail('a file');
    case 'File':
      return kind === 'file' ? { ok: true } : fail('a file');
    case 'Socket':
      return kind === 'socket' ? { ok: true } : fail('a socket file');
    case 'CharDevice':
      return kind === 'char' ? { ok: true } : fail('a character device');
    case 'BlockDevice':
      return kind === 'block' ? { ok: true } : fail('a block device');
    default:
      return { ok: false, message: `${type} is an invalid volume type` };
  }
}

/** The pod's memory limit as its cgroup gets it (ResourceConfigForPod), undefined when a container has none. */
function podMemoryLimit(pod: Pod): number | undefined {
  const limit = (c: Container) => (c.resources?.limits?.['memory'] !== undefined ? memoryBytes(String(c.resources.limits['memory'])) : undefined);
  let sum = 0;
  for (const c of pod.spec.containers) {
    const l = limit(c);
    if (l === undefined) return undefined;
    sum += l;
  }
  for (const c of pod.spec.initContainers ?? []) {
    const l = limit(c);
    if (l === undefined) return undefined;
    sum = Math.max(sum, l);
  }
  return sum;
}

/** emptydir calculateEmptyDirMemorySize: node allocatable memory, lowered to the pod's memory limit and then to the volume's sizeLimit. */
export function emptyDirMemorySize(pod: Pod, v: Volume, nodeAllocatableMemory: number): number {
  let size = nodeAllocatableMemory;
  const pod_ = podMemoryLimit(pod);
  if (pod_ !== undefined && pod_ > 0 && pod_ <= size) size = pod_;
  const sizeLimit = v.emptyDir?.sizeLimit !== undefined ? memoryBytes(String(v.emptyDir.sizeLimit)) : undefined;
  if (sizeLimit !== undefined && sizeLimit > 0 && sizeLimit <= size) size = sizeLimit;
  return size;
}

/** The node's amounts a limit falls back to when a container sets none (MergeContainerResourceLimits). */
export interface NodeAllocatable {
  cpuMillis: number;
  memoryBytes: number;
}

/**
 * containerResourceRuntimeValue over the pod defaulted for the downward API
 * (defaultPodLimitsForDownwardAPI): a container's request or limit divided by
 * the divisor, rounded up; a limit the container does not set is the node's
 * allocatable amount. For downward API volumes and env variables alike.
 */
export function resourceFieldValue(pod: Pod, ref: { containerName?: string; resource: string; divisor?: string | number }, node: NodeAllocatable): string {
  const c = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((x) => x.name === ref.containerName);
  if (!c) throw new Error(`container ${ref.containerName ?? ''} not found`);
  const [section, resource] = ref.resource.split('.') as [string, string];
  const list = section === 'limits' ? c.resources?.limits : c.resources?.requests;
  const raw = list?.[resource];
  const divisor = ref.divisor === undefined || String(ref.divisor) === '0' ? '1' : String(ref.divisor);
  if (resource === 'cpu') {
    const millis = raw !== undefined ? cpuMillis(String(raw)) : section === 'limits' ? node.cpuMillis : 0;
    return String(Math.ceil(millis / cpuMillis(divisor)));
  }
  if (resource === 'memory' || resource === 'ephemeral-storage') {
    const bytes = raw !== undefined ? memoryBytes(String(raw)) : section === 'limits' && resource === 'memory' ? node.memoryBytes : 0;
    return String(Math.ceil(bytes / memoryBytes(divisor)));
  }
  throw new Error(`unsupported container resource : ${ref.resource}`);
}

type DownwardAPIItems = NonNullable<Volume['downwardAPI']>['items'];

/** downwardapi CollectData: the items' files, path to content and mode. Throws on a field it cannot resolve. */
function collectDownwardAPI(pod: Pod, items: DownwardAPIItems, defaultMode: number, node: NodeAllocatable): Map<string, PayloadFile> {
  const files = new Map<string, PayloadFile>();
  for (const item of items ?? []) {
    const mode = item.mode ?? defaultMode;
    if (item.fieldRef) files.set(validatePath(item.path), { content: extractFieldPathAsString(pod, item.fieldRef.fieldPath), mode });
    else if (item.resourceFieldRef) files.set(validatePath(item.path), { content: resourceFieldValue(pod, item.resourceFieldRef, node), mode });
  }
  return files;
}

/** A downwardAPI volume's files, path to content and mode. Throws on a field it cannot resolve. */
export function downwardAPIPayload(pod: Pod, v: Volume, node: NodeAllocatable): Map<string, PayloadFile> {
  return collectDownwardAPI(pod, v.downwardAPI?.items, v.downwardAPI?.defaultMode ?? 0o644, node);
}

/** AtomicWriter validatePath: a payload path stays inside the volume. */
export function validatePath(path: string): string {
  if (path === '') throw new Error(`invalid path: must not be empty: ""`);
  if (path.startsWith('/')) throw new Error(`invalid path: must be relative path: ${path}`);
  if (path.split('/').includes('..')) throw new Error(`invalid path: must not contain '..': ${path}`);
  if (path.startsWith('..')) throw new Error(`invalid path: must not start with '..': ${path}`);
  return path;
}

/** A configMap's or secret's `items`: which keys go to which paths, with which mode. */
export type KeyToPath = { key: string; path: string; mode?: number };

/** An object that is optional and missing: an empty one (upstream makes an empty ConfigMap/Secret). */
const EMPTY_OBJECT: ApiObjectPayload = { data: {}, binaryData: {} };

/**
 * configmap.MakePayload and secret.MakePayload: every key (data and
 * binaryData) at its own name with defaultMode, or only the `items` at their
 * paths; an item whose key is missing is an error unless the source is
 * optional. A secret's data is base64 (as the API gives it); so is a
 * configMap's binaryData.
 */
export function makeObjectPayload(kind: 'ConfigMap' | 'Secret', items: KeyToPath[] | undefined, obj: ApiObjectPayload, defaultMode: number, optional: boolean): Map<string, PayloadFile> {
  const content = (key: string): string | Uint8Array | undefined => {
    if (kind === 'Secret') return obj.data[key] !== undefined ? Buffer.from(obj.data[key], 'base64') : undefined;
    if (obj.data[key] !== undefined) return obj.data[key];
    return obj.binaryData[key] !== undefined ? Buffer.from(obj.binaryData[key], 'base64') : undefined;
  };
  const files = new Map<string, PayloadFile>();
  if (!items || items.length === 0) {
    for (const key of [...Object.keys(obj.data), ...(kind === 'ConfigMap' ? Object.keys(obj.binaryData) : [])]) {
      files.set(validatePath(key), { content: content(key) ?? '', mode: defaultMode });
    }
    return files;
  }
  for (const item of items) {
    const c = content(item.key);
    if (c === undefined) {
      if (optional) continue;
      throw new Error(kind === 'ConfigMap' ? `configmap references non-existent config key: ${item.key}` : `references non-existent secret key: ${item.key}`);
    }
    files.set(validatePath(item.path), { content: c, mode: item.mode ?? defaultMode });
  }
  return files;
}

/**
 * The volume manager of one node: mountPod is WaitForAttachAndMount (every
 * volume set up, or a VolumeMountError naming each that is not),
 * unmountPod is SyncTerminatedPod's teardown and the pod dir's removal.
 */
export class VolumeManager {
  constructor(
    private readonly host: VolumeHost,
    private readonly podRoot: string,
    private readonly node: NodeAllocatable,
    /** The apiserver's configMaps and secrets (through config-source); none: those volumes fail to mount. */
    private readonly objects?: ApiObjects,
    /** Projected serviceAccountToken sources' tokens (through config-source); none: such a volume fails to mount. */
    private readonly tokens?: ServiceAccountTokens,
  ) {}

  /**
   * Sets up every volume of the pod; throws a VolumeMountError naming those
   * that cannot be. A configMap, secret or projected volume set up before
   * (its `..data` is there) whose refresh fails keeps its last content and
   * does not hold the pod back (upstream's remount is the reconciler's, apart
   * from syncPod): it is returned, for a FailedMount event.
   */
  async mountPod(pod: Pod): Promise<VolumeFailure[]> {
    const failures: VolumeFailure[] = [];
    const remountFailures: VolumeFailure[] = [];
    let mounts: Set<string> | undefined;
    /** A tmpfs at `path` unless one is there (the wrapped emptyDir with medium: Memory of secret and projected volumes). */
    const ensureTmpfs = async (path: string, sizeBytes: number) => {
      mounts ??= new Set(await this.host.mountPoints());
      if (!mounts.has(path)) await this.host.mountTmpfs(path, sizeBytes);
    };
    const memoryVolumeSize = (v: Volume) => emptyDirMemorySize(pod, { name: v.name, emptyDir: { medium: 'Memory' } }, this.node.memoryBytes);
    // The pod's fsGroup: its volumes' files are the group's (SetVolumeOwnership), as upstream sets it: when the
    // writer wrote a new payload (AtomicWriter's setPerms), and on an emptyDir when it is made; never on every sync.
    const fsGroup = pod.spec.securityContext?.fsGroup ?? undefined;
    const writePayload = async (path: string, files: Map<string, PayloadFile>) => {
      const wrote = await this.host.writeAtomic(path, withFsGroupModes(files, fsGroup));
      if (wrote && fsGroup !== undefined) await this.host.setOwnership(path, fsGroup, true);
    };
    for (const v of pod.spec.volumes ?? []) {
      try {
        const kind = volumeKind(v);
        const path = volumeHostPath(pod, v, this.podRoot);
        if (path === undefined) throw new Error(`volume type ${kind} is not supported on this node`);
        switch (kind) {
          case 'hostPath': {
            const check = checkHostPathType(v.hostPath?.type, path, await this.host.fileKind(path));
            if (!check.ok) throw new Error(check.message);
            if (check.create === 'directory') await this.host.mkdir(path, 0o755);
            if (check.create === 'file') await this.host.createFile(path, 0o644);
            break;
          }
          case 'emptyDir': {
            const made = (await this.host.fileKind(path)) === 'missing';
            await this.host.mkdir(path, 0o777);
            if (v.emptyDir?.medium === 'Memory') await ensureTmpfs(path, emptyDirMemorySize(pod, v, this.node.memoryBytes));
            if (made && fsGroup !== undefined) await this.host.setOwnership(path, fsGroup, false);
            break;
          }
          case 'downwardAPI':
            await this.host.mkdir(path, 0o777);
            await writePayload(path, downwardAPIPayload(pod, v, this.node));
            break;
          case 'configMap': {
            const src = v.configMap ?? {};
            const optional = src.optional === true;
            const files = makeObjectPayload('ConfigMap', src.items, await this.object('ConfigMap', pod, src.name ?? '', optional), src.defaultMode ?? 0o644, optional);
            await this.host.mkdir(path, 0o777);
            await writePayload(path, files);
            break;
          }
          case 'secret': {
            const src = v.secret ?? {};
            const optional = src.optional === true;
            const files = makeObjectPayload('Secret', src.items, await this.object('Secret', pod, src.secretName ?? '', optional), src.defaultMode ?? 0o644, optional);
            await this.host.mkdir(path, 0o777);
            await ensureTmpfs(path, memoryVolumeSize(v));
            await writePayload(path, files);
            break;
          }
          case 'projected': {
            const files = await this.projectedPayload(pod, v);
            await this.host.mkdir(path, 0o777);
            await ensureTmpfs(path, memoryVolumeSize(v));
            await writePayload(path, files);
            break;
          }
        }
      } catch (err) {
        const failure = { volume: v.name, message: `MountVolume.SetUp failed for volume "${v.name}" : ${err instanceof Error ? err.message : String(err)}` };
        const path = volumeHostPath(pod, v, this.podRoot);
        const refreshed = REFRESHED_KINDS.has(volumeKind(v)) && path !== undefined && (await this.host.fileKind(join(path, '..data')).catch(() => 'missing')) === 'directory';
        (refreshed ? remountFailures : failures).push(failure);
      }
    }
    if (failures.length > 0) throw new VolumeMountError(failures);
    return remountFailures;
  }

  /** An object a volume needs: a missing one is `configmap "x" not found`, unless optional (then an empty one). */
  private async object(kind: 'ConfigMap' | 'Secret', pod: Pod, name: string, optional: boolean): Promise<ApiObjectPayload> {
    if (!this.objects) throw new Error(`${apiObjectResource(kind)} "${name}": this pod worker has no source of apiserver objects`);
    const obj = await this.objects.get(kind, pod.metadata.namespace ?? 'default', name);
    if (obj) return obj;
    if (optional) return EMPTY_OBJECT;
    throw new Error(`${apiObjectResource(kind)} "${name}" not found`);
  }

  /**
   * projected collectData: each source's files in one payload (a later
   * source's path wins); every source's failure is collected, and any
   * failure fails the volume (upstream's aggregate: one error as it is,
   * several as `[a, b]`).
   */
  private async projectedPayload(pod: Pod, v: Volume): Promise<Map<string, PayloadFile>> {
    const defaultMode = v.projected?.defaultMode ?? 0o644;
    const files = new Map<string, PayloadFile>();
    const errors: string[] = [];
    for (const source of v.projected?.sources ?? []) {
      try {
        let part: Map<string, PayloadFile>;
        if (source.secret) {
          const optional = source.secret.optional === true;
          part = makeObjectPayload('Secret', source.secret.items, await this.object('Secret', pod, source.secret.name ?? '', optional), defaultMode, optional);
        } else if (source.configMap) {
          const optional = source.configMap.optional === true;
          part = makeObjectPayload('ConfigMap', source.configMap.items, await this.object('ConfigMap', pod, source.configMap.name ?? '', optional), defaultMode, optional);
        } else if (source.downwardAPI) {
          part = collectDownwardAPI(pod, source.downwardAPI.items, defaultMode, this.node);
        } else if (source.serviceAccountToken) {
          const tp = source.serviceAccountToken;
          if (!this.tokens) throw new Error(`serviceAccountToken projection (path ${tp.path}) is not supported by this pod worker: it has no source of tokens`);
          // The API defaults expirationSeconds to 3600; under an fsGroup (or a runAsUser: upstream's fsUser, not applied here) the token is 0600 before the group's share.
          const tokenMode = pod.spec.securityContext?.fsGroup !== undefined ? 0o600 : defaultMode;
          part = new Map([[validatePath(tp.path), { content: await this.tokens.get(pod, tp.audience, tp.expirationSeconds ?? 3600), mode: tokenMode }]]);
        } else {
          const kind = Object.keys(source)[0] ?? 'an empty source';
          throw new Error(`projected source ${kind} is not supported on this node`);
        }
        for (const [path, f] of part) files.set(path, f);
      } catch (err) {
        errors.push(err instanceof Error ? err.message : String(err));
      }
    }
    if (errors.length === 1) throw new Error(errors[0]);
    if (errors.length > 1) throw new Error(`[${errors.join(', ')}]`);
    return files;
  }

  /** Unmounts everything under the pod's directory, deepest first, then removes it; a mount that stays makes it throw (retried). */
  async unmountPod(pod: Pod): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    if (!uid) return;
    const dir = podDir(pod, this.podRoot);
    const under = (mounts: string[]) => mounts.filter((m) => m.startsWith(`${dir}/`)).sort((a, b) => b.length - a.length);
    for (const m of under(await this.host.mountPoints())) await this.host.unmount(m);
    const left = under(await this.host.mountPoints());
    if (left.length > 0) throw new Error(`pod ${uid}: still mounted under its directory: ${left.join(', ')}`);
    await this.host.removeAll(dir);
  }
}
