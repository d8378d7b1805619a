/**
 * CRI errors keep their gRPC status code, by its Go name (codes.Code's
 * String(): NotFound, DeadlineExceeded, Unavailable, ...), on every hop:
 * gRPC -> gateway -> NATS/HTTP -> client.
 */

/** gRPC status codes by number, named as Go's codes.Code prints them. */
export const GRPC_CODE_NAMES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
] as const;
export type CriErrorCode = (typeof GRPC_CODE_NAMES)[number];

export function grpcCodeName(code: number | undefined): CriErrorCode {
  return GRPC_CODE_NAMES[code ?? 2] ?? 'Unknown';
}

export function isCriErrorCode(v: string): v is CriErrorCode {
  return (GRPC_CODE_NAMES as readonly string[]).includes(v);
}

/** HTTP status for an error code, for the gateway's HTTP face. */
export function httpStatusOf(code: string): number {
  switch (code) {
    case 'InvalidArgument':
    case 'OutOfRange':
      return 400;
    case 'Unauthenticated':
      return 401;
    case 'PermissionDenied':
      return 403;
    case 'NotFound':
      return 404;
    case 'AlreadyExists':
    case 'Aborted':
      return 409;
    case 'FailedPrecondition':
      return 412;
    case 'ResourceExhausted':
      return 429;
    case 'Canceled':
      return 499;
    case 'Unimplemented':
      return 501;
    case 'Unavailable':
      return 503;
    case 'DeadlineExceeded':
      return 504;
    default:
      return 500;
  }
}

export class CriError extends Error {
  constructor(
    readonly code: CriErrorCode,
    readonly description: string,
  ) {
    super(`${code}: ${description}`);
    this.name = 'CriError';
  }
}

export const isNotFound = (err: unknown): boolean => err instanceof CriError && err.code === 'NotFound';
export const isUnavailable = (err: unknown): boolean => err instanceof CriError && err.code === 'Unavailable';
export const isDeadlineExceeded = (err: unknown): boolean => err instanceof CriError && err.code === 'DeadlineExceeded';
