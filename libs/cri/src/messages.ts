/**
 * The CRI's message types as the other services use them, derived from the
 * code ts-proto generates from proto/runtime/v1/api.proto (k8s.io/cri-api
 * v0.34.4; see docs/adr/0005-generated-cri.md), so that nothing here is kept
 * in step by hand.
 *
 * On the NATS wire a CRI message is JSON in the generated shape: camelCase
 * field names, enums as their value names, int64 as decimal strings, scalars,
 * lists and maps always present, unset messages absent; bytes (only
 * ExecSyncResponse.stdout/stderr) as base64 text (`Json<T>`).
 */
import type { DeepPartial, ImageServiceService, RuntimeServiceService } from './generated/runtime/v1/api.js';

/** A generated message as JSON carries it: bytes become base64 text, the rest keeps its type. */
export type Json<T> = T extends Uint8Array ? string : T extends readonly (infer E)[] ? Json<E>[] : T extends object ? { [K in keyof T]: Json<T[K]> } : T;

/** What a caller sends: any part of the message; omitted fields are the proto defaults. */
export type CriInput<T> = DeepPartial<T>;

type RequestOf<D> = D extends { requestSerialize: (value: infer R) => Buffer } ? R : never;
type ResponseOf<D> = D extends { responseDeserialize: (value: Buffer) => infer R } ? R : never;

/** A generated grpc-js service definition as a table of its unary RPCs, by their proto names. */
type UnaryTable<S> = {
  [K in keyof S & string as S[K] extends { requestStream: false; responseStream: false } ? Capitalize<K> : never]: { request: RequestOf<S[K]>; response: ResponseOf<S[K]> };
};

/** Every unary RuntimeService RPC (GetContainerEvents, a stream, is not one): request and response types. */
export type RuntimeServiceMethods = UnaryTable<RuntimeServiceService>;
/** Every ImageService RPC: request and response types. */
export type ImageServiceMethods = UnaryTable<ImageServiceService>;

export type RuntimeMethod = keyof RuntimeServiceMethods;
export type ImageMethod = keyof ImageServiceMethods;
export type CriService = 'runtime' | 'image';

/** A RuntimeService request as a caller writes it. */
export type RuntimeRequest<M extends RuntimeMethod> = CriInput<RuntimeServiceMethods[M]['request']>;
/** A RuntimeService response as the caller receives it. */
export type RuntimeResponse<M extends RuntimeMethod> = Json<RuntimeServiceMethods[M]['response']>;
export type ImageRequest<M extends ImageMethod> = CriInput<ImageServiceMethods[M]['request']>;
export type ImageResponse<M extends ImageMethod> = Json<ImageServiceMethods[M]['response']>;
