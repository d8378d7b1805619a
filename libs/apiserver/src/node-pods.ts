import { Clock } from '@app/clock';
import type { Pod } from '@app/contracts';
import type { Logger } from '@app/observability';
import { Reflector, type ListWatchClient } from './reflector.js';

/**
 * The node's pods in the apiserver (upstream's podManager view of what the
 * apiserver holds: the status manager's mirror-pod and UID lookups, the
 * node status's mirror pods), over a Reflector: `GET /api/v1/pods?fieldSelector=spec.nodeName=<node>`
 * and its watch (resourceVersion, bookmarks, 410 relists and back-off are
 * the Reflector's). While the apiserver is down the last view is kept.
 */
export class ReflectorApiPods {
  private pods: Pod[] = [];
  private byName = new Map<string, Pod>();
  private byId = new Map<string, Pod>();
  private readonly listeners = new Set<(pods: readonly Pod[]) => void>();
  private readonly reflector: Reflector<Pod>;

  constructor(client: ListWatchClient, clock: Clock, private readonly logger: Logger, node: string) {
    this.reflector = new Reflector<Pod>(client, clock, logger, {
      path: '/api/v1/pods',
      query: { fieldSelector: `spec.nodeName=${node}` },
      onListing: (items) => this.onListing(items),
    });
  }

  get hasSynced(): boolean {
    return this.reflector.hasSynced;
  }

  all(): Pod[] {
    return [...this.pods];
  }

  get(namespace: string, name: string): Pod | undefined {
    return this.byName.get(`${namespace}/${name}`);
  }

  byUid(uid: string): Pod | undefined {
    return this.byId.get(uid);
  }

  subscribe(listener: (pods: readonly Pod[]) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  start(): void {
    this.reflector.start();
  }

  stop(): void {
    this.reflector.stop();
  }

  private onListing(items: Pod[]): void {
    this.pods = items;
    this.byName = new Map(items.map((p) => [`${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`, p]));
    this.byId = new Map(items.flatMap((p) => (p.metadata.uid ? [[p.metadata.uid, p] as [string, Pod]] : [])));
    for (const listener of this.listeners) {
      try {
        listener(items);
      } catch (err) {
        this.logger.error({ err }, 'an ApiPods listener failed');
      }
    }
  }
}
