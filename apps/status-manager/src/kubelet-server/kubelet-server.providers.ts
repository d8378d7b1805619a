/**
 * The kubelet API server's Nest providers, spread into StatusManagerModule's
 * (one provider per port; the adapters are in adapters/). The server runs
 * on every instance, leader or standby (a standby reads `pod-status` afresh
 * for each request, as the plain port's `/pods` does), when its port is not
 * 0 and the node has a KUBECONFIG (TokenReview, SubjectAccessReview) or a
 * client CA; else KubeletServerAgent is null.
 */
import type { OnApplicationBootstrap, OnApplicationShutdown, Provider } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import type { ApiServer } from '@app/apiserver';
import { Clock } from '@app/clock';
import { ConfigError } from '@app/config';
import { DEFAULT_CRI_TIMEOUTS, NatsCriClient } from '@app/cri/client';
import type { Logger } from '@app/observability';
import { SERVICE_CONFIG, SERVICE_CONTEXT, SERVICE_LOGGER, type ServiceContext } from '@app/service';
import { SummaryProvider, renderResourceMetrics } from '@app/stats';
import { API_SERVER } from '../api-ports.js';
import { ContainerLogs } from '../logs/container-logs.js';
import { serveContainerLogs } from '../logs/serve-container-logs.js';
import { LogPods } from '../logs/ports.js';
import type { StatusManagerConfig } from '../status-manager.config.js';
import { StatusManager } from '../status-manager.js';
import { LeaderGate } from '../takeover-replay.js';
import { ApiAccessReviewer, ApiTokenReviewer } from './adapters/api-reviews.js';
import { CriStreamingRuntime } from './adapters/cri-streaming-runtime.js';
import { HttpsListener } from './adapters/https-listener.js';
import { NetUpgradeProxy } from './adapters/net-upgrade-proxy.js';
import { loadServingCertificate } from './adapters/serving-cert.js';
import { KubeletAuthenticator, KubeletAuthorizer } from './auth.js';
import { KubeletServer } from './kubelet-server.js';
import { AccessReviewer, ContainerLogServer, KubeletPods, NodeStats, StreamingRuntime, TokenReviewer, UpgradeProxy } from './ports.js';

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
export function kubeletServerSettings(cfg: StatusManagerConfig): KubeletServerSettings | undefined {
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

const KUBELET_SERVER_SETTINGS = Symbol('KUBELET_SERVER_SETTINGS');

export const kubeletServerProviders: Provider[] = [
  { provide: KUBELET_SERVER_SETTINGS, inject: [SERVICE_CONFIG], useFactory: (cfg: StatusManagerConfig) => kubeletServerSettings(cfg) ?? null },
  { provide: TokenReviewer, inject: [API_SERVER], useFactory: (api: ApiServer | null) => api && new ApiTokenReviewer(api) },
  { provide: AccessReviewer, inject: [API_SERVER], useFactory: (api: ApiServer | null) => api && new ApiAccessReviewer(api) },
  // Exec, Attach, PortForward and ExecSync with the default deadlines (ExecSync without a timeout: the runtime request timeout).
  { provide: StreamingRuntime, inject: [SERVICE_CONTEXT], useFactory: (ctx: ServiceContext) => new CriStreamingRuntime(new NatsCriClient(ctx.connection, ctx.config.NODE_NAME, 'status-manager', DEFAULT_CRI_TIMEOUTS)) },
  { provide: UpgradeProxy, useFactory: () => new NetUpgradeProxy() },
  {
    provide: KubeletPods,
    inject: [StatusManager, LeaderGate, LogPods],
    useFactory: (manager: StatusManager, gate: LeaderGate, logPods: LogPods): KubeletPods => ({
      listPods: async () => {
        if (!gate.isActing) await manager.restore({ readOnly: true });
        return manager.listPods();
      },
      getPod: (namespace, name) => logPods.getPod(namespace, name),
    }),
  },
  {
    provide: ContainerLogServer,
    inject: [ContainerLogs, Clock, SERVICE_LOGGER],
    useFactory: (logs: ContainerLogs, clock: Clock, logger: Logger): ContainerLogServer => ({
      serve: (target, query, req, res) => serveContainerLogs({ logs, clock, logger }, target, query, req, res),
    }),
  },
  {
    provide: NodeStats,
    inject: [SummaryProvider],
    useFactory: (provider: SummaryProvider): NodeStats => ({
      summary: () => provider.summary(),
      resourceMetrics: async () => renderResourceMetrics(await provider.summary().catch(() => undefined)),
    }),
  },
  {
    provide: KubeletServerAgent,
    inject: [KUBELET_SERVER_SETTINGS, TokenReviewer, AccessReviewer, KubeletPods, StreamingRuntime, ContainerLogServer, NodeStats, UpgradeProxy, Clock, SERVICE_CONFIG, SERVICE_LOGGER],
    useFactory: (
      settings: KubeletServerSettings | null,
      tokens: TokenReviewer | null,
      access: AccessReviewer | null,
      pods: KubeletPods,
      runtime: StreamingRuntime,
      logs: ContainerLogServer,
      stats: NodeStats,
      proxy: UpgradeProxy,
      clock: Clock,
      cfg: StatusManagerConfig,
      logger: Logger,
    ) => {
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
      const server = new KubeletServer({ authenticator, authorizer, pods, runtime, logs, stats, proxy, logger: log }, cfg.NODE_NAME);
      return new KubeletServerAgent(new HttpsListener(server, { address: settings.address, port: settings.port, cert: serving.cert, key: serving.key, ...(clientCa ? { clientCa } : {}) }, log), settings, log);
    },
  },
];
