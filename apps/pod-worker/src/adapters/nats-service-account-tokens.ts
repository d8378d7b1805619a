import { MessageTypes, Subjects, decodeMessage, type Pod, type ServiceAccountTokenRequestMessage } from '@app/contracts';
import { RemoteError, type NatsBus } from '@app/nats';
import { ApiObjectsError, ServiceAccountTokens } from '../ports.js';

/** How long a request waits for config-source (which asks the apiserver). */
const REQUEST_TIMEOUT_MS = 10_000;

/** Service account tokens through config-source (`kubelet.<node>.service.config-source.token`); the token is returned, never logged or kept. */
export class NatsServiceAccountTokens extends ServiceAccountTokens {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }

  async get(pod: Pod, audience: string | undefined, expirationSeconds: number): Promise<string> {
    const request: ServiceAccountTokenRequestMessage = {
      type: MessageTypes.serviceAccountTokenRequest,
      namespace: pod.metadata.namespace ?? 'default',
      serviceAccountName: pod.spec.serviceAccountName || 'default',
      podName: pod.metadata.name ?? '',
      podUid: pod.metadata.uid ?? '',
      ...(audience ? { audiences: [audience] } : {}),
      expirationSeconds,
    };
    let body: unknown;
    try {
      body = await this.bus.request(Subjects.serviceAccountToken.build(this.node), request, { timeoutMs: REQUEST_TIMEOUT_MS });
    } catch (err) {
      if (err instanceof RemoteError) throw new ApiObjectsError(err.code, err.description);
      throw new ApiObjectsError('Unavailable', `config-source did not answer for a token of service account ${request.namespace}/${request.serviceAccountName}: ${(err as Error).message}`);
    }
    return decodeMessage(MessageTypes.serviceAccountToken, body).token;
  }
}
