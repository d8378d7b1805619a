import type { ApiServer } from '@app/apiserver';
import { TokenRequester, type IssuedToken, type TokenRequestSpec } from '../ports.js';

interface TokenRequest {
  status?: { token?: string; expirationTimestamp?: string };
}

/** TokenRequest through @app/apiserver with the node's credentials. The token is returned, never logged. */
export class ApiTokenRequester extends TokenRequester {
  constructor(private readonly api: Pick<ApiServer, 'request'>) {
    super();
  }

  async request(namespace: string, serviceAccountName: string, spec: TokenRequestSpec): Promise<IssuedToken> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccountName)}/token`;
    const tr = await this.api.request<TokenRequest>(path, { method: 'POST', body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec } });
    const token = tr.status?.token;
    const expiresAt = Date.parse(tr.status?.expirationTimestamp ?? '');
    if (!token || !Number.isFinite(expiresAt)) throw new Error(`the TokenRequest of ${namespace}/${serviceAccountName} came back without a token or its expiration`);
    return { token, expiresAt };
  }
}
