import { env } from '@app/config';

const IP = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)$/;

/**
 * The kubelet API server's settings (upstream's --port, --address,
 * --client-ca-file, --tls-cert-file, --tls-private-key-file, --cert-dir,
 * --anonymous-auth, --authorization-mode), spread into status-manager's
 * schema (status-manager.config.ts).
 */
export const kubeletServerConfigSchema = {
  KUBELET_SERVER_PORT: env.int({ default: 10250, min: 0, max: 65535, describe: 'the kubelet API server\'s HTTPS port (--port); 0: off' }),
  KUBELET_SERVER_ADDRESS: env.string({ default: '', pattern: new RegExp(`^$|${IP.source}`), patternHint: 'an IPv4 or IPv6 address', describe: 'the address the kubelet API server binds (--address); default: NODE_IP' }),
  KUBELET_CLIENT_CA_FILE: env.optionalString({ describe: 'client certificates signed by this CA authenticate as user CN, groups O (--client-ca-file)' }),
  KUBELET_TLS_CERT_FILE: env.optionalString({ describe: 'the kubelet API server\'s serving certificate (--tls-cert-file); with KUBELET_TLS_PRIVATE_KEY_FILE' }),
  KUBELET_TLS_PRIVATE_KEY_FILE: env.optionalString({ describe: 'the serving certificate\'s key (--tls-private-key-file)' }),
  KUBELET_CERT_DIR: env.string({ default: '/var/lib/kubelet-split/pki', describe: 'where a self-signed kubelet.crt/kubelet.key is made once when no TLS files are given (--cert-dir)' }),
  KUBELET_ANONYMOUS_AUTH: env.string({ default: 'false', pattern: /^(true|false)$/, patternHint: 'true or false', describe: 'requests without credentials are system:anonymous, then authorized (--anonymous-auth)' }),
  KUBELET_AUTHORIZATION_MODE: env.oneOf(['Webhook', 'AlwaysAllow'] as const, { default: 'Webhook', describe: 'Webhook: a SubjectAccessReview per request; AlwaysAllow: any authenticated user (--authorization-mode)' }),
};
