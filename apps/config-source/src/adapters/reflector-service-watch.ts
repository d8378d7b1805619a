import { Reflector, type ListWatchClient } from '@app/apiserver';
import { Clock } from '@app/clock';
import type { Service } from '@app/contracts';
import type { Logger } from '@app/observability';
import { ApiServiceWatch } from '../ports.js';

/**
 * Every Service through @app/apiserver's Reflector over `/api/v1/services`
 * (the Node authorizer lets a node list and watch them, for this), which
 * relists on 410 Gone and backs off 800 ms .. 30 s while the apiserver is away.
 */
export class ReflectorServiceWatch extends ApiServiceWatch {
  constructor(
    private readonly client: ListWatchClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    super();
  }

  watch(onListing: (services: Service[]) => void, onError: (err: Error) => void): () => void {
    const reflector = new Reflector<Service>(this.client, this.clock, this.logger, { path: '/api/v1/services', onListing, onError });
    reflector.start();
    return () => reflector.stop();
  }
}
