/**
 * The gRPC side of the gateway: the one connection to the CRI socket.
 * `RuntimeConnection` is the port the gateway logic uses;
 * `GrpcRuntimeConnection` is the adapter on @grpc/grpc-js, with keep-alive
 * and quick reconnection, so that a restarted containerd is back within
 * about a second without restarting the gateway.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { CriError, grpcCodeName, type ContainerEventResponse, type CriService } from '@app/cri';

export interface EventStream {
  /** Settles when the stream ends: resolves on a clean end, rejects with a CriError. */
  readonly done: Promise<void>;
  cancel(): void;
}

export abstract class RuntimeConnection {
  /** One unary call with a deadline; rejects with CriError (gRPC code kept). */
  abstract unary(service: CriService, method: string, request: unknown, deadlineMs: number): Promise<unknown>;
  /** RuntimeService.GetContainerEvents, a server stream. */
  abstract containerEvents(onEvent: (event: ContainerEventResponse) => void): EventStream;
  /** Whether the service has this unary method. */
  abstract hasMethod(service: CriService, method: string): boolean;
  abstract close(): void;
}

/** proto-loader options: the JSON shape of libs/cri's types. */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
  // bytes as base64 text, as in protobuf's JSON mapping: replies travel as JSON.
  bytes: String,
};

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // grpc-go servers (containerd) refuse pings more often than every 5 minutes by default.
  'grpc.keepalive_time_ms': 300_000,
  'grpc.keepalive_timeout_ms': 20_000,
  'grpc.keepalive_permit_without_calls': 0,
  // Reconnect quickly when the runtime restarts.
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 2000,
  // As the kubelet's remote client (maxMsgSize).
  'grpc.max_receive_message_length': 16 * 1024 * 1024,
  'grpc.max_send_message_length': 16 * 1024 * 1024,
  // Channelz bookkeeping costs on every call and nothing here reads it.
  'grpc.enable_channelz': 0,
};

const EMPTY_METADATA = new grpc.Metadata();

type UnaryFn = (request: unknown, metadata: grpc.Metadata, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null, value?: unknown) => void) => grpc.ClientUnaryCall;

export class GrpcRuntimeConnection extends RuntimeConnection {
  private readonly clients: Record<CriService, grpc.Client>;

  constructor(endpoint: string, protoPath: string) {
    super();
    const definition = protoLoader.loadSync(protoPath, PROTO_LOADER_OPTIONS);
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      runtime: { v1: { RuntimeService: grpc.ServiceClientConstructor; ImageService: grpc.ServiceClientConstructor } };
    };
    const credentials = grpc.credentials.createInsecure();
    this.clients = {
      runtime: new pkg.runtime.v1.RuntimeService(endpoint, credentials, CHANNEL_OPTIONS),
      image: new pkg.runtime.v1.ImageService(endpoint, credentials, CHANNEL_OPTIONS),
    };
  }

  hasMethod(service: CriService, method: string): boolean {
    const fn = (this.clients[service] as unknown as Record<string, unknown>)[method];
    return typeof fn === 'function' && method !== 'GetContainerEvents';
  }

  unary(service: CriService, method: string, request: unknown, deadlineMs: number): Promise<unknown> {
    const client = this.clients[service] as unknown as Record<string, UnaryFn>;
    const fn = client[method];
    if (!fn || !this.hasMethod(service, method)) return Promise.reject(new CriError('Unimplemented', `unknown ${service} method ${method}`));
    return new Promise((resolve, reject) => {
      fn.call(client, request, EMPTY_METADATA, { deadline: Date.now() + deadlineMs }, (err, value) => {
        if (err) reject(toCriError(err));
        else resolve(value ?? {});
      });
    });
  }

  containerEvents(onEvent: (event: ContainerEventResponse) => void): EventStream {
    const client = this.clients.runtime as unknown as {
      GetContainerEvents(request: unknown, options?: grpc.CallOptions): grpc.ClientReadableStream<ContainerEventResponse>;
    };
    const call = client.GetContainerEvents({});
    const done = new Promise<void>((resolve, reject) => {
      call.on('data', onEvent);
      call.on('error', (err: grpc.ServiceError) => reject(toCriError(err)));
      call.on('end', () => resolve());
    });
    return { done, cancel: () => call.cancel() };
  }

  close(): void {
    this.clients.runtime.close();
    this.clients.image.close();
  }
}

function toCriError(err: grpc.ServiceError): CriError {
  return new CriError(grpcCodeName(err.code), err.details || err.message);
}
