/**
 * The API server's validation of a Pod (pkg/apis/core/validation/validation.go
 * ValidatePodCreate -> ValidatePodSpec), reduced to the fields this project's
 * slice carries, and run by the kubelet on every static pod after
 * defaulting: the pod spec, its DNS settings, tolerations and volumes here;
 * metadata in meta.ts, containers in container.ts, probes and lifecycle
 * handlers in probe.ts. An error names its field as upstream does
 * (`spec.containers[1].livenessProbe.periodSeconds`) and reads as upstream's
 * field.Error body (field.ts).
 *
 * The pod comes from a file or a URL: it is typed as a Pod but nothing in it
 * is trusted, so a wrong type is a field error too, never an exception.
 */
import { isIP } from 'node:net';
import { isRecord, type Pod } from '@app/contracts';
import { VOLUME_SOURCE_FIELDS } from '../defaults.js';
import { validateContainer } from './container.js';
import { checkInteger, duplicate, forbidden, forEachObject, invalid, notSupported, required, requiredString, type FieldError } from './field.js';
import { validateLabels, validateMetadata } from './meta.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from './names.js';

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
  forEachObject(tolerations, path, errs, (t, p) => {
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
  });
}

// ---------------------------------------------------------------------------
// volumes (ValidateVolumes)

const HOST_PATH_TYPES = ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'] as const;

/** The names of the declared volumes (valid or not, so mounts are not blamed twice). */
function validateVolumes(volumes: unknown, path: string, errs: FieldError[]): Set<string> {
  const names = new Set<string>();
  forEachObject(volumes, path, errs, (v, p) => {
    const name = requiredString(v['name'], `${p}.name`, errs);
    if (name !== undefined) {
      for (const m of isDNS1123Label(name)) errs.push(invalid(`${p}.name`, name, m));
      if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
      names.add(name);
    }
    const sources = VOLUME_SOURCE_FIELDS.filter((f) => v[f] !== undefined && v[f] !== null);
    if (sources.length === 0) errs.push(required(p, 'must specify a volume type'));
    for (const extra of sources.slice(1)) errs.push(forbidden(`${p}.${extra}`, 'may not specify more than 1 volume type'));
    const hostPath = v['hostPath'];
    if (sources[0] === 'hostPath') validateHostPath(hostPath, `${p}.hostPath`, errs);
  });
  return names;
}

function validateHostPath(hostPath: unknown, path: string, errs: FieldError[]): void {
  if (!isRecord(hostPath)) {
    errs.push(invalid(path, hostPath, 'must be an object'));
    return;
  }
  const hp = requiredString(hostPath['path'], `${path}.path`, errs);
  if (hp !== undefined && hp.split('/').includes('..')) errs.push(invalid(`${path}.path`, hp, "must not contain '..'"));
  const type = hostPath['type'] ?? '';
  if (!(HOST_PATH_TYPES as readonly unknown[]).includes(type)) errs.push(notSupported(`${path}.type`, type, HOST_PATH_TYPES));
}
