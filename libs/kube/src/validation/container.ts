/**
 * A pod's containers, as pkg/apis/core/validation/validation.go validates
 * them (validateContainers, validateInitContainers, validateContainerCommon):
 * names, images, sidecar restart policies, ports, env and volume mounts; the
 * probes and lifecycle handlers of regular containers and sidecars go to
 * probe.ts.
 */
import { isRecord } from '@app/contracts';
import { checkPortNumber, duplicate, forbidden, forEachObject, invalid, notFound, notSupported, required, requiredString, type FieldError } from './field.js';
import { isDNS1123Label, isValidPortName } from './names.js';
import { validateLifecycle, validateProbe } from './probe.js';

export interface ContainerContext {
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

export function validateContainer(c: unknown, path: string, ctx: ContainerContext, errs: FieldError[]): void {
  if (!isRecord(c)) {
    errs.push(invalid(path, c, 'must be an object'));
    return;
  }
  const name = requiredString(c['name'], `${path}.name`, errs);
  const containerName = typeof c['name'] === 'string' ? c['name'] : '';
  if (name !== undefined) {
    for (const m of isDNS1123Label(name)) errs.push(invalid(`${path}.name`, name, m));
    if (ctx.names.has(name)) errs.push(duplicate(`${path}.name`, name));
    ctx.names.add(name);
  }

  const image = requiredString(c['image'], `${path}.image`, errs);
  if (image !== undefined && image.trim() !== image) errs.push(invalid(`${path}.image`, image, 'must not have leading or trailing whitespace'));

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
  forEachObject(ports, path, errs, (port, p) => {
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
  });
  return names;
}

function validateEnv(env: unknown, path: string, errs: FieldError[]): void {
  forEachObject(env, path, errs, (e, p) => {
    const name = requiredString(e['name'], `${p}.name`, errs);
    // RelaxedEnvironmentVariableValidation (on by default since 1.32): any printable ASCII but '='.
    if (name !== undefined && !/^[\x20-\x3c\x3e-\x7e]+$/.test(name)) errs.push(invalid(`${p}.name`, name, "a valid environment variable name must consist only of printable ASCII characters other than '='"));
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
  });
}

function validateVolumeMounts(mounts: unknown, path: string, volumes: Set<string>, errs: FieldError[]): void {
  const mountPaths = new Set<string>();
  forEachObject(mounts, path, errs, (m, p) => {
    const name = m['name'];
    if (name === undefined || name === null || name === '') errs.push(required(`${p}.name`, ''));
    else if (typeof name !== 'string' || !volumes.has(name)) errs.push(notFound(`${p}.name`, name));
    const mountPath = requiredString(m['mountPath'], `${p}.mountPath`, errs);
    if (mountPath !== undefined) {
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
  });
}
