/**
 * What every service gets from the bootstrap, as Nest providers: its typed
 * config, logger, metrics registry, NATS connection and bus, KV buckets and
 * health checks. Apps inject the narrow piece they need.
 */
import type { BucketId, KV, NatsConnection } from '@app/nats';
import type { LeaderElector } from '@app/leader-election';
import { NatsBus } from '@app/nats';
import type { Logger, Registry } from '@app/observability';
import type { SharedConfig } from '@app/config';
import type { ContractClaim, PeerOutsidePolicy } from '@app/contracts';
import type { HealthChecks } from './health.js';

export interface ServiceIdentity {
  service: string;
  node: string;
  instance: string;
  connectionName: string;
  startedAt: Date;
  /** The build's version (package.json's; the image's VERSION build argument stamps it): what a rolling upgrade changes. */
  version: string;
}

export interface ServiceContext<C extends SharedConfig = SharedConfig> {
  identity: ServiceIdentity;
  config: C;
  logger: Logger;
  metrics: Registry;
  connection: NatsConnection;
  bus: NatsBus;
  buckets: Partial<Record<BucketId, KV>>;
  health: HealthChecks;
  /** Subjects this instance subscribes to (the transport's and those added). */
  subjects: () => readonly string[];
  /** The contract version this instance speaks, the range it accepts and the peers it heard outside it (docs/adr/0034). */
  contract: () => ContractClaim & { peersOutsidePolicy: PeerOutsidePolicy[] };
  /** Records subjects subscribed to outside the transport (dynamic or hot-path subscriptions). */
  addSubjects: (subjects: readonly string[]) => void;
  /** Single-active services only: the leader election (also provided as LeaderElector and LeaderFence). */
  leadership?: LeaderElector;
}

/** Injection tokens (symbols, since most of these are interfaces). */
export const SERVICE_CONTEXT = Symbol('SERVICE_CONTEXT');
export const SERVICE_CONFIG = Symbol('SERVICE_CONFIG');
export const SERVICE_LOGGER = Symbol('SERVICE_LOGGER');
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');
export const NATS_CONNECTION = Symbol('NATS_CONNECTION');

/** A KV bucket the service declared in its definition's `buckets`; throws when it did not. */
export function bucketOf(ctx: Pick<ServiceContext, 'buckets' | 'identity'>, id: BucketId): KV {
  const kv = ctx.buckets[id];
  if (!kv) throw new Error(`${ctx.identity.service} uses the ${id} bucket but does not declare it in its definition's buckets (main.ts)`);
  return kv;
}
