export * from './subjects.js';
export * from './messages.js';
export type * from './kube.js';
export * from './state.js';
export * from './events.js';
export * from './services.js';
export * as fieldSpecs from './schema.js';
export type { FieldSpec, FieldsOf, JsonSchema } from './schema.js';
export * from './contract.js';
