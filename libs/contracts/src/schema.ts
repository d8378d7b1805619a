/**
 * Field specs: the one description of a message's (or a KV record's) fields
 * that both the decoder's checks (messages.ts decodeMessage) and the
 * published JSON Schema (the AsyncAPI document, docs/adr/0033) come from.
 *
 * A spec table is typed against the TypeScript interface it describes
 * (`FieldsOf<M>`): every field of the interface has a spec, no other field
 * has one, an optional field's spec is `optional(...)` and a required
 * field's is not, and a spec's value type fits the field's. So the
 * interface, the decoder and the schema cannot drift apart without a
 * compile error.
 *
 * What the decoder checks is shallow (a field's kind, a string being
 * non-empty, a value among the allowed ones) and only for the fields marked
 * `checked` (the builders `str`, `num`, `bool`, `arr`, `obj`, `among`);
 * the schema says more (the items of an array, nested objects, enums that a
 * receiver does not refuse).
 */

/** A JSON Schema (draft 07, the AsyncAPI 3 Schema Object's base), as plain data. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** What a decoder refuses when a checked field is not so. */
export type FieldCheck = 'nonEmptyString' | 'number' | 'boolean' | 'array' | 'object' | { oneOf: readonly string[] };

/** One field: its JSON Schema, whether it may be absent, and what the decoder checks of it. `T` is the field's TypeScript type. */
export interface FieldSpec<T, Optional extends boolean = boolean> {
  readonly schema: JsonSchema;
  readonly optional: Optional;
  readonly check?: FieldCheck;
  /** Never set: carries the field's type for `FieldsOf`. */
  readonly __type?: T;
}

/** The specs of every field of `M` but its `type`: required and optional as the interface has them. */
export type FieldsOf<M> = {
  readonly [K in Exclude<keyof M, 'type'>]-?: undefined extends M[K] ? FieldSpec<Exclude<M[K], undefined>, true> : FieldSpec<M[K], false>;
};

const spec = <T>(schema: JsonSchema, check?: FieldCheck): FieldSpec<T, false> => ({ schema, optional: false, ...(check ? { check } : {}) });

/** Adds a description to a spec's schema. */
export function describe<T, O extends boolean>(description: string, s: FieldSpec<T, O>): FieldSpec<T, O> {
  return { ...s, schema: { ...s.schema, description } };
}

/** The field may be absent. */
export function optional<T>(s: FieldSpec<T, false>): FieldSpec<T, true> {
  return { ...s, optional: true };
}

// Checked: the decoder refuses a message whose field is not so.
/** A non-empty string. */
export const str = <T extends string = string>(enumValues?: readonly T[]): FieldSpec<T, false> =>
  spec<T>({ type: 'string', minLength: 1, ...(enumValues ? { enum: [...enumValues] } : {}) }, 'nonEmptyString');
/** A finite number. */
export const num = (): FieldSpec<number, false> => spec<number>({ type: 'number' }, 'number');
export const bool = (): FieldSpec<boolean, false> => spec<boolean>({ type: 'boolean' }, 'boolean');
/** An array (the decoder checks it is one; the schema names its items). */
export const arr = <T>(items: FieldSpec<T>): FieldSpec<T[], false> => spec<T[]>({ type: 'array', items: items.schema }, 'array');
/** An object (the decoder checks it is one; the schema names its fields when given). */
export const obj = <T>(s: FieldSpec<T>): FieldSpec<T, false> => spec<T>(s.schema, 'object');
/** A string among `values`. */
export const among = <const T extends string>(values: readonly T[]): FieldSpec<T, false> => spec<T>({ type: 'string', enum: [...values] }, { oneOf: values });

// Unchecked: described in the schema only.
export const S = {
  string: <T extends string = string>(enumValues?: readonly T[]): FieldSpec<T, false> => spec<T>({ type: 'string', ...(enumValues ? { enum: [...enumValues] } : {}) }),
  /** An RFC 3339 time. */
  dateTime: (): FieldSpec<string, false> => spec<string>({ type: 'string', format: 'date-time' }),
  number: (): FieldSpec<number, false> => spec<number>({ type: 'number' }),
  integer: (): FieldSpec<number, false> => spec<number>({ type: 'integer' }),
  /** Milliseconds since the Unix epoch. */
  epochMs: (): FieldSpec<number, false> => spec<number>({ type: 'integer', description: 'milliseconds since the Unix epoch' }),
  boolean: (): FieldSpec<boolean, false> => spec<boolean>({ type: 'boolean' }),
  array: <T>(items: FieldSpec<T>): FieldSpec<T[], false> => spec<T[]>({ type: 'array', items: items.schema }),
  /** An object whose keys are free and whose values are `values`. */
  map: <V>(values: FieldSpec<V>): FieldSpec<Record<string, V>, false> => spec<Record<string, V>>({ type: 'object', additionalProperties: values.schema }),
  /** An object with these fields; fields it does not know are kept (fields are only ever added). */
  object: <T>(fields: FieldsOf<T>): FieldSpec<T, false> => spec<T>(objectSchema(fields)),
  /** Any JSON value (the schema says no more: see the description). */
  any: <T = unknown>(): FieldSpec<T, false> => spec<T>({}),
  /** A schema of the document's components (`#/components/schemas/<name>`): a Kubernetes or CRI type. */
  ref: <T>(name: string): FieldSpec<T, false> => spec<T>({ $ref: `#/components/schemas/${name}` }),
} as const;

/** The JSON Schema of an object with `fields` (and `type` fixed to `typeName` when given). */
export function objectSchema(fields: Readonly<Record<string, FieldSpec<unknown>>>, typeName?: string): JsonSchema {
  const names = Object.keys(fields).sort();
  const properties: Record<string, JsonSchema> = {};
  if (typeName !== undefined) properties['type'] = { type: 'string', const: typeName };
  for (const n of names) properties[n] = (fields[n] as FieldSpec<unknown>).schema;
  const required = [...(typeName !== undefined ? ['type'] : []), ...names.filter((n) => !(fields[n] as FieldSpec<unknown>).optional)];
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: true };
}

/** What a checked field that is not so is told: `field "x" must be ...`, or undefined when it is so. */
export function checkField(name: string, check: FieldCheck, value: unknown): string | undefined {
  const must = (what: string) => `field "${name}" must be ${what}`;
  if (typeof check === 'object') return typeof value === 'string' && check.oneOf.includes(value) ? undefined : must(`one of ${check.oneOf.join(', ')}`);
  switch (check) {
    case 'nonEmptyString':
      return typeof value === 'string' && value.length > 0 ? undefined : must('a non-empty string');
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : must('a number');
    case 'boolean':
      return typeof value === 'boolean' ? undefined : must('a boolean');
    case 'array':
      return Array.isArray(value) ? undefined : must('an array');
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value) ? undefined : must('an object');
  }
}

/** The checked fields of a spec table, in declaration order. */
export function checkedFields(fields: Readonly<Record<string, FieldSpec<unknown>>>): { name: string; check: FieldCheck }[] {
  return Object.entries(fields).flatMap(([name, s]) => (s.check ? [{ name, check: s.check }] : []));
}
