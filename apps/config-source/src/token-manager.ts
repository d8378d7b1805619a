/**
 * The kubelet's service account token manager (pkg/kubelet/token
 * token_manager.go) for config-source, which alone holds the node's
 * credentials (ADR 0013, 0014): pod-worker asks on
 * `kubelet.<node>.service.config-source.token` for a projected
 * serviceAccountToken source, at every sync of the pod.
 *
 *   get ─▶ cached and fresh ─▶ the cached token
 *       ─▶ missing, or older than 80 % of its TTL, or than 24 h ─▶ TokenRequest
 *            ─ ok ─▶ cached, returned
 *            ─ failed, no token cached ─▶ "failed to fetch token: <why>"
 *            ─ failed, the cached one expired ─▶ "token ... expired and refresh failed: <why>"
 *            ─ failed, the cached one still valid ─▶ the cached token
 *
 * Upstream adds a random jitter of up to 10 s to the refresh point to spread
 * a node's refreshes; here each pod refreshes at its own sync, already spread.
 * Expired tokens are dropped at each request. Tokens are never logged.
 */
import { Clock } from '@app/clock';
import { MessageTypes, type ServiceAccountTokenMessage, type ServiceAccountTokenRequestMessage } from '@app/contracts';
import type { Logger } from '@app/observability';
import { ApiObjectError } from './object-manager.js';
import type { IssuedToken, TokenRequester, TokenRequestSpec } from './ports.js';

const MAX_TTL_MS = 24 * 60 * 60 * 1000;

interface CachedToken extends IssuedToken {
  expirationSeconds: number;
}

export class ServiceAccountTokenManager {
  private readonly cache = new Map<string, CachedToken>();

  constructor(
    /** The TokenRequest API; null when the node has not joined a cluster. */
    private readonly requester: TokenRequester | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** GetServiceAccountToken; rejects with an ApiObjectError (NotJoined, Unavailable) when there is no token to give. */
  async get(req: ServiceAccountTokenRequestMessage): Promise<ServiceAccountTokenMessage> {
    if (!this.requester) {
      throw new ApiObjectError('NotJoined', `this node has not joined a cluster (config-source has no KUBECONFIG): no token of service account ${req.namespace}/${req.serviceAccountName} can be requested`);
    }
    const spec: TokenRequestSpec = {
      ...(req.audiences && req.audiences.length > 0 ? { audiences: req.audiences } : {}),
      expirationSeconds: req.expirationSeconds,
      boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: req.podName, uid: req.podUid },
    };
    // keyFunc: nonconfidential, safe to log.
    const key = JSON.stringify([req.serviceAccountName, req.namespace, spec.audiences ?? [], spec.expirationSeconds, req.podName, req.podUid]);
    const cached = this.cache.get(key);
    this.cleanup(key);
    if (cached && !this.requiresRefresh(cached)) return this.reply(cached);
    try {
      const issued = await this.requester.request(req.namespace, req.serviceAccountName, spec);
      const token = { ...issued, expirationSeconds: req.expirationSeconds };
      this.cache.set(key, token);
      return this.reply(token);
    } catch (err) {
      const why = (err as Error).message;
      if (!cached) throw new ApiObjectError('Unavailable', `failed to fetch token: ${why}`);
      if (this.clock.now() >= cached.expiresAt) throw new ApiObjectError('Unavailable', `token ${key} expired and refresh failed: ${why}`);
      this.logger.error({ cacheKey: key, err: why }, "couldn't update token");
      return this.reply(cached);
    }
  }

  /** Drops the expired tokens but `keep`'s (DeleteServiceAccountToken is not needed: a gone pod's tokens expire and go). */
  private cleanup(keep: string): void {
    const now = this.clock.now();
    for (const [k, t] of this.cache) if (k !== keep && now >= t.expiresAt) this.cache.delete(k);
  }

  /** requiresRefresh: older than 24 h, or within 20 % of its TTL of the expiration. */
  private requiresRefresh(t: CachedToken): boolean {
    const now = this.clock.now();
    const ttlMs = t.expirationSeconds * 1000;
    const issuedAt = t.expiresAt - ttlMs;
    return now > issuedAt + MAX_TTL_MS || now > t.expiresAt - ttlMs * 0.2;
  }

  private reply(t: IssuedToken): ServiceAccountTokenMessage {
    return { type: MessageTypes.serviceAccountToken, token: t.token, expirationTimestamp: new Date(t.expiresAt).toISOString() };
  }
}
