/**
 * The CRI over HTTP is not served on the TCP port: whoever can call
 * RunPodSandbox is root on the node, and anyone on the node can reach a
 * loopback port. These routes say where it is instead: on the unix socket
 * CRI_HTTP_SOCKET, with the CRI socket's permissions, when that is set
 * (adapters/cri-http-socket.ts; docs/adr/0012).
 */
import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { Subjects, type ContainerEventsStatusMessage, type ErrorReply } from '@app/contracts';
import { ContainerEventsRelay } from './container-events.js';

@Controller()
export class CriController {
  @Post(['runtime/:method', 'image/:method'])
  @HttpCode(403)
  notOnThisPort(@Param('method') method: string): ErrorReply {
    return {
      error: {
        code: 'PermissionDenied',
        description:
          `${method}: the CRI over HTTP is not served on the TCP port (it is root-equivalent); ` +
          'set CRI_HTTP_SOCKET to serve it on a unix socket with the CRI socket\'s permissions, or use cri.<node>.runtime|image.<Method> over NATS',
      },
    };
  }
}

/** The event relay's state on request: `kubelet.<node>.service.cri-gateway.events`, and `GET /events`. */
@Controller()
export class ContainerEventsController {
  constructor(private readonly relay: ContainerEventsRelay) {}

  @MessagePattern(Subjects.criEventsStatus.pattern)
  onStatus(): ContainerEventsStatusMessage {
    return this.relay.status();
  }

  @Get('events')
  getStatus(): ContainerEventsStatusMessage {
    return this.relay.status();
  }
}
