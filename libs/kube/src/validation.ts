/**
 * The API server's validation of a Pod (pkg/apis/core/validation
 * ValidatePodCreate), reduced to the fields this project's slice carries,
 * and run by the kubelet on every static pod after defaulting. An error
 * names its field as upstream does (`spec.containers[1].livenessProbe.periodSeconds`)
 * and reads as upstream's field.Error body (`Required value`,
 * `Invalid value: 0: must be between 1 and 65535, inclusive`, ...).
 *
 * The pod comes from a file or a URL: it is typed as a Pod but nothing in it
 * is trusted, so a wrong type is a field error too, never an exception.
 */
import { isIP } from 'node:net';
import { isRecord, type Pod } from '@app/contracts';
import { VOLUME_SOURCE_FIELDS } from './defaults.js';

export interface FieldError {
  /** The field's path, e.g. `spec.containers[0].ports[1].containerPort`. */
  field: string;
  /** What is wrong with it, e.g. `Duplicate value: "app"`. */
  message: string;
}

/** `spec.containers[0].name: Required value; metadata.name: ...` on one line. */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  return errors.map((e) => `${e.field}: ${e.message}`).join('; ');
}

/**
 * Every problem with a (defaulted) pod; an empty list means the pod is valid.
 * Beyond upstream: a probe's or lifecycle handler's named port must be one of
 * its container's ports (upstream finds that out only when the probe runs),
 * a volume's mountPath must be absolute, and a probe's period, timeout and
 * thresholds must be at least 1 (true of every defaulted pod).
 */
export function validatePod(pod: Pod): FieldError[] {
  const errs: FieldError[] = [];
  const raw = pod as unknown;
  if (!isRecord(raw)) return [required('', 'a pod must be an object')];
  validateMetadata(raw['metadata'], 'metadata', errs);
  const spec = raw['spec'];
  if (!isRecord(spec)) {
    errs.push(required('spec', ''));
    return errs;
  }
  validatePodSpec(spec, 'spec', errs);
  return errs;
}

// ---------------------------------------------------------------------------
// field.Error bodies

function required(field: string, detail: string): FieldError {
  return { field, message: detail === '' ? 'Required value' : `Required value: ${detail}` };
}
function invalid(field: string, value: unknown, detail: string): FieldError {
  return { field, message: `Invalid value: ${showValue(value)}: ${detail}` };
}
function duplicate(field: string, value: unknown): FieldError {
  return { field, message: `Duplicate value: ${showValue(value)}` };
}
function notSupported(field: string, value: unknown, valid: readonly string[]): FieldError {
  return { field, message: `Unsupported value: ${showValue(value)}: supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` };
}
function forbidden(field: string, detail: string): FieldError {
  return { field, message: `Forbidden: ${detail}` };
}
function notFound(field: string, value: unknown): FieldError {
  return { field, message: `Not found: ${showValue(value)}` };
}

function showValue(v: unknown): string {
  if (v === undefined) return 'null';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null) return JSON.stringify(v);
  return JSON.stringify(v).slice(0, 80);
}

// ---------------------------------------------------------------------------
// names (k8s.io/apimachinery/pkg/util/validation)

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const PORT_NAME_CHARSET = /^[-a-z0-9]+$/;
const HTTP_HEADER_NAME = /^[-A-Za-z0-9]+$/;

const DNS1123_LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const maxLen = (n: number) => `must be no more than ${n} characters`;

/** IsDNS1123Label: at most 63 characters, lowercase alphanumerics and '-'. */
export function isDNS1123Label(value: string): string[] {
  const msgs: string[] = [];
  if (value.length > 63) msgs.push(maxLen(63));
  if (!DNS1123_LABEL.test(value)) msgs.push(DNS1123_LABEL_MESSAGE);
  return msgs;
}

/** IsDNS1123Subdomain: at most 253 characters, dot-separated DNS labels. */
export function isDNS1123Subdomain(value: string): string[] {
  const msgs: string[] = [];
  if (value.length > 253) msgs.push(maxLen(253));
  if (!DNS1123_SUBDOMAIN.test(value)) msgs.push(DNS1123_SUBDOMAIN_MESSAGE);
  return msgs;
}

/** IsValidPortName: an IANA_SVC_NAME (RFC 6335). */
export function isValidPortName(port: string): string[] {
  const msgs: string[] = [];
  if (port.length > 15) msgs.push(maxLen(15));
  if (!PORT_NAME_CHARSET.test(port)) msgs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) msgs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) msgs.push('must not contain consecutive hyphens');
  if (port.startsWith('-') || port.endsWith('-')) msgs.push('must not begin or end with a hyphen');
  return msgs;
}

/** IsValidPortNum */
function isValidPortNum(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : ['must be between 1 and 65535, inclusive'];
}

/** IsQualifiedName: `[prefix/]name`, the form of label and annotation keys. */
function isQualifiedName(value: string): string[] {
  const parts = value.split('/');
  let name: string;
  const msgs: string[] = [];
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix === '') msgs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) msgs.push(`prefix part ${m}`);
  } else {
    return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"];
  }
  if (name === '') msgs.push('name part must be non-empty');
  else if (name.length > 63) msgs.push(`name part ${maxLen(63)}`);
  if (name !== '' && !QUALIFIED_NAME_PART.test(name)) {
    msgs.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  }
  return msgs;
}

/** IsValidLabelValue */
function isValidLabelValue(value: string): string[] {
  const msgs: string[] = [];
  if (value.length > 63) msgs.push(maxLen(63));
  if (!LABEL_VALUE.test(value)) {
    msgs.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return msgs;
}

// ---------------------------------------------------------------------------
// metadata (ValidateObjectMeta with ValidatePodName)

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

function validateMetadata(meta: unknown, path: string, errs: FieldError[]): void {
  if (!isRecord(meta)) {
    errs.push(required(path, ''));
    return;
  }
  const name = meta['name'];
  if (name === undefined || name === null || name === '') errs.push(required(`${path}.name`, 'name or generateName is required'));
  else if (typeof name !== 'string') errs.push(invalid(`${path}.name`, name, 'must be a string'));
  else for (const m of isDNS1123Subdomain(name)) errs.push(invalid(`${path}.name`, name, m));

  const namespace = meta['namespace'];
  if (namespace !== undefined && namespace !== null && namespace !== '') {
    if (typeof namespace !== 'string') errs.push(invalid(`${path}.namespace`, namespace, 'must be a string'));
    else for (const m of isDNS1123Label(namespace)) errs.push(invalid(`${path}.namespace`, namespace, m));
  }
  validateLabels(meta['labels'], `${path}.labels`, errs);

  const annotations = meta['annotations'];
  if (annotations !== undefined && annotations !== null) {
    if (!isRecord(annotations)) errs.push(invalid(`${path}.annotations`, annotations, 'must be a map of string keys to string values'));
    else {
      let size = 0;
      for (const [k, v] of Object.entries(annotations)) {
        for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(`${path}.annotations`, k, m));
        if (typeof v !== 'string') errs.push(invalid(`${path}.annotations[${k}]`, v, 'must be a string'));
        else size += k.length + v.length;
      }
      if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push({ field: `${path}.annotations`, message: `Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes` });
    }
  }
}

/** ValidateLabels: qualified-name keys and label values (also for nodeSelector). */
function validateLabels(labels: unknown, path: string, errs: FieldError[]): void {
  if (labels === undefined || labels === null) return;
  if (!isRecord(labels)) {
    errs.push(invalid(path, labels, 'must be a map of string keys to string values'));
    return;
  }
  for (const [k, v] of Object.entries(labels)) {
    for (const m of isQualifiedName(k)) errs.push(invalid(path, k, m));
    if (typeof v !== 'string') errs.push(invalid(`${path}[${k}]`, v, 'must be a string'));
    else for (const m of isValidLabelValue(v)) errs.push(invalid(path, v, m));
  }
}

// ---------------------------------------------------------------------------
// spec (ValidatePodSpec)

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const;
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'] as const;
const MAX_DNS_NAMESERVERS = 3;
const MAX_DNS_SEARCH_PATHS = 32;
const MAX_INT32 = 2147483647;

function validatePodSpec(spec: Record<string, unknown>, path: string, errs: FieldError[]): void {
  const volumes = validateVolumes(spec['volumes'], `${path}.volumes`, errs);
  const gracePeriod = typeof spec['terminationGracePeriodSeconds'] === 'number' ? spec['terminationGracePeriodSeconds'] : undefined;
  const hostNetwork = spec['hostNetwork'] === true;

  // Regular containers first, so a name clash is reported on the init container (as upstream).
  const names = new Set<string>();
  const containers = spec['containers'];
  if (!Array.isArray(containers) || containers.length === 0) {
    if (containers !== undefined && containers !== null && !Array.isArray(containers)) errs.push(invalid(`${path}.containers`, containers, 'must be a list'));
    else errs.push(required(`${path}.containers`, ''));
  } else {
    const hostPorts = new Set<string>();
    for (const [i, c] of containers.entries()) {
      validateContainer(c, `${path}.containers[${i}]`, { kind: 'container', names, volumes, gracePeriod, hostNetwork, hostPorts }, errs);
    }
  }
  const initContainers = spec['initContainers'];
  if (initContainers !== undefined && initContainers !== null) {
    if (!Array.isArray(initContainers)) errs.push(invalid(`${path}.initContainers`, initContainers, 'must be a list'));
    else {
      const hostPorts = new Set<string>();
      for (const [i, c] of initContainers.entries()) {
        validateContainer(c, `${path}.initContainers[${i}]`, { kind: 'init', names, volumes, gracePeriod, hostNetwork, hostPorts }, errs);
      }
    }
  }

  const restartPolicy = spec['restartPolicy'];
  if (restartPolicy === undefined || restartPolicy === null || restartPolicy === '') errs.push(required(`${path}.restartPolicy`, ''));
  else if (!(RESTART_POLICIES as readonly unknown[]).includes(restartPolicy)) errs.push(notSupported(`${path}.restartPolicy`, restartPolicy, RESTART_POLICIES));

  validateDNS(spec, path, errs);
  validateLabels(spec['nodeSelector'], `${path}.nodeSelector`, errs);

  for (const key of ['hostname', 'subdomain'] as const) {
    const v = spec[key];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') errs.push(invalid(`${path}.${key}`, v, 'must be a string'));
    else for (const m of isDNS1123Label(v)) errs.push(invalid(`${path}.${key}`, v, m));
  }

  const tgp = spec['terminationGracePeriodSeconds'];
  if (tgp !== undefined && tgp !== null) checkInteger(tgp, `${path}.terminationGracePeriodSeconds`, 0, errs);
  const ads = spec['activeDeadlineSeconds'];
  if (ads !== undefined && ads !== null) {
    if (!Number.isInteger(ads)) errs.push(invalid(`${path}.activeDeadlineSeconds`, ads, 'must be an integer'));
    else if ((ads as number) < 1 || (ads as number) > MAX_INT32) errs.push(invalid(`${path}.activeDeadlineSeconds`, ads, `must be between 1 and ${MAX_INT32}, inclusive`));
  }
  validateTolerations(spec['tolerations'], `${path}.tolerations`, errs);
}

function validateDNS(spec: Record<string, unknown>, path: string, errs: FieldError[]): void {
  const dnsPolicy = spec['dnsPolicy'];
  if (dnsPolicy === undefined || dnsPolicy === null || dnsPolicy === '') errs.push(required(`${path}.dnsPolicy`, ''));
  else if (!(DNS_POLICIES as readonly unknown[]).includes(dnsPolicy)) errs.push(notSupported(`${path}.dnsPolicy`, dnsPolicy, DNS_POLICIES));

  const dnsConfig = spec['dnsConfig'];
  const cfgPath = `${path}.dnsConfig`;
  if (dnsConfig === undefined || dnsConfig === null) {
    if (dnsPolicy === 'None') errs.push(required(cfgPath, 'must provide `dnsConfig` when `dnsPolicy` is None'));
    return;
  }
  if (!isRecord(dnsConfig)) {
    errs.push(invalid(cfgPath, dnsConfig, 'must be an object'));
    return;
  }
  const nameservers = Array.isArray(dnsConfig['nameservers']) ? dnsConfig['nameservers'] : [];
  if (dnsPolicy === 'None' && nameservers.length === 0) errs.push(required(`${cfgPath}.nameservers`, 'must provide at least one DNS nameserver when `dnsPolicy` is None'));
  if (nameservers.length > MAX_DNS_NAMESERVERS) errs.push(invalid(`${cfgPath}.nameservers`, nameservers, `must not have more than ${MAX_DNS_NAMESERVERS} nameservers`));
  for (const [i, ns] of nameservers.entries()) {
    if (typeof ns !== 'string' || isIP(ns) === 0) errs.push(invalid(`${cfgPath}.nameservers[${i}]`, ns, 'must be a valid IP address'));
  }
  const searches = Array.isArray(dnsConfig['searches']) ? dnsConfig['searches'] : [];
  if (searches.length > MAX_DNS_SEARCH_PATHS) errs.push(invalid(`${cfgPath}.searches`, searches, `must not have more than ${MAX_DNS_SEARCH_PATHS} search paths`));
  for (const [i, s] of searches.entries()) {
    if (typeof s !== 'string') errs.push(invalid(`${cfgPath}.searches[${i}]`, s, 'must be a string'));
    else if (s !== '.') for (const m of isDNS1123Subdomain(s.replace(/\.$/, ''))) errs.push(invalid(`${cfgPath}.searches[${i}]`, s, m));
  }
}

const TOLERATION_OPERATORS = ['Equal', 'Exists'] as const;
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

function validateTolerations(tolerations: unknown, path: string, errs: FieldError[]): void {
  if (tolerations === undefined || tolerations === null) return;
  if (!Array.isArray(tolerations)) {
    errs.push(invalid(path, tolerations, 'must be a list'));
    return;
  }
  for (const [i, t] of tolerations.entries()) {
    const p = `${path}[${i}]`;
    if (!isRecord(t)) {
      errs.push(invalid(p, t, 'must be an object'));
      continue;
    }
    const key = typeof t['key'] === 'string' ? t['key'] : '';
    const operator = typeof t['operator'] === 'string' ? t['operator'] : '';
    const value = typeof t['value'] === 'string' ? t['value'] : '';
    const effect = typeof t['effect'] === 'string' ? t['effect'] : '';
    if (key !== '') for (const m of isQualifiedName(key)) errs.push(invalid(`${p}.key`, key, m));
    if (key === '' && operator !== 'Exists') {
      errs.push(invalid(`${p}.operator`, operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (t['tolerationSeconds'] !== undefined && t['tolerationSeconds'] !== null && effect !== 'NoExecute') {
      errs.push(invalid(`${p}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (operator === '' || operator === 'Equal') {
      for (const m of isValidLabelValue(value)) errs.push(invalid(`${p}.value`, value, m));
    } else if (operator === 'Exists') {
      if (value !== '') errs.push(invalid(`${p}.value`, value, "value must be empty when `operator` is 'Exists'"));
    } else {
      errs.push(notSupported(`${p}.operator`, operator, TOLERATION_OPERATORS));
    }
    if (effect !== '' && !(TAINT_EFFECTS as readonly string[]).includes(effect)) errs.push(notSupported(`${p}.effect`, effect, TAINT_EFFECTS));
  }
}

// ---------------------------------------------------------------------------
// volumes (ValidateVolumes)

const HOST_PATH_TYPES = ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'] as const;

/** The names of the declared volumes (valid or not, so mounts are not blamed twice). */
function validateVolumes(volumes: unknown, path: string, errs: FieldError[]): Set<string> {
  const names = new Set<string>();
  if (volumes === undefined || volumes === null) return names;
  if (!Array.isArray(volumes)) {
    errs.push(invalid(path, volumes, 'must be a list'));
    return names;
  }
  for (const [i, v] of volumes.entries()) {
    const p = `${path}[${i}]`;
    if (!isRecord(v)) {
      errs.push(invalid(p, v, 'must be an object'));
      continue;
    }
    const name = v['name'];
    if (name === undefined || name === null || name === '') errs.push(required(`${p}.name`, ''));
    else if (typeof name !== 'string') errs.push(invalid(`${p}.name`, name, 'must be a string'));
    else {
      for (const m of isDNS1123Label(name)) errs.push(invalid(`${p}.name`, name, m));
      if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
      names.add(name);
    }
    const sources = VOLUME_SOURCE_FIELDS.filter((f) => v[f] !== undefined && v[f] !== null);
    if (sources.length === 0) errs.push(required(p, 'must specify a volume type'));
    for (const extra of sources.slice(1)) errs.push(forbidden(`${p}.${extra}`, 'may not specify more than 1 volume type'));
    const hostPath = v['hostPath'];
    if (sources[0] === 'hostPath') validateHostPath(hostPath, `${p}.hostPath`, errs);
  }
  return names;
}

function validateHostPath(hostPath: unknown, path: string, errs: FieldError[]): void {
  if (!isRecord(hostPath)) {
    errs.push(invalid(path, hostPath, 'must be an object'));
    return;
  }
  const hp = hostPath['path'];
  if (hp === undefined || hp === null || hp === '') errs.push(required(`${path}.path`, ''));
  else if (typeof hp !== 'string') errs.push(invalid(`${path}.path`, hp, 'must be a string'));
  else if (hp.split('/').includes('..')) errs.push(invalid(`${path}.path`, hp, "must not contain '..'"));
  const type = hostPath['type'] ?? '';
  if (!(HOST_PATH_TYPES as readonly unknown[]).includes(type)) errs.push(notSupported(`${path}.type`, type, HOST_PATH_TYPES));
}

// ---------------------------------------------------------------------------
// containers (validateContainers, validateInitContainers, validateContainerCommon)

interface ContainerContext {
  kind: 'container' | 'init';
  /** Names of the containers seen so far, across both lists. */
  names: Set<string>;
  volumes: Set<string>;
  gracePeriod: number | undefined;
  hostNetwork: boolean;
  /** `protocol/hostIP/hostPort` of the list's host ports so far. */
  hostPorts: Set<string>;
}

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;

function validateContainer(c: unknown, path: string, ctx: ContainerContext, errs: FieldError[]): void {
  if (!isRecord(c)) {
    errs.push(invalid(path, c, 'must be an object'));
    return;
  }
  const name = c['name'];
  const containerName = typeof name === 'string' ? name : '';
  if (name === undefined || name === null || name === '') errs.push(required(`${path}.name`, ''));
  else if (typeof name !== 'string') errs.push(invalid(`${path}.name`, name, 'must be a string'));
  else {
    for (const m of isDNS1123Label(name)) errs.push(invalid(`${path}.name`, name, m));
    if (ctx.names.has(name)) errs.push(duplicate(`${path}.name`, name));
    ctx.names.add(name);
  }

  const image = c['image'];
  if (image === undefined || image === null || image === '') errs.push(required(`${path}.image`, ''));
  else if (typeof image !== 'string') errs.push(invalid(`${path}.image`, image, 'must be a string'));
  else if (image.trim() !== image) errs.push(invalid(`${path}.image`, image, 'must not have leading or trailing whitespace'));

  // Sidecars (restartable init containers) and the lifecycle/probe fields they alone may carry among init containers.
  const restartPolicy = c['restartPolicy'];
  const hasRestartPolicy = restartPolicy !== undefined && restartPolicy !== null;
  let sidecar = false;
  if (ctx.kind === 'init') {
    if (hasRestartPolicy && restartPolicy !== 'Always') errs.push(notSupported(`${path}.restartPolicy`, restartPolicy, ['Always']));
    sidecar = restartPolicy === 'Always';
    if (!sidecar) {
      for (const key of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
        if (c[key] !== undefined && c[key] !== null) errs.push(forbidden(`${path}.${key}`, 'may not be set for init containers without restartPolicy=Always'));
      }
    }
  } else if (hasRestartPolicy) {
    errs.push(forbidden(`${path}.restartPolicy`, 'may not be set for non-init containers'));
  }

  const portNames = validatePorts(c['ports'], `${path}.ports`, ctx, errs);
  validateEnv(c['env'], `${path}.env`, errs);
  validateVolumeMounts(c['volumeMounts'], `${path}.volumeMounts`, ctx.volumes, errs);

  if (ctx.kind === 'container' || sidecar) {
    const probeCtx = { containerName, portNames, gracePeriod: ctx.gracePeriod };
    validateProbe(c['livenessProbe'], `${path}.livenessProbe`, probeCtx, true, errs);
    validateProbe(c['readinessProbe'], `${path}.readinessProbe`, probeCtx, false, errs);
    validateProbe(c['startupProbe'], `${path}.startupProbe`, probeCtx, true, errs);
    validateLifecycle(c['lifecycle'], `${path}.lifecycle`, probeCtx, errs);
  }
}

/** The container's port names (for probes' named ports). */
function validatePorts(ports: unknown, path: string, ctx: ContainerContext, errs: FieldError[]): Set<string> {
  const names = new Set<string>();
  if (ports === undefined || ports === null) return names;
  if (!Array.isArray(ports)) {
    errs.push(invalid(path, ports, 'must be a list'));
    return names;
  }
  for (const [i, port] of ports.entries()) {
    const p = `${path}[${i}]`;
    if (!isRecord(port)) {
      errs.push(invalid(p, port, 'must be an object'));
      continue;
    }
    const name = port['name'];
    if (name !== undefined && name !== null && name !== '') {
      if (typeof name !== 'string') errs.push(invalid(`${p}.name`, name, 'must be a string'));
      else {
        for (const m of isValidPortName(name)) errs.push(invalid(`${p}.name`, name, m));
        if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
        names.add(name);
      }
    }
    const containerPort = port['containerPort'];
    if (containerPort === undefined || containerPort === null || containerPort === 0) errs.push(required(`${p}.containerPort`, ''));
    else checkPortNumber(containerPort, `${p}.containerPort`, errs);
    const hostPort = port['hostPort'];
    const hasHostPort = hostPort !== undefined && hostPort !== null && hostPort !== 0;
    if (hasHostPort) checkPortNumber(hostPort, `${p}.hostPort`, errs);
    const protocol = port['protocol'];
    if (protocol === undefined || protocol === null || protocol === '') errs.push(required(`${p}.protocol`, ''));
    else if (!(PROTOCOLS as readonly unknown[]).includes(protocol)) errs.push(notSupported(`${p}.protocol`, protocol, PROTOCOLS));

    if (ctx.hostNetwork && hostPort !== containerPort) {
      errs.push(invalid(`${p}.containerPort`, containerPort, 'must match `hostPort` when `hostNetwork` is true'));
    }
    if (hasHostPort) {
      const hostIP = typeof port['hostIP'] === 'string' ? port['hostIP'] : '';
      const key = `${typeof protocol === 'string' ? protocol : ''}/${hostIP}/${JSON.stringify(hostPort)}`;
      if (ctx.hostPorts.has(key)) errs.push(duplicate(`${p}.hostPort`, key));
      ctx.hostPorts.add(key);
    }
  }
  return names;
}

function validateEnv(env: unknown, path: string, errs: FieldError[]): void {
  if (env === undefined || env === null) return;
  if (!Array.isArray(env)) {
    errs.push(invalid(path, env, 'must be a list'));
    return;
  }
  for (const [i, e] of env.entries()) {
    const p = `${path}[${i}]`;
    if (!isRecord(e)) {
      errs.push(invalid(p, e, 'must be an object'));
      continue;
    }
    const name = e['name'];
    if (name === undefined || name === null || name === '') errs.push(required(`${p}.name`, ''));
    else if (typeof name !== 'string') errs.push(invalid(`${p}.name`, name, 'must be a string'));
    // RelaxedEnvironmentVariableValidation (on by default since 1.32): any printable ASCII but '='.
    else if (!/^[\x20-\x3c\x3e-\x7e]+$/.test(name)) errs.push(invalid(`${p}.name`, name, "a valid environment variable name must consist only of printable ASCII characters other than '='"));
    const value = e['value'];
    if (value !== undefined && value !== null && typeof value !== 'string') errs.push(invalid(`${p}.value`, value, 'must be a string'));
    const valueFrom = e['valueFrom'];
    if (valueFrom !== undefined && valueFrom !== null) {
      if (typeof value === 'string' && value !== '') errs.push(invalid(`${p}.valueFrom`, '', 'may not be specified when `value` is not empty'));
      if (isRecord(valueFrom) && isRecord(valueFrom['fieldRef'])) {
        const fieldPath = valueFrom['fieldRef']['fieldPath'];
        if (typeof fieldPath !== 'string' || fieldPath === '') errs.push(required(`${p}.valueFrom.fieldRef.fieldPath`, ''));
      }
    }
  }
}

function validateVolumeMounts(mounts: unknown, path: string, volumes: Set<string>, errs: FieldError[]): void {
  if (mounts === undefined || mounts === null) return;
  if (!Array.isArray(mounts)) {
    errs.push(invalid(path, mounts, 'must be a list'));
    return;
  }
  const mountPaths = new Set<string>();
  for (const [i, m] of mounts.entries()) {
    const p = `${path}[${i}]`;
    if (!isRecord(m)) {
      errs.push(invalid(p, m, 'must be an object'));
      continue;
    }
    const name = m['name'];
    if (name === undefined || name === null || name === '') errs.push(required(`${p}.name`, ''));
    else if (typeof name !== 'string' || !volumes.has(name)) errs.push(notFound(`${p}.name`, name));
    const mountPath = m['mountPath'];
    if (mountPath === undefined || mountPath === null || mountPath === '') errs.push(required(`${p}.mountPath`, ''));
    else if (typeof mountPath !== 'string') errs.push(invalid(`${p}.mountPath`, mountPath, 'must be a string'));
    else {
      // Upstream leaves this to the runtime (a Windows node takes C:\ paths); a Linux node needs an absolute path.
      if (!mountPath.startsWith('/')) errs.push(invalid(`${p}.mountPath`, mountPath, 'must be an absolute path'));
      if (mountPaths.has(mountPath)) errs.push(invalid(`${p}.mountPath`, mountPath, 'must be unique'));
      mountPaths.add(mountPath);
    }
    const subPath = m['subPath'];
    if (typeof subPath === 'string' && subPath !== '') {
      if (subPath.startsWith('/')) errs.push(invalid(`${p}.subPath`, subPath, 'must be a relative path'));
      if (subPath.split('/').includes('..')) errs.push(invalid(`${p}.subPath`, subPath, "must not contain '..'"));
    }
  }
}

// ---------------------------------------------------------------------------
// probes and lifecycle handlers (validateProbe, validateHandler, validateLifecycle)

interface HandlerContext {
  containerName: string;
  portNames: Set<string>;
  gracePeriod: number | undefined;
}

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;
const LIFECYCLE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'sleep'] as const;

function validateProbe(probe: unknown, path: string, ctx: HandlerContext, successMustBeOne: boolean, errs: FieldError[]): void {
  if (probe === undefined || probe === null) return;
  if (!isRecord(probe)) {
    errs.push(invalid(path, probe, 'must be an object'));
    return;
  }
  validateHandler(probe, path, PROBE_HANDLERS, ctx, errs);
  checkInteger(probe['initialDelaySeconds'], `${path}.initialDelaySeconds`, 0, errs);
  // Defaulting turns 0 (Go's "unset") into 1, 10, 1 and 3, so a defaulted pod never has 0 here.
  for (const key of ['timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'] as const) {
    checkInteger(probe[key], `${path}.${key}`, 1, errs);
  }
  const success = probe['successThreshold'];
  if (successMustBeOne && Number.isInteger(success) && success !== 1) errs.push(invalid(`${path}.successThreshold`, success, 'must be 1'));
  const tgp = probe['terminationGracePeriodSeconds'];
  if (tgp !== undefined && tgp !== null) {
    if (!Number.isInteger(tgp)) errs.push(invalid(`${path}.terminationGracePeriodSeconds`, tgp, 'must be an integer'));
    else if ((tgp as number) <= 0) errs.push(invalid(`${path}.terminationGracePeriodSeconds`, tgp, 'must be greater than 0'));
  }
}

function validateLifecycle(lifecycle: unknown, path: string, ctx: HandlerContext, errs: FieldError[]): void {
  if (lifecycle === undefined || lifecycle === null) return;
  if (!isRecord(lifecycle)) {
    errs.push(invalid(path, lifecycle, 'must be an object'));
    return;
  }
  for (const hook of ['postStart', 'preStop'] as const) {
    const handler = lifecycle[hook];
    if (handler === undefined || handler === null) continue;
    if (!isRecord(handler)) errs.push(invalid(`${path}.${hook}`, handler, 'must be an object'));
    else validateHandler(handler, `${path}.${hook}`, LIFECYCLE_HANDLERS, ctx, errs);
  }
}

/** Exactly one handler, and that one well formed. */
function validateHandler(
  h: Record<string, unknown>,
  path: string,
  kinds: readonly (typeof PROBE_HANDLERS[number] | typeof LIFECYCLE_HANDLERS[number])[],
  ctx: HandlerContext,
  errs: FieldError[],
): void {
  let handlers = 0;
  for (const kind of kinds) {
    const action = h[kind];
    if (action === undefined || action === null) continue;
    const p = `${path}.${kind}`;
    if (handlers > 0) {
      errs.push(forbidden(p, 'may not specify more than 1 handler type'));
      continue;
    }
    handlers++;
    if (!isRecord(action)) {
      errs.push(invalid(p, action, 'must be an object'));
      continue;
    }
    switch (kind) {
      case 'exec': {
        const command = action['command'];
        if (!Array.isArray(command) || command.length === 0) errs.push(required(`${p}.command`, ''));
        break;
      }
      case 'httpGet':
        validateHTTPGet(action, p, ctx, errs);
        break;
      case 'tcpSocket':
        validateHandlerPort(action['port'], `${p}.port`, ctx, errs);
        break;
      case 'grpc': {
        const port = action['port'];
        if (port === undefined || port === null) errs.push(required(`${p}.port`, ''));
        else if (typeof port !== 'number') errs.push(invalid(`${p}.port`, port, 'must be a port number: gRPC probes do not take named ports'));
        else checkPortNumber(port, `${p}.port`, errs);
        break;
      }
      case 'sleep': {
        const seconds = action['seconds'];
        if (!Number.isInteger(seconds)) errs.push(invalid(`${p}.seconds`, seconds, 'must be an integer'));
        else if ((seconds as number) < 0 || (ctx.gracePeriod !== undefined && (seconds as number) > ctx.gracePeriod)) {
          errs.push(invalid(`${p}.seconds`, seconds, `must be non-negative and less than terminationGracePeriodSeconds (${ctx.gracePeriod ?? 30})`));
        }
        break;
      }
    }
  }
  if (handlers === 0) errs.push(required(path, 'must specify a handler type'));
}

const HTTP_SCHEMES = ['HTTP', 'HTTPS'] as const;

function validateHTTPGet(action: Record<string, unknown>, path: string, ctx: HandlerContext, errs: FieldError[]): void {
  const p = action['path'];
  if (p === undefined || p === null || p === '') errs.push(required(`${path}.path`, ''));
  else if (typeof p !== 'string') errs.push(invalid(`${path}.path`, p, 'must be a string'));
  validateHandlerPort(action['port'], `${path}.port`, ctx, errs);
  const scheme = action['scheme'];
  if (!(HTTP_SCHEMES as readonly unknown[]).includes(scheme)) errs.push(notSupported(`${path}.scheme`, scheme, HTTP_SCHEMES));
  const headers = action['httpHeaders'];
  if (Array.isArray(headers)) {
    for (const [i, header] of headers.entries()) {
      const name = isRecord(header) ? header['name'] : undefined;
      if (typeof name !== 'string' || !HTTP_HEADER_NAME.test(name)) {
        errs.push(invalid(`${path}.httpHeaders[${i}].name`, name, "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')"));
      }
    }
  }
}

/** ValidatePortNumOrName, and a name must be one of the container's own ports. */
function validateHandlerPort(port: unknown, path: string, ctx: HandlerContext, errs: FieldError[]): void {
  if (port === undefined || port === null) {
    errs.push(required(path, ''));
    return;
  }
  if (typeof port === 'number') {
    checkPortNumber(port, path, errs);
    return;
  }
  if (typeof port !== 'string') {
    errs.push(invalid(path, port, 'must be a port number or a port name'));
    return;
  }
  const msgs = isValidPortName(port);
  for (const m of msgs) errs.push(invalid(path, port, m));
  if (msgs.length === 0 && !ctx.portNames.has(port)) {
    errs.push(invalid(path, port, `port name ${JSON.stringify(port)} is not a port of container ${JSON.stringify(ctx.containerName)}`));
  }
}

// ---------------------------------------------------------------------------
// numbers

function checkPortNumber(port: unknown, path: string, errs: FieldError[]): void {
  if (!Number.isInteger(port)) {
    errs.push(invalid(path, port, 'must be an integer'));
    return;
  }
  for (const m of isValidPortNum(port as number)) errs.push(invalid(path, port, m));
}

/** An optional integer field, at least `min` (0: ValidateNonnegativeField). */
function checkInteger(value: unknown, path: string, min: number, errs: FieldError[]): void {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value)) {
    errs.push(invalid(path, value, 'must be an integer'));
    return;
  }
  const n = value as number;
  if (n < 0) errs.push(invalid(path, n, 'must be greater than or equal to 0'));
  else if (n < min) errs.push(invalid(path, n, `must be greater than or equal to ${min}`));
}
