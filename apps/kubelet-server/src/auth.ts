/**
 * The kubelet API server's authentication and authorization, after
 * k8s.io/kubernetes pkg/kubelet/server/auth.go (KubeletAuth,
 * nodeAuthorizerAttributesGetter) and the delegating authenticator and
 * authorizer the kubelet builds from its config (k8s.io/apiserver
 * pkg/authentication/authenticatorfactory/delegating.go,
 * authorizerfactory/delegating.go; the cache TTLs of
 * pkg/kubelet/apis/config/v1beta1/defaults.go):
 *
 *   authenticate(request)
 *     x509: a client certificate that verifies against the client CA  -> user CN, groups O
 *     bearer token (Authorization, or the websocket protocol
 *       base64url.bearer.authorization.k8s.io.<token>): a TokenReview,
 *       its answer cached 2 minutes (authenticated or not; errors are not)
 *     either one                                         -> + group system:authenticated
 *     credentials that failed (a bad token, a bad cert)  -> 401, anonymous or not
 *     none at all: anonymous on  -> system:anonymous, group system:unauthenticated
 *                  anonymous off -> 401 Unauthorized
 *   authorize(user, method, path)
 *     attributes: resource nodes, name <node>, verb from the method,
 *       subresource from the path (nodeRequestAttributes); /pods and
 *       /healthz give two (KubeletFineGrainedAuthz: pods or healthz, then proxy)
 *     each asked in turn (a SubjectAccessReview: allowed cached 5 minutes,
 *       denied 30 seconds): the first allowed one lets the request through;
 *       none -> 403 Forbidden (user=..., verb=..., resource=nodes, subresource(s)=[...])
 *
 * Pure but for the reviews (ports.ts) and the clock of the caches.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '@app/clock';
import type { AccessReviewer, NodeRequestAttributes, TokenReviewer, UserInfo } from './ports.js';

/** apiserver's user.Anonymous and user.AllUnauthenticated, user.AllAuthenticated. */
export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** The kubelet's defaults: authentication.webhook.cacheTTL, authorization.webhook.cacheAuthorizedTTL / cacheUnauthorizedTTL. */
export const TOKEN_CACHE_TTL_MS = 2 * 60_000;
export const AUTHORIZED_CACHE_TTL_MS = 5 * 60_000;
export const UNAUTHORIZED_CACHE_TTL_MS = 30_000;
/** How many answers each cache keeps (upstream's LRU holds 1024 for tokens, 10000 for decisions). */
const CACHE_SIZE = 4096;

/** The websocket subprotocol that carries a bearer token (k8s.io/apiserver pkg/authentication/request/websocket). */
export const WEBSOCKET_BEARER_PROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';

/** isSubpath: `path` itself or under it. */
export function isSubpath(subpath: string, path: string): boolean {
  const p = path.replace(/\/$/, '');
  return subpath === p || (subpath.startsWith(p) && subpath[p.length] === '/');
}

/** The API verb of an HTTP method ('' for any other, as upstream). */
export function apiVerb(method: string | undefined): string {
  switch (method) {
    case 'POST':
      return 'create';
    case 'GET':
      return 'get';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return '';
  }
}

/** nodeAuthorizerAttributesGetter.GetRequestAttributes, with KubeletFineGrainedAuthz on (its default in v1.34). */
export function nodeRequestAttributes(user: UserInfo, method: string | undefined, path: string, nodeName: string): NodeRequestAttributes[] {
  const subresources: string[] = [];
  if (isSubpath(path, '/pods') || isSubpath(path, '/runningpods/')) subresources.push('pods');
  else if (isSubpath(path, '/healthz')) subresources.push('healthz');
  else if (isSubpath(path, '/configz')) subresources.push('configz');
  if (isSubpath(path, '/stats')) subresources.push('stats');
  else if (isSubpath(path, '/metrics')) subresources.push('metrics');
  else if (isSubpath(path, '/logs')) subresources.push('log');
  else if (isSubpath(path, '/checkpoint')) subresources.push('checkpoint');
  else if (isSubpath(path, '/statusz')) subresources.push('statusz');
  else if (isSubpath(path, '/flagz')) subresources.push('configz');
  else subresources.push('proxy');
  const verb = apiVerb(method);
  return subresources.map((subresource) => ({ user, verb, resource: 'nodes', subresource, name: nodeName, apiVersion: 'v1', path }));
}

/** What the TLS layer says of the client's certificate. */
export interface ClientCertificate {
  /** Whether it verified against the client CA. */
  authorized: boolean;
  /** Its subject's CN and O (a repeated attribute as an array). */
  subject: { CN?: string | string[]; O?: string | string[] };
}

/** What authentication reads of a request. */
export interface AuthRequest {
  headers: Record<string, string | string[] | undefined>;
  /** The client's certificate, when it sent one. */
  certificate?: ClientCertificate;
}

/** The outcome: a user, or why not (the 401's log line; the client is told only "Unauthorized"). */
export type AuthnResult = { ok: true; user: UserInfo } | { ok: false; reason: string };

export interface AuthenticatorOptions {
  /** --anonymous-auth */
  anonymous: boolean;
  /** Whether client certificates are verified (a client CA is given). */
  x509: boolean;
  tokenCacheTtlMs?: number;
}

/** A small TTL cache, oldest dropped first once full. */
class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  constructor(private readonly clock: Clock) {}
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }
  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (this.entries.size >= CACHE_SIZE) this.entries.delete(this.entries.keys().next().value ?? '');
    this.entries.set(key, { value, expires: this.clock.now() + ttlMs });
  }
}

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
const all = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

export class KubeletAuthenticator {
  private readonly cache: TtlCache<UserInfo | null>;

  /** @param tokens the TokenReviews; null: bearer tokens are not accepted (no apiserver). */
  constructor(
    private readonly tokens: TokenReviewer | null,
    clock: Clock,
    private readonly options: AuthenticatorOptions,
  ) {
    this.cache = new TtlCache(clock);
  }

  async authenticate(req: AuthRequest): Promise<AuthnResult> {
    const errors: string[] = [];
    // x509 first, then the bearer token, as the delegating authenticator's union.
    const cert = this.options.x509 ? req.certificate : undefined;
    if (cert) {
      const cn = first(cert.subject.CN);
      if (!cert.authorized) errors.push('the client certificate does not verify against the client CA');
      else if (!cn) errors.push('the client certificate has no common name');
      else return { ok: true, user: withAuthenticatedGroup({ name: cn, groups: all(cert.subject.O) }) };
    }
    const token = bearerToken(req.headers);
    if (token !== undefined) {
      if (!this.tokens) errors.push('bearer tokens are not accepted: no apiserver to review them');
      else {
        try {
          const user = await this.reviewToken(token);
          if (user) return { ok: true, user: withAuthenticatedGroup(user) };
          errors.push('invalid bearer token');
        } catch (err) {
          errors.push(`the token could not be reviewed: ${(err as Error).message}`);
        }
      }
    }
    if (errors.length > 0) return { ok: false, reason: errors.join('; ') };
    if (this.options.anonymous) return { ok: true, user: { name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] } };
    return { ok: false, reason: 'no credentials' };
  }

  private async reviewToken(token: string): Promise<UserInfo | undefined> {
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached ?? undefined;
    const user = await (this.tokens as TokenReviewer).review(token);
    this.cache.set(key, user ?? null, this.options.tokenCacheTtlMs ?? TOKEN_CACHE_TTL_MS);
    return user;
  }
}

/** The bearer token of `Authorization: Bearer <token>`, or of the websocket protocol that carries one. */
export function bearerToken(headers: AuthRequest['headers']): string | undefined {
  const auth = first(headers['authorization']);
  if (auth !== undefined) {
    const m = /^bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? m[1] : undefined;
  }
  for (const proto of all(headers['sec-websocket-protocol']).flatMap((h) => h.split(',')).map((p) => p.trim())) {
    if (!proto.startsWith(WEBSOCKET_BEARER_PROTOCOL_PREFIX)) continue;
    const token = Buffer.from(proto.slice(WEBSOCKET_BEARER_PROTOCOL_PREFIX.length), 'base64url').toString('utf8');
    return token || undefined;
  }
  return undefined;
}

function withAuthenticatedGroup(user: UserInfo): UserInfo {
  return user.groups.includes(AUTHENTICATED_GROUP) ? user : { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

/** The outcome of authorization: allowed, or the 403's message; `error` when the apiserver could not be asked (500). */
export type AuthzResult = { allowed: true } | { allowed: false; status: 403 | 500; message: string };

export interface AuthorizerOptions {
  allowedTtlMs?: number;
  deniedTtlMs?: number;
}

export class KubeletAuthorizer {
  private readonly cache: TtlCache<boolean>;

  /** @param reviewer the SubjectAccessReviews; null: AlwaysAllow. */
  constructor(
    private readonly reviewer: AccessReviewer | null,
    clock: Clock,
    private readonly options: AuthorizerOptions = {},
  ) {
    this.cache = new TtlCache(clock);
  }

  /** The filter of InstallAuthFilter: each attribute in turn, the first allowed wins. */
  async authorize(attrs: readonly NodeRequestAttributes[]): Promise<AuthzResult> {
    const [head] = attrs;
    if (!head) return { allowed: false, status: 403, message: 'Authorization error: could not determine attributes for request' };
    for (const a of attrs) {
      let allowed: boolean;
      try {
        allowed = await this.decide(a);
      } catch {
        return { allowed: false, status: 500, message: `Authorization error (user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})` };
      }
      if (allowed) return { allowed: true };
    }
    return {
      allowed: false,
      status: 403,
      message: `Forbidden (user=${head.user.name}, verb=${head.verb}, resource=${head.resource}, subresource(s)=[${attrs.map((a) => a.subresource).join(' ')}])\n`,
    };
  }

  private async decide(a: NodeRequestAttributes): Promise<boolean> {
    if (!this.reviewer) return true;
    const key = JSON.stringify([a.user.name, a.user.uid ?? '', [...a.user.groups].sort(), a.user.extra ?? {}, a.verb, a.resource, a.subresource, a.name]);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const { allowed } = await this.reviewer.review(a);
    this.cache.set(key, allowed, allowed ? (this.options.allowedTtlMs ?? AUTHORIZED_CACHE_TTL_MS) : (this.options.deniedTtlMs ?? UNAUTHORIZED_CACHE_TTL_MS));
    return allowed;
  }
}
