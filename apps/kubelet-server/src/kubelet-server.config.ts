import { env } from '@app/config';
import type { FullConfig } from '@app/service';
import { statsConfigSchema } from './stats/stats.config.js';

const IP = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)$/;

/**
 * kubelet-server's environment variables, on top of the shared ones: the
 * kubelet API server's settings (upstream's --port, --address,
 * --client-ca-file, --tls-cert-file, --tls-private-key-file, --cert-dir,
 * --anonymous-auth, --authorization-mode), where the pods' directories and
 * logs are, and the stats routes'. PORT is the plain read port (upstream's
 * --read-only-port, here on loopback): /pods, /containerLogs, /stats/summary.
 */
export const kubeletServerConfigSchema = {
  KUBECONFIG: env.optionalString({ describe: 'kubeconfig of the apiserver, when the node joins a cluster: TokenReviews and SubjectAccessReviews' }),
  NODE_IP: env.string({ default: '127.0.0.1', describe: 'the node\'s IP: the kubelet API server binds it unless KUBELET_SERVER_ADDRESS says otherwise' }),
  POD_ROOT_DIR: env.string({ default: '/var/lib/kubelet-split/pods', describe: 'the pods\' directories (as pod-worker\'s): their volumes\' figures in /stats/summary' }),
  ...statsConfigSchema,
  CONSOLE_URL: env.url(['http', 'https'], { default: 'http://127.0.0.1:10319', describe: 'where GET /console on the read port sends a browser: the console app\'s port' }),
  KUBELET_SERVER_PORT: env.int({ default: 10250, min: 0, max: 65535, describe: 'the kubelet API server\'s HTTPS port (--port); 0: off' }),
  KUBELET_SERVER_ADDRESS: env.string({ default: '', pattern: new RegExp(`^$|${IP.source}`), patternHint: 'an IPv4 or IPv6 address', describe: 'the address the kubelet API server binds (--address); default: NODE_IP' }),
  KUBELET_CLIENT_CA_FILE: env.optionalString({ describe: 'client certificates signed by this CA authenticate as user CN, groups O (--client-ca-file)' }),
  KUBELET_TLS_CERT_FILE: env.optionalString({ describe: 'the kubelet API server\'s serving certificate (--tls-cert-file); with KUBELET_TLS_PRIVATE_KEY_FILE' }),
  KUBELET_TLS_PRIVATE_KEY_FILE: env.optionalString({ describe: 'the serving certificate\'s key (--tls-private-key-file)' }),
  KUBELET_CERT_DIR: env.string({ default: '/var/lib/kubelet-split/pki', describe: 'where a self-signed kubelet.crt/kubelet.key is made once when no TLS files are given (--cert-dir)' }),
  KUBELET_ANONYMOUS_AUTH: env.string({ default: 'false', pattern: /^(true|false)$/, patternHint: 'true or false', describe: 'requests without credentials are system:anonymous, then authorized (--anonymous-auth)' }),
  ENABLE_SYSTEM_LOG_HANDLER: env.string({ default: 'true', pattern: /^(true|false)$/, patternHint: 'true or false', describe: 'serve the node\'s log files at /logs/ on the kubelet API server to users allowed nodes/log (--enable-system-log-handler)' }),
  SYSTEM_LOG_DIR: env.string({ default: '/var/log', describe: 'the directory /logs/ serves (the kubelet\'s /var/log)' }),
  KUBELET_AUTHORIZATION_MODE: env.oneOf(['Webhook', 'AlwaysAllow'] as const, { default: 'Webhook', describe: 'Webhook: a SubjectAccessReview per request; AlwaysAllow: any authenticated user (--authorization-mode)' }),
};

export type KubeletServerConfig = FullConfig<typeof kubeletServerConfigSchema>;
