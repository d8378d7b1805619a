export { connectNats, connectionName } from './connection.js';
export type { ConnectOptions, NatsConnection } from './connection.js';
export { BUCKETS, ensureBuckets, kvKey, readEntries, readEntry } from './buckets.js';
export type { BucketId, KV, KvEntry, KvWatchEntry } from './buckets.js';
export { Headers, formatTraceparent, messageHeaders, nextSpan, parseTraceparent, readMeta } from './headers.js';
export type { MessageMeta, TraceContext } from './headers.js';
export { NatsBus, RemoteError, isErrorReply } from './bus.js';
