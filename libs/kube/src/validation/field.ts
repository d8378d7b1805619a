/**
 * A validation error as k8s.io/apimachinery/pkg/util/validation/field
 * (errors.go) words it: the field's path and a body such as `Required value`,
 * `Invalid value: 0: must be between 1 and 65535, inclusive`. The shared
 * checks sit here too: numbers (ValidatePortNum, ValidateNonnegativeField),
 * required strings and optional lists of objects.
 */
import { isRecord } from '@app/contracts';
import { isValidPortNum } from './names.js';

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

// field.Error bodies

export function required(field: string, detail: string): FieldError {
  return { field, message: detail === '' ? 'Required value' : `Required value: ${detail}` };
}
export function invalid(field: string, value: unknown, detail: string): FieldError {
  return { field, message: `Invalid value: ${showValue(value)}: ${detail}` };
}
export function duplicate(field: string, value: unknown): FieldError {
  return { field, message: `Duplicate value: ${showValue(value)}` };
}
export function notSupported(field: string, value: unknown, valid: readonly string[]): FieldError {
  return { field, message: `Unsupported value: ${showValue(value)}: supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` };
}
export function forbidden(field: string, detail: string): FieldError {
  return { field, message: `Forbidden: ${detail}` };
}
export function notFound(field: string, value: unknown): FieldError {
  return { field, message: `Not found: ${showValue(value)}` };
}

function showValue(v: unknown): string {
  if (v === undefined) return 'null';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null) return JSON.stringify(v);
  return JSON.stringify(v).slice(0, 80);
}

// numbers

export function checkPortNumber(port: unknown, path: string, errs: FieldError[]): void {
  if (!Number.isInteger(port)) {
    errs.push(invalid(path, port, 'must be an integer'));
    return;
  }
  for (const m of isValidPortNum(port as number)) errs.push(invalid(path, port, m));
}

/** An optional integer field, at least `min` (0: ValidateNonnegativeField). */
export function checkInteger(value: unknown, path: string, min: number, errs: FieldError[]): void {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value)) {
    errs.push(invalid(path, value, 'must be an integer'));
    return;
  }
  const n = value as number;
  if (n < 0) errs.push(invalid(path, n, 'must be greater than or equal to 0'));
  else if (n < min) errs.push(invalid(path, n, `must be greater than or equal to ${min}`));
}

// shapes

/**
 * A required string field: `Required value` when absent or empty, `must be a
 * string` when it is something else; the string otherwise, for the checks
 * that follow.
 */
export function requiredString(value: unknown, path: string, errs: FieldError[]): string | undefined {
  if (value === undefined || value === null || value === '') errs.push(required(path, ''));
  else if (typeof value !== 'string') errs.push(invalid(path, value, 'must be a string'));
  else return value;
  return undefined;
}

/**
 * An optional list of objects: nothing when absent, `must be a list` when it
 * is not one, `must be an object` at each item that is not one; `each` gets
 * the others in order, with their path `<path>[i]`.
 */
export function forEachObject(list: unknown, path: string, errs: FieldError[], each: (item: Record<string, unknown>, itemPath: string) => void): void {
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) {
    errs.push(invalid(path, list, 'must be a list'));
    return;
  }
  for (const [i, item] of list.entries()) {
    const p = `${path}[${i}]`;
    if (isRecord(item)) each(item, p);
    else errs.push(invalid(p, item, 'must be an object'));
  }
}
