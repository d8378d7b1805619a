import { MessageTypes, Subjects, decodeMessage, isNamespacedKind, type ApiObjectKind, type ApiObjectRequestMessage, type Service, type ServiceListRequestMessage } from '@app/contracts';
import { RemoteError, type NatsBus } from '@app/nats';
import { ApiObjects, ApiObjectsError, type ApiObjectPayload } from '../ports.js';

/** How long a request waits for config-source (which waits up to 5 s for a new watch's first list). */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * The objects through config-source: a request on
 * `kubelet.<node>.service.config-source.object`, and the services on
 * `.services` (pod-worker is the only service allowed to ask). The reply may carry a secret: it is returned,
 * never logged or kept.
 */
export class NatsApiObjects extends ApiObjects {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }

  async get(kind: ApiObjectKind, namespace: string, name: string): Promise<ApiObjectPayload | undefined> {
    const request: ApiObjectRequestMessage = { type: MessageTypes.apiObjectRequest, kind, ...(isNamespacedKind(kind) ? { namespace } : {}), name };
    let body: unknown;
    try {
      body = await this.bus.request(Subjects.apiObject.build(this.node), request, { timeoutMs: REQUEST_TIMEOUT_MS });
    } catch (err) {
      if (err instanceof RemoteError) throw new ApiObjectsError(err.code, err.description);
      throw new ApiObjectsError('Unavailable', `config-source did not answer for ${kind} ${namespace ? `${namespace}/` : ''}${name}: ${(err as Error).message}`);
    }
    const reply = decodeMessage(MessageTypes.apiObject, body);
    if (!reply.found) return undefined;
    return { data: reply.data ?? {}, binaryData: reply.binaryData ?? {}, ...(reply.secretType !== undefined ? { secretType: reply.secretType } : {}), ...(reply.handler !== undefined ? { handler: reply.handler } : {}) };
  }

  async services(namespace: string): Promise<Service[]> {
    const request: ServiceListRequestMessage = { type: MessageTypes.serviceListRequest, namespace };
    let body: unknown;
    try {
      body = await this.bus.request(Subjects.serviceList.build(this.node), request, { timeoutMs: REQUEST_TIMEOUT_MS });
    } catch (err) {
      if (err instanceof RemoteError) throw new ApiObjectsError(err.code, err.description);
      throw new ApiObjectsError('Unavailable', `config-source did not answer for the services of ${namespace}: ${(err as Error).message}`);
    }
    return decodeMessage(MessageTypes.serviceList, body).services;
  }
}
