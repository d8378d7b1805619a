/**
 * The gRPC side of the gateway: the one connection to the CRI socket.
 * `GrpcRuntimeConnection` is the RuntimeConnection adapter on @grpc/grpc-js, with keep-alive
 * and quick reconnection, so that a restarted containerd is back within
 * about a second without restarting the gateway.
 */
import * as grpc from '@grpc/grpc-js';
import { CriError, ImageServiceClient, RuntimeServiceClient, grpcCodeName, type ContainerEventResponse, type CriService } from '@app/cri';
import { RuntimeConnection, type EventStream } from '../ports.js';

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

type UnaryFn = (request: unknown, metadata: grpc.Metadata, options: Partial<grpc.CallOptions>, callback: (err: grpc.ServiceError | null, value?: unknown) => void) => grpc.ClientUnaryCall;

/** The generated client's method for an RPC: its proto name with a lower-case first letter (RunPodSandbox -> runPodSandbox). */
const clientMethod = (method: string): string => method.charAt(0).toLowerCase() + method.slice(1);

/** The generated grpc-js clients (libs/cri's ts-proto code) on one channel each to the CRI socket. */
export class GrpcRuntimeConnection extends RuntimeConnection {
  private readonly runtime: RuntimeServiceClient;
  private readonly image: ImageServiceClient;

  constructor(endpoint: string) {
    super();
    const credentials = grpc.credentials.createInsecure();
    this.runtime = new RuntimeServiceClient(endpoint, credentials, CHANNEL_OPTIONS);
    this.image = new ImageServiceClient(endpoint, credentials, CHANNEL_OPTIONS);
  }

  /** Each unary method's generated function, by `service/Method`, looked up at its first call (null: not a unary method of the CRI). */
  private readonly unaries = new Map<string, { client: RuntimeServiceClient | ImageServiceClient; fn: UnaryFn } | null>();

  private unaryOf(service: CriService, method: string): { client: RuntimeServiceClient | ImageServiceClient; fn: UnaryFn } | null {
    const key = `${service}/${method}`;
    let found = this.unaries.get(key);
    if (found === undefined) {
      const defs = (service === 'runtime' ? RuntimeServiceClient.service : ImageServiceClient.service) as Record<string, { requestStream: boolean; responseStream: boolean }>;
      const name = clientMethod(method);
      const def = Object.hasOwn(defs, name) ? defs[name] : undefined;
      const client = service === 'runtime' ? this.runtime : this.image;
      const fn = (client as unknown as Record<string, UnaryFn | undefined>)[name];
      found = def && !def.requestStream && !def.responseStream && fn ? { client, fn } : null;
      if (this.unaries.size < 256) this.unaries.set(key, found);
    }
    return found;
  }

  hasMethod(service: CriService, method: string): boolean {
    return this.unaryOf(service, method) !== null;
  }

  unary(service: CriService, method: string, request: unknown, deadlineMs: number): Promise<unknown> {
    const unary = this.unaryOf(service, method);
    if (!unary) return Promise.reject(new CriError('Unimplemented', `unknown ${service} method ${method}`));
    const { client, fn } = unary;
    return new Promise((resolve, reject) => {
      fn.call(client, request, EMPTY_METADATA, { deadline: Date.now() + deadlineMs }, (err, value) => {
        if (err) reject(toCriError(err));
        else resolve(value ?? {});
      });
    });
  }

  containerEvents(onEvent: (event: ContainerEventResponse) => void): EventStream {
    const call = this.runtime.getContainerEvents({});
    const done = new Promise<void>((resolve, reject) => {
      call.on('data', onEvent);
      call.on('error', (err: grpc.ServiceError) => reject(toCriError(err)));
      call.on('end', () => resolve());
    });
    return { done, cancel: () => call.cancel() };
  }

  close(): void {
    this.runtime.close();
    this.image.close();
  }
}

function toCriError(err: grpc.ServiceError): CriError {
  return new CriError(grpcCodeName(err.code), err.details || err.message);
}
