export { CriRuntime, NatsCriClient, REPLY_MARGIN_MS, canceledCall, raceCancel } from './client.js';
export type { CriCallOptions } from './client.js';
export { containerLogFile } from './container-log.js';
export { REQUIRED_FIELDS, checkRequest, criJsonSchemas, decodeRequest, encodeResponse } from './codec.js';
export type { CriJsonSchema, CriMethodSchema } from './codec.js';
export { CriError, GRPC_CODE_NAMES, grpcCodeName, httpStatusOf, isCriErrorCode, isDeadlineExceeded, isNotFound, isUnavailable } from './errors.js';
export type { CriErrorCode } from './errors.js';
export type { CriInput, CriService, ImageMethod, ImageRequest, ImageResponse, ImageServiceMethods, Json, RuntimeMethod, RuntimeRequest, RuntimeResponse, RuntimeServiceMethods } from './messages.js';
export { CRI_PROGRESS_HEADER, CRI_PROGRESS_INTERVAL_MS, CRI_PROGRESS_STALL_MS, CRI_TIMEOUT_HEADER, DEFAULT_CRI_TIMEOUTS, IMAGE_METHOD_INFO, RUNTIME_METHOD_INFO, deadlineMs, methodInfo, parseCriProgress, parseCriTimeout } from './methods.js';
export type { CriTimeouts, DeadlineClass, MethodInfo } from './methods.js';
// The generated messages (types and their codecs), enums and grpc-js clients, as ts-proto makes them from the proto.
export * from './generated/runtime/v1/api.js';
