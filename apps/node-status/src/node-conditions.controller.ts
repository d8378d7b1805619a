import { Controller, Inject } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { MessageTypes, Subjects, type NodeConditionsMessage } from '@app/contracts';
import { SERVICE_CONFIG } from '@app/service';
import type { NodeStatusConfig } from './node-status.config.js';
import { NodeConditionsReader } from './ports.js';

/**
 * The Node's conditions over NATS, read-only (Subjects.nodeConditions): what
 * `kubectl get nodes` shows as STATUS, asked of the node itself by the
 * console's fleet page from the hub. Every instance answers; only the leader
 * keeps the Node, so a standby says `leading: false` and no conditions. A
 * node without an apiserver (KUBECONFIG unset) keeps no Node: none either.
 */
@Controller()
export class NodeConditionsController {
  constructor(
    private readonly reader: NodeConditionsReader,
    @Inject(SERVICE_CONFIG) private readonly cfg: NodeStatusConfig,
  ) {}

  @MessagePattern(Subjects.nodeConditions.pattern)
  conditions(): NodeConditionsMessage {
    const { leading, conditions } = this.reader.read();
    return { type: MessageTypes.nodeConditions, node: this.cfg.NODE_NAME, leading, conditions: [...conditions] };
  }
}
