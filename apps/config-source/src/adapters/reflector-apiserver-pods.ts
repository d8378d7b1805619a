import { Reflector, type ListWatchClient } from '@app/apiserver';
import { Clock } from '@app/clock';
import type { Pod } from '@app/contracts';
import type { Logger } from '@app/observability';
import { ApiserverPods } from '../ports.js';

/**
 * The node's pods through @app/apiserver's Reflector (NewSourceApiserver's
 * ListWatch: `/api/v1/pods?fieldSelector=spec.nodeName=<node>` in every
 * namespace), which relists on 410 Gone and backs off 800 ms .. 30 s while
 * the apiserver is away.
 */
export class ReflectorApiserverPods extends ApiserverPods {
  constructor(
    private readonly client: ListWatchClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    super();
  }

  watch(nodeName: string, onListing: (pods: Pod[]) => void): () => void {
    const reflector = new Reflector<Pod>(this.client, this.clock, this.logger, {
      path: '/api/v1/pods',
      query: { fieldSelector: `spec.nodeName=${nodeName}` },
      onListing,
    });
    reflector.start();
    return () => reflector.stop();
  }
}
