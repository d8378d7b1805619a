/**
 * The CRI over HTTP: `POST /runtime/<Method>` and `POST /image/<Method>`,
 * served by the same CriGateway.call as NATS (cri-nats.responder.ts).
 */
import { Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CriError, httpStatusOf, type CriService } from '@app/cri';
import { readJsonBody, toErrorReply } from '@app/service';
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
      const body = await readJsonBody(req);
      res.status(200).json(await this.gateway.call(service, method, body));
    } catch (err) {
      const reply = toErrorReply(err);
      res.status(err instanceof CriError ? httpStatusOf(err.code) : httpStatusOf(reply.error.code)).json(reply);
    }
  }
}
