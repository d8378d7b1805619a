import { Reflector, type ListWatchClient } from '@app/apiserver';
import { Clock } from '@app/clock';
import type { ApiObjectKind } from '@app/contracts';
import type { Logger } from '@app/observability';
import { ApiObjectWatch, type ApiObject, type ApiObjectRef } from '../ports.js';

/** The collection of each kind (`/api/v1/namespaces/<ns>/configmaps`, the cluster's runtimeclasses). */
function collectionPath(kind: ApiObjectKind, namespace: string): string {
  switch (kind) {
    case 'ConfigMap':
      return `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`;
    case 'Secret':
      return `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
    case 'RuntimeClass':
      return '/apis/node.k8s.io/v1/runtimeclasses';
  }
}

/**
 * One object through @app/apiserver's Reflector over its collection with
 * `fieldSelector=metadata.name=<name>` (the watch-based manager's
 * ListWatch; the Node authorizer allows a node exactly this for the
 * secrets and configMaps of its pods), which relists on 410 Gone and
 * backs off 800 ms .. 30 s while the apiserver is away.
 */
export class ReflectorObjectWatch extends ApiObjectWatch {
  constructor(
    private readonly client: ListWatchClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    super();
  }

  watch(ref: ApiObjectRef, onListing: (items: ApiObject[]) => void, onError: (err: Error) => void): () => void {
    const reflector = new Reflector<ApiObject>(this.client, this.clock, this.logger, {
      path: collectionPath(ref.kind, ref.namespace),
      query: { fieldSelector: `metadata.name=${ref.name}` },
      onListing,
      onError,
    });
    reflector.start();
    return () => reflector.stop();
  }
}
