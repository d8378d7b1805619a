export { connectNats, connectionName, onReconnect } from './connection.js';
export { NatsAuthError, describeViolation, newInbox, senderOf } from './connection.js';
export type { ConnectOptions, NatsConnection, NatsCredentials, PermissionViolation } from './connection.js';
export { BUCKETS, ensureBuckets, kvKey } from './buckets.js';
export type { BucketId, KV, KvEntry, KvWatchEntry } from './buckets.js';
export { Headers, formatTraceparent, messageHeaders, nextSpan, parseTraceparent, readMeta } from './headers.js';
export type { MessageMeta, TraceContext } from './headers.js';
export { continueTrace, currentTrace, hopOf, hopStart, installTraceRecorder, msSince, recordHop, recordKvWatch, runInTrace, withTraceRecorderScope } from './trace-context.js';
export { JetStreamTraceRecorder, NoTraceRecorder, TRACE_RECORD_TYPE, TRACE_STREAM, TRACE_SUBJECTS, TraceRecorder, ensureTraceStream, messageFacts, parseTraceRecord } from './trace-records.js';
export type { TraceBufferOptions, TraceHop, TraceHopKind, TraceRecord, TraceStreamLimits } from './trace-records.js';
export type { ActiveTrace, TraceLogger, TracedMessage, WatchedKvEntry } from './trace-context.js';
export { readPodTrace, readTraceRecords } from './trace-reader.js';
export { buildTimeline, describeHop } from './trace-timeline.js';
export type { Timeline, TimelineHop } from './trace-timeline.js';
export { buildTopology, classifySubject, covers, designedPublications, fetchTopology, instanceLabel, sampleMonitoring, parseConnectionName, printTopologyDot, printTopologyMermaid, topologyEdges, topologyOfNode } from './topology.js';
export type { Connz, ConnzConnection, InstanceTopology, Publication, ServerTotals, SubjectKind, Subscription, Topology, MonitoringSample } from './topology.js';
export { NatsBus, RemoteError, isErrorReply } from './bus.js';
export { JsonKvStore, podStatusStore, probeResultsStore } from './json-kv-store.js';
export type { JsonKv } from './json-kv-store.js';
export { kvSnapshot, watchInitialCount } from './kv-snapshot.js';
export { KvMirror } from './kv-mirror.js';
export type { KvMirrorOptions, MirrorKv } from './kv-mirror.js';
export { NatsEventRecorder } from './event-recorder.js';
export { SharedSettingMismatchError, agreeOnSetting, sharedSettingKey } from './shared-settings.js';
export type { SettingsKv, SharedSettingRecord } from './shared-settings.js';
export {
  CRI_RUNTIME_CHANGES, CRI_RUNTIME_READS, CRI_RUNTIME_STREAMING,
  NATS_ACCESS,
  NATS_ADMIN_USER,
  NATS_USERS,
  familySubject,
  grantedBuckets,
  inboxPrefix,
  kvStream,
  natsAuthorization,
  natsPermissions,
  passwordVariable,
  permits,
  serviceSubjects,
} from './permissions.js';
export type { BucketWrite, FamilySubset, NatsAccess, NatsUser, SubjectFamily, SubjectPermission, UserPermissions } from './permissions.js';
export { DEFAULT_LEADER_ELECTION, FencingTokenFilter, LeaderElector, LeaderFence, LeaderLeaseStore, NotLeaderError, leaderElectionProblem, leaderLeaseKey } from './leader-election.js';
export type { LeaderElectionOptions, LeaderElectionRecord, LeaderLeaseSnapshot, LeaderRole, LeadershipListener, LeadershipStatus } from './leader-election.js';
export { KvLeaderLeaseStore } from './kv-leader-lease-store.js';
export type { LeaderLeaseKv } from './kv-leader-lease-store.js';
export { RESTORE_RETRY_MS, restoreThenLead } from './restore-then-lead.js';
export type { RestoreFailurePolicy, RestoreThenLeadOptions } from './restore-then-lead.js';
