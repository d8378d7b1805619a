export { CriRuntime, NatsCriClient } from './client.js';
export type { ImageRequest, ImageResponse, RuntimeRequest, RuntimeResponse } from './client.js';
export { CriError, GRPC_CODE_NAMES, grpcCodeName, httpStatusOf, isCriErrorCode, isDeadlineExceeded, isNotFound, isUnavailable } from './errors.js';
export type { CriErrorCode } from './errors.js';
export { FakeCri } from './fake.js';
export type { RecordedCall } from './fake.js';
export { DEFAULT_CRI_TIMEOUTS, IMAGE_METHOD_INFO, RUNTIME_METHOD_INFO, criProtoPath, deadlineMs, methodInfo } from './methods.js';
export type { CriService, CriTimeouts, DeadlineClass, ImageMethod, MethodInfo, RuntimeMethod } from './methods.js';
export * from './types.js';
