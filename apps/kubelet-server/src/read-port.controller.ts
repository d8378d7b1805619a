import { Controller, Get, Inject, NotFoundException, Param, Res, ServiceUnavailableException } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { EventMessage, Pod, PodList } from '@app/contracts';
import type { Logger } from '@app/observability';
import { PodReadModel } from '@app/pod-manager';
import { SERVICE_CONFIG, SERVICE_LOGGER } from '@app/service';
import type { KubeletServerConfig } from './kubelet-server.config.js';
import { PodEvents } from './ports.js';

/**
 * The kubelet's read port (upstream's read-only port, server.go
 * InstallDefaultHandlers `/pods`): the node's pods with spec and status,
 * one pod, and a pod's events (the status manager's: asked over NATS).
 * Guarded as every route is (libs/service http-access: loopback for root
 * and the service's user, or the bearer token). `/containerLogs` and the
 * stats routes are logs/ and stats/.
 */
@Controller()
export class ReadPortController {
  constructor(
    private readonly pods: PodReadModel,
    private readonly events: PodEvents,
    @Inject(SERVICE_CONFIG) private readonly cfg: KubeletServerConfig,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  /** The kubelet's `/pods`: a v1 PodList with spec and status. */
  @Get('pods')
  list(): Promise<PodList> {
    return this.pods.listPods();
  }

  @Get('pods/:namespace/:name')
  async pod(@Param('namespace') namespace: string, @Param('name') name: string): Promise<Pod> {
    const pod = await this.pods.getPod(namespace, name);
    if (!pod) throw new NotFoundException(`pod ${namespace}/${name} not found on this node`);
    return pod;
  }

  @Get('pods/:namespace/:name/events')
  async podEvents(@Param('namespace') namespace: string, @Param('name') name: string): Promise<{ items: EventMessage[] }> {
    try {
      return await this.events.eventsOf(namespace, name);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, namespace, name }, 'the status manager did not answer for a pod\'s events');
      throw new ServiceUnavailableException(`the pod's events are the status manager's, which did not answer: ${(err as Error).message}`);
    }
  }

  /** The web console is the console app's: a browser that asks here is sent there. */
  @Get('console')
  console(@Res() res: ServerResponse): void {
    res.writeHead(302, { location: new URL('/console', this.cfg.CONSOLE_URL).toString() });
    res.end();
  }
}
