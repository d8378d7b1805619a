/**
 * The CLI's connection to read trace records (@app/nats readTraceRecords),
 * as the NATS admin user.
 */
import { readFileSync } from 'node:fs';
import { connect, type NatsConnection } from '@nats-io/transport-node';

export interface TraceSource {
  servers: string[];
  user?: string;
  passwordFile?: string;
}

export async function connectForTraces(src: TraceSource): Promise<NatsConnection> {
  const password = src.passwordFile ? readFileSync(src.passwordFile, 'utf8').trim() : undefined;
  try {
    return await connect({ servers: src.servers, name: 'kubelet-split-cli', ...(password ? { user: src.user ?? 'admin', pass: password } : {}) });
  } catch (err) {
    throw new Error(`cannot reach NATS at ${src.servers.join(',')}: ${(err as Error).message} (--nats sets its URL, --nats-password-file the admin password)`);
  }
}
