/**
 * Probes and lifecycle handlers, as pkg/apis/core/validation/validation.go
 * validates them (validateProbe, validateHandler, validateLifecycle): one
 * handler each, well formed, with sane periods and thresholds. Beyond
 * upstream: a named port must be one of the container's own ports (upstream
 * finds that out only when the probe runs), and after defaulting a probe's
 * period, timeout and thresholds must be at least 1.
 */
import { isRecord } from '@app/contracts';
import { checkInteger, checkPortNumber, forbidden, invalid, notSupported, required, requiredString, type FieldError } from './field.js';
import { HTTP_HEADER_NAME, isValidPortName } from './names.js';

export interface HandlerContext {
  containerName: string;
  portNames: Set<string>;
  gracePeriod: number | undefined;
}

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;
const LIFECYCLE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'sleep'] as const;

export function validateProbe(probe: unknown, path: string, ctx: HandlerContext, successMustBeOne: boolean, errs: FieldError[]): void {
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

export function validateLifecycle(lifecycle: unknown, path: string, ctx: HandlerContext, errs: FieldError[]): void {
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
  requiredString(action['path'], `${path}.path`, errs);
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
