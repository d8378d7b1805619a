/**
 * The reviews of the kubelet API server against the apiserver (libs/apiserver
 * with the node's KUBECONFIG): TokenReview (k8s.io/apiserver
 * plugin/pkg/authenticator/token/webhook) and SubjectAccessReview
 * (plugin/pkg/authorizer/webhook). Both are creates the node's user may make
 * (the system:node rules of the Node authorizer).
 */
import type { ApiServer } from '@app/apiserver';
import { AccessReviewer, TokenReviewer, type NodeRequestAttributes, type UserInfo } from '../ports.js';

/** The webhook clients' timeout (TokenAccessReviewTimeout, SubjectAccessReviewTimeout: 10 s). */
const REVIEW_TIMEOUT_MS = 10_000;

interface TokenReview {
  status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }; error?: string };
}

export class ApiTokenReviewer extends TokenReviewer {
  constructor(private readonly api: ApiServer) {
    super();
  }

  async review(token: string): Promise<UserInfo | undefined> {
    const r = await this.api.request<TokenReview>('/apis/authentication.k8s.io/v1/tokenreviews', {
      method: 'POST',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      timeoutMs: REVIEW_TIMEOUT_MS,
    });
    const s = r.status;
    if (!s?.authenticated || !s.user?.username) return undefined;
    return { name: s.user.username, groups: s.user.groups ?? [], ...(s.user.uid ? { uid: s.user.uid } : {}), ...(s.user.extra ? { extra: s.user.extra } : {}) };
  }
}

interface SubjectAccessReview {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

export class ApiAccessReviewer extends AccessReviewer {
  constructor(private readonly api: ApiServer) {
    super();
  }

  async review(a: NodeRequestAttributes): Promise<{ allowed: boolean; reason?: string }> {
    const r = await this.api.request<SubjectAccessReview>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      method: 'POST',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          resourceAttributes: { namespace: '', verb: a.verb, group: '', version: a.apiVersion, resource: a.resource, subresource: a.subresource, name: a.name },
          user: a.user.name,
          groups: a.user.groups,
          ...(a.user.uid ? { uid: a.user.uid } : {}),
          ...(a.user.extra ? { extra: a.user.extra } : {}),
        },
      },
      timeoutMs: REVIEW_TIMEOUT_MS,
    });
    return { allowed: r.status?.allowed === true, ...(r.status?.reason ? { reason: r.status.reason } : {}) };
  }
}
