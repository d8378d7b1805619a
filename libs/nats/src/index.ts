export { connectNats, connectionName, onReconnect } from './connection.js';
export { NatsAuthError, describeViolation, newInbox, senderOf } from './connection.js';
export type { ConnectOptions, NatsConnection, NatsCredentials, PermissionViolation } from './connection.js';
export { BUCKETS, ensureBuckets, kvKey } from './buckets.js';
export type { BucketId, KV, KvEntry, KvWatchEntry } from './buckets.js';
export { buildTopology, classifySubject, covers, designedPublications, fetchTopology, instanceLabel, sampleMonitoring, parseConnectionName, printTopologyDot, printTopologyMermaid, topologyEdges, topologyOfNode } from './topology.js';
export type { Connz, ConnzConnection, InstanceTopology, MonitoringRequester, Publication, ServerTotals, SubjectKind, Subscription, Topology, MonitoringSample } from './topology.js';
export { NatsBus, RemoteError, isErrorReply } from './bus.js';
export { JsonKvStore, podStatusStore, podWorkersStore, probeResultsStore } from './json-kv-store.js';
export type { JsonKv } from './json-kv-store.js';
export { kvSnapshot, watchInitialCount } from './kv-snapshot.js';
export { KvMirror } from './kv-mirror.js';
export { KvReflector } from './kv-reflector.js';
export type { KvReflectorOptions, KvWatchHandler, ReflectorKv } from './kv-reflector.js';
export { installKvWatchMetrics } from './kv-watch-metrics.js';
export type { KvMirrorOptions, MirrorKv } from './kv-mirror.js';
export { NatsEventRecorder } from './event-recorder.js';
export { EVENT_ACK_WAIT_MS, EVENT_STREAM, EVENT_SUBJECTS, JetStreamEventConsumer, ensureEventStream, eventConsumerName, publishEventDurably } from './event-stream.js';
export type { DeliveredEvent, EventOutcome } from './event-stream.js';
export { SharedSettingMismatchError, agreeOnSetting, sharedSettingKey } from './shared-settings.js';
export type { SettingsKv, SharedSettingRecord } from './shared-settings.js';
export {
  CRI_RUNTIME_CHANGES, CRI_RUNTIME_READS, CRI_RUNTIME_STREAMING,
  MONITORING_READ,
  MONITORING_SUBJECTS,
  NATS_ACCESS,
  NATS_ADMIN_USER,
  NATS_USERS,
  familySubject,
  grantedBuckets,
  inboxPrefix,
  kvStream,
  natsAuthorization,
  natsPermissions,
  natsUserName,
  natsUserOf,
  natsUsersOf,
  passwordVariable,
  permits,
  serviceSubjects,
} from './permissions.js';
export type { BucketWrite, FamilySubset, NatsAccess, NatsUser, NatsUserEntry, SubjectFamily, SubjectPermission, UserPermissions } from './permissions.js';
export { FLEET_INBOX_PREFIX, FLEET_READER_USER, HUB_DOMAIN, HUB_LEAFZ_SUBJECT, fleetReadSubject, fleetReaderPermissions, fleetServiceReads, type FleetServiceRead, leafNodeOf, leafPermissions, leafUserName, nodeDomain } from './fleet.js';
