/**
 * The API server's defaults for a core/v1 Pod (pkg/apis/core/v1/defaults.go
 * and the generated declarative defaults), which the kubelet's decoder
 * applies to every static pod before validating it. A field is "unset" as
 * Go sees it: absent, null, "" for a string, 0 for a probe's numbers.
 *
 * The input is data read from a file or a URL, typed as a Pod but not
 * trusted to be one, so every step looks before it steps: a container that
 * is not an object is left for validation to refuse.
 */
import { isRecord, type Pod } from '@app/contracts';

/** Every VolumeSource field of core/v1: a volume with none of them becomes an emptyDir. */
export const VOLUME_SOURCE_FIELDS = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi',
  'glusterfs', 'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI',
  'fc', 'azureFile', 'configMap', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk',
  'projected', 'portworxVolume', 'scaleIO', 'storageos', 'csi', 'ephemeral', 'image',
] as const;

/** `0644`, the mode of files projected from secrets, config maps and the downward API. */
const DEFAULT_PROJECTION_MODE = 0o644;

/**
 * A new pod with the API server's defaults applied; the input is never
 * changed. metadata.namespace is left as it is: the static pod step
 * (makeStaticPod) chooses it, the API server takes it from the request.
 */
export function applyPodDefaults(pod: Pod): Pod {
  const out = structuredClone(pod) as unknown as Record<string, unknown>;
  if (!isRecord(out['metadata'])) out['metadata'] = {};
  if (!isRecord(out['spec'])) out['spec'] = {};
  const spec = out['spec'] as Record<string, unknown>;
  if (spec['containers'] === undefined || spec['containers'] === null) spec['containers'] = [];

  // SetDefaults_PodSpec
  setIfUnsetString(spec, 'dnsPolicy', 'ClusterFirst');
  setIfUnsetString(spec, 'restartPolicy', 'Always');
  if (spec['securityContext'] === undefined || spec['securityContext'] === null) spec['securityContext'] = {};
  if (spec['terminationGracePeriodSeconds'] === undefined || spec['terminationGracePeriodSeconds'] === null) {
    spec['terminationGracePeriodSeconds'] = 30;
  }
  setIfUnsetString(spec, 'schedulerName', 'default-scheduler');
  // SetDefaults_Pod
  if (spec['enableServiceLinks'] === undefined || spec['enableServiceLinks'] === null) spec['enableServiceLinks'] = true;

  const hostNetwork = spec['hostNetwork'] === true;
  for (const list of [spec['initContainers'], spec['containers']]) {
    for (const container of records(list)) defaultContainer(container, hostNetwork);
  }
  for (const volume of records(spec['volumes'])) defaultVolume(volume);
  return out as unknown as Pod;
}

/**
 * The pull policy the API server gives a container without one:
 * "Always" for an image whose tag is `latest` or that has neither tag nor
 * digest (so the tag is implied `latest`), "IfNotPresent" otherwise,
 * including an image reference that cannot be parsed (validation refuses
 * those that matter, such as an empty image).
 */
export function defaultImagePullPolicy(image: string | undefined): 'Always' | 'IfNotPresent' {
  const ref = image === undefined ? undefined : parseImageReference(image);
  if (ref === undefined) return 'IfNotPresent';
  if (ref.tag === undefined) return ref.digest === undefined ? 'Always' : 'IfNotPresent';
  return ref.tag === 'latest' ? 'Always' : 'IfNotPresent';
}

// The distribution/reference grammar, reduced to what tells a tag from a
// registry port: `localhost:5000/busybox` names a registry port, not a tag.
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const IMAGE_REFERENCE = new RegExp(
  `^((?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)` +
    '(?::([\\w][\\w.-]{0,127}))?' +
    '(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$',
);

/** An image reference's parts, or undefined when it is not a valid reference. */
export function parseImageReference(image: string): { name: string; tag?: string; digest?: string } | undefined {
  const m = IMAGE_REFERENCE.exec(image);
  const name = m?.[1];
  if (m === null || name === undefined || name.length > 255) return undefined;
  return { name, ...(m[2] !== undefined ? { tag: m[2] } : {}), ...(m[3] !== undefined ? { digest: m[3] } : {}) };
}

function defaultContainer(c: Record<string, unknown>, hostNetwork: boolean): void {
  // SetDefaults_Container
  if (isUnsetString(c['imagePullPolicy'])) c['imagePullPolicy'] = defaultImagePullPolicy(typeof c['image'] === 'string' ? c['image'] : undefined);
  setIfUnsetString(c, 'terminationMessagePath', '/dev/termination-log');
  setIfUnsetString(c, 'terminationMessagePolicy', 'File');

  for (const port of records(c['ports'])) {
    setIfUnsetString(port, 'protocol', 'TCP'); // SetDefaults_ContainerPort
    // defaultHostNetworkPorts: with the host's network, the container's port is the host's.
    if (hostNetwork && (port['hostPort'] === undefined || port['hostPort'] === null || port['hostPort'] === 0)) {
      port['hostPort'] = port['containerPort'];
    }
  }

  // SetDefaults_Pod: a resource with a limit and no request is requested at its limit.
  const resources = c['resources'];
  if (isRecord(resources) && isRecord(resources['limits'])) {
    const requests = isRecord(resources['requests']) ? resources['requests'] : {};
    for (const [name, limit] of Object.entries(resources['limits'])) if (!Object.hasOwn(requests, name)) requests[name] = limit;
    resources['requests'] = requests;
  }

  for (const env of records(c['env'])) {
    const valueFrom = env['valueFrom'];
    if (isRecord(valueFrom) && isRecord(valueFrom['fieldRef'])) setIfUnsetString(valueFrom['fieldRef'], 'apiVersion', 'v1'); // SetDefaults_ObjectFieldSelector
  }

  for (const key of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
    const probe = c[key];
    if (isRecord(probe)) defaultProbe(probe);
  }
  const lifecycle = c['lifecycle'];
  if (isRecord(lifecycle)) {
    for (const key of ['postStart', 'preStop'] as const) {
      const handler = lifecycle[key];
      if (isRecord(handler) && isRecord(handler['httpGet'])) defaultHTTPGet(handler['httpGet']);
    }
  }
}

function defaultProbe(probe: Record<string, unknown>): void {
  // SetDefaults_Probe: Go's zero means "not set", so 0 is defaulted as well.
  setIfUnsetNumber(probe, 'timeoutSeconds', 1);
  setIfUnsetNumber(probe, 'periodSeconds', 10);
  setIfUnsetNumber(probe, 'successThreshold', 1);
  setIfUnsetNumber(probe, 'failureThreshold', 3);
  if (isRecord(probe['httpGet'])) defaultHTTPGet(probe['httpGet']);
  const grpc = probe['grpc'];
  if (isRecord(grpc) && (grpc['service'] === undefined || grpc['service'] === null)) grpc['service'] = '';
}

/** SetDefaults_HTTPGetAction */
function defaultHTTPGet(action: Record<string, unknown>): void {
  setIfUnsetString(action, 'path', '/');
  setIfUnsetString(action, 'scheme', 'HTTP');
}

function defaultVolume(volume: Record<string, unknown>): void {
  // SetDefaults_Volume
  if (VOLUME_SOURCE_FIELDS.every((f) => volume[f] === undefined || volume[f] === null)) volume['emptyDir'] = {};
  const hostPath = volume['hostPath'];
  if (isRecord(hostPath) && (hostPath['type'] === undefined || hostPath['type'] === null)) hostPath['type'] = ''; // HostPathUnset
  for (const key of ['secret', 'configMap', 'downwardAPI', 'projected'] as const) {
    const source = volume[key];
    if (isRecord(source) && (source['defaultMode'] === undefined || source['defaultMode'] === null)) source['defaultMode'] = DEFAULT_PROJECTION_MODE;
  }
}

/** The object elements of a list (anything else is validation's business). */
function records(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.filter(isRecord) : [];
}

function isUnsetString(v: unknown): boolean {
  return v === undefined || v === null || v === '';
}

function setIfUnsetString(o: Record<string, unknown>, key: string, value: string): void {
  if (isUnsetString(o[key])) o[key] = value;
}

function setIfUnsetNumber(o: Record<string, unknown>, key: string, value: number): void {
  const v = o[key];
  if (v === undefined || v === null || v === 0) o[key] = value;
}
