/**
 * The kubelet API server's settings (checked together at boot) and its
 * listener's life: upstream's ListenAndServeKubeletServer
 * (pkg/kubelet/server/server.go), on every instance, leader or not. The
 * server runs when its port is not 0 and the node has a KUBECONFIG
 * (TokenReview, SubjectAccessReview) or a client CA.
 */
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { Clock } from '@app/clock';
import { ConfigError } from '@app/config';
import type { Logger } from '@app/observability';
import { HttpsListener } from './adapters/https-listener.js';
import { loadServingCertificate } from './adapters/serving-cert.js';
import { KubeletAuthenticator, KubeletAuthorizer } from './auth.js';
import type { KubeletServerConfig } from './kubelet-server.config.js';
import { KubeletServer } from './kubelet-server.js';
import { FsSystemLogServer } from './logs/fs-system-logs.js';
import type { AccessReviewer, ContainerLogServer, KubeletPods, NodeStats, StreamingRuntime, SyncLoopMonitorReader, TokenReviewer, UpgradeProxy } from './ports.js';
import { kubeletHealthzChecks } from './healthz.js';

/** The server's settings, resolved and checked together at boot. */
export interface KubeletServerSettings {
  address: string;
  port: number;
  clientCaFile?: string;
  certFile?: string;
  keyFile?: string;
  certDir: string;
  anonymous: boolean;
  authorization: 'Webhook' | 'AlwaysAllow';
}

/**
 * The settings, or undefined when the server is off (port 0, or neither a
 * KUBECONFIG nor a client CA: nothing could authenticate a request).
 * Combinations that cannot work are a ConfigError: the service exits 1 at boot.
 */
export function kubeletServerSettings(cfg: KubeletServerConfig): KubeletServerSettings | undefined {
  const joined = cfg.KUBECONFIG !== undefined && cfg.KUBECONFIG !== '';
  if (cfg.KUBELET_SERVER_PORT === 0 || (!joined && !cfg.KUBELET_CLIENT_CA_FILE)) return undefined;
  const problems: string[] = [];
  if ((cfg.KUBELET_TLS_CERT_FILE === undefined) !== (cfg.KUBELET_TLS_PRIVATE_KEY_FILE === undefined)) problems.push('KUBELET_TLS_CERT_FILE and KUBELET_TLS_PRIVATE_KEY_FILE go together: set both or neither');
  if (!joined && cfg.KUBELET_AUTHORIZATION_MODE === 'Webhook') problems.push('KUBELET_AUTHORIZATION_MODE=Webhook needs KUBECONFIG (SubjectAccessReviews); without a cluster set it to AlwaysAllow');
  if (cfg.KUBELET_ANONYMOUS_AUTH === 'true' && cfg.KUBELET_AUTHORIZATION_MODE === 'AlwaysAllow') problems.push('KUBELET_ANONYMOUS_AUTH=true with KUBELET_AUTHORIZATION_MODE=AlwaysAllow would let anyone exec into the pods');
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    address: cfg.KUBELET_SERVER_ADDRESS || cfg.NODE_IP,
    port: cfg.KUBELET_SERVER_PORT,
    ...(cfg.KUBELET_CLIENT_CA_FILE ? { clientCaFile: cfg.KUBELET_CLIENT_CA_FILE } : {}),
    ...(cfg.KUBELET_TLS_CERT_FILE ? { certFile: cfg.KUBELET_TLS_CERT_FILE } : {}),
    ...(cfg.KUBELET_TLS_PRIVATE_KEY_FILE ? { keyFile: cfg.KUBELET_TLS_PRIVATE_KEY_FILE } : {}),
    certDir: cfg.KUBELET_CERT_DIR,
    anonymous: cfg.KUBELET_ANONYMOUS_AUTH === 'true',
    authorization: cfg.KUBELET_AUTHORIZATION_MODE,
  };
}

/** Listens while the service runs (every instance). */
export class KubeletServerAgent implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly listener: HttpsListener,
    private readonly settings: KubeletServerSettings,
    private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.listener.listen();
    this.logger.info({ address: this.settings.address, port: this.listener.port, clientCa: this.settings.clientCaFile !== undefined, anonymous: this.settings.anonymous, authorization: this.settings.authorization }, 'kubelet API server listening (HTTPS)');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.listener.close();
  }
}

/** What the server is made of: the ports it serves through. */
export interface KubeletServerParts {
  tokens: TokenReviewer | null;
  access: AccessReviewer | null;
  pods: KubeletPods;
  runtime: StreamingRuntime;
  logs: ContainerLogServer;
  stats: NodeStats;
  proxy: UpgradeProxy;
  /** The sync loop's entry time, for `/healthz`'s syncloop check. */
  syncLoopMonitor: SyncLoopMonitorReader;
  clock: Clock;
  cfg: KubeletServerConfig;
  logger: Logger;
}

/** The server and its listener, or null when it is off; a certificate or CA that cannot be read is a ConfigError. */
export function kubeletServerAgent(settings: KubeletServerSettings | null, parts: KubeletServerParts): KubeletServerAgent | null {
  const { tokens, access, pods, runtime, logs, stats, proxy, syncLoopMonitor, clock, cfg, logger } = parts;
      if (!settings) return null;
      const log = logger.child({ component: 'kubelet-server' });
      const read = (what: string, file: string) => {
        try {
          return readFileSync(file);
        } catch (err) {
          throw new ConfigError([`${what} ${file} cannot be read: ${(err as Error).message}`]);
        }
      };
      const clientCa = settings.clientCaFile ? read('KUBELET_CLIENT_CA_FILE', settings.clientCaFile) : undefined;
      const serving = loadServingCertificate({ ...(settings.certFile ? { certFile: settings.certFile } : {}), ...(settings.keyFile ? { keyFile: settings.keyFile } : {}), certDir: settings.certDir, nodeName: cfg.NODE_NAME, nodeIP: cfg.NODE_IP });
      if (serving.generated) log.info({ cert: serving.certFile, key: serving.keyFile }, 'made a self-signed serving certificate for the kubelet API server');
      const authenticator = new KubeletAuthenticator(tokens, clock, { anonymous: settings.anonymous, x509: clientCa !== undefined });
      const authorizer = new KubeletAuthorizer(settings.authorization === 'Webhook' ? access : null, clock);
      const systemLogs = cfg.ENABLE_SYSTEM_LOG_HANDLER === 'true' ? new FsSystemLogServer(cfg.SYSTEM_LOG_DIR) : undefined;
      const server = new KubeletServer({ authenticator, authorizer, pods, runtime, logs, stats, proxy, healthz: kubeletHealthzChecks(syncLoopMonitor, () => clock.now()), logger: log, ...(systemLogs ? { systemLogs } : {}) }, cfg.NODE_NAME);
      return new KubeletServerAgent(new HttpsListener(server, { address: settings.address, port: settings.port, cert: serving.cert, key: serving.key, ...(clientCa ? { clientCa } : {}) }, log), settings, log);
}
