/**
 * The CRI over HTTP: `POST /runtime/<Method>` and `POST /image/<Method>`,
 * served by the same CriGateway.call as NATS (cri-nats.responder.ts). A
 * caller may send its deadline in the CRI_TIMEOUT_HEADER header, as over NATS;
 * without it the gateway's own timeouts apply.
 */
import { Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import type { Request, Response } from 'express';
import { CRI_TIMEOUT_HEADER, CriError, httpStatusOf, parseCriTimeout, type CriService } from '@app/cri';
import { Subjects, type ContainerEventsStatusMessage } from '@app/contracts';
import { readJsonBody, toErrorReply } from '@app/service';
import { ContainerEventsRelay } from './container-events.js';
import { CriGateway } from './gateway.js';

@Controller()
export class CriController {
  constructor(private readonly gateway: CriGateway) {}

  @Post('runtime/:method')
  @HttpCode(200)
  runtimeHttp(@Param('method') method: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.overHttp('runtime', method, req, res);
  }

  @Post('image/:method')
  @HttpCode(200)
  imageHttp(@Param('method') method: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.overHttp('image', method, req, res);
  }

  private async overHttp(service: CriService, method: string, req: Request, res: Response): Promise<void> {
    try {
      const timeout = parseCriTimeout(req.get(CRI_TIMEOUT_HEADER));
      if (timeout.problem) throw new CriError('InvalidArgument', `${method}: ${timeout.problem}`);
      const body = await readJsonBody(req);
      res.status(200).json(await this.gateway.call(service, method, body, timeout.ms));
    } catch (err) {
      const reply = toErrorReply(err);
      res.status(err instanceof CriError ? httpStatusOf(err.code) : httpStatusOf(reply.error.code)).json(reply);
    }
  }
}

/** The event relay's state on request: `kubelet.<node>.service.cri-gateway.events`, and `GET /events`. */
@Controller()
export class ContainerEventsController {
  constructor(private readonly relay: ContainerEventsRelay) {}

  @MessagePattern(Subjects.serviceCommand.pattern('events'))
  onStatus(): ContainerEventsStatusMessage {
    return this.relay.status();
  }

  @Get('events')
  getStatus(): ContainerEventsStatusMessage {
    return this.relay.status();
  }
}
