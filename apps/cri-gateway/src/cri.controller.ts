/**
 * The CRI's two faces: `cri.<node>.runtime.<Method>` / `cri.<node>.image.<Method>`
 * over NATS request/reply, and `POST /runtime/<Method>` / `POST /image/<Method>`
 * over HTTP. Both go to the same CriGateway.call.
 */
import { Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { Ctx, MessagePattern, NatsContext, Payload } from '@nestjs/microservices';
import type { Request, Response } from 'express';
import { Subjects } from '@app/contracts';
import { CriError, httpStatusOf, type CriService } from '@app/cri';
import { readJsonBody, rpcError, toErrorReply } from '@app/service';
import { CriGateway } from './gateway.js';

@Controller()
export class CriController {
  constructor(private readonly gateway: CriGateway) {}

  @MessagePattern(Subjects.criRuntime.pattern)
  onRuntime(@Payload() request: unknown, @Ctx() ctx: NatsContext): Promise<unknown> {
    return this.overNats('runtime', Subjects.criRuntime.parse(ctx.getSubject())?.method, request);
  }

  @MessagePattern(Subjects.criImage.pattern)
  onImage(@Payload() request: unknown, @Ctx() ctx: NatsContext): Promise<unknown> {
    return this.overNats('image', Subjects.criImage.parse(ctx.getSubject())?.method, request);
  }

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

  private async overNats(service: CriService, method: string | undefined, request: unknown): Promise<unknown> {
    try {
      return await this.gateway.call(service, method ?? '', request);
    } catch (err) {
      const { error } = toErrorReply(err);
      throw rpcError(error.code, error.description);
    }
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
