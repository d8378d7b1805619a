import { Reflector, type ListWatchClient } from '@app/apiserver';
import type { Clock } from '@app/clock';
import type { Node } from '@app/contracts';
import type { Logger } from '@app/observability';
import { NodeWatch } from '../ports.js';

/** The node's own Node, listed and watched (`fieldSelector=metadata.name=<node>`) by a Reflector: the kubelet's node informer. */
export class ReflectorNodeWatch extends NodeWatch {
  private reflector?: Reflector<Node>;

  constructor(
    private readonly client: ListWatchClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly node: string,
  ) {
    super();
  }

  start(onNode: (node: Node | undefined) => void): void {
    this.reflector?.stop();
    this.reflector = new Reflector<Node>(this.client, this.clock, this.logger, {
      path: '/api/v1/nodes',
      query: { fieldSelector: `metadata.name=${this.node}` },
      onListing: (items) => onNode(items[0]),
    });
    this.reflector.start();
  }

  stop(): void {
    this.reflector?.stop();
    this.reflector = undefined;
  }
}
