export { ConfigError, env, LOG_LEVELS, parseDuration, parseEnv, readSecretFile, sharedSchema } from './env.js';
export { cgroupsSchema, machineAppArmor, machineHugePages, nodeResourcesSchema } from './node.js';
export type { ConfigOf, EnvField, EnvSchema, FieldResult, LogLevel, SharedConfig } from './env.js';
