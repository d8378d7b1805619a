export { Headers, formatTraceparent, messageHeaders, nextSpan, parseTraceparent, readMeta } from './headers.js';
export type { MessageMeta, TraceContext } from './headers.js';
export { continueTrace, currentTrace, hopOf, hopStart, installTraceRecorder, msSince, recordHop, recordKvWatch, runInTrace, withTraceRecorderScope } from './trace-context.js';
export { JetStreamTraceRecorder, NoTraceRecorder, TRACE_RECORD_TYPE, TRACE_STREAM, TRACE_SUBJECTS, TraceRecorder, ensureTraceStream, messageFacts, parseTraceRecord } from './trace-records.js';
export type { TraceBufferOptions, TraceHop, TraceHopKind, TraceRecord, TraceStreamLimits } from './trace-records.js';
export type { ActiveTrace, TraceLogger, TracedMessage, WatchedKvEntry } from './trace-context.js';
export { readPodTrace, readTraceRecords } from './trace-reader.js';
export { buildTimeline, describeHop } from './trace-timeline.js';
export type { Timeline, TimelineHop } from './trace-timeline.js';
