import { Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MessageTypes, Subjects, decodeMessage, isRecord } from '@app/contracts';
import { readJsonBody, rpcError, toErrorReply, writeJson } from '@app/service';
import { PlegRunner, type PlegMode } from './pleg-runner.js';

function parseMode(body: unknown): PlegMode {
  const mode = isRecord(body) ? body['mode'] : undefined;
  if (mode !== 'generic' && mode !== 'evented') throw rpcError('InvalidArgument', `mode must be "generic" or "evented", got ${JSON.stringify(mode ?? null)}`);
  return mode;
}

/** The PLEG's commands, and the runtime's container events. */
@Controller()
export class PlegController {
  constructor(private readonly runner: PlegRunner) {}

  @EventPattern(Subjects.criEvents.pattern)
  onRuntimeEvent(@Payload() data: unknown): Promise<void> {
    return this.runner.onRuntimeMessage(data);
  }

  /** `kubelet.<node>.pleg.inspect.<uid>`: a pod worker asks for one pod's inspection now. */
  @EventPattern(Subjects.plegInspect.pattern)
  onInspectRequest(@Payload() data: unknown): Promise<void> {
    return this.runner.onInspectRequest(decodeMessage(MessageTypes.inspectPod, data));
  }

  /** `kubelet.<node>.service.pleg.mode`: `{}` reads the mode, `{"mode": "evented"}` switches it. */
  @MessagePattern(Subjects.serviceCommand.pattern('mode'))
  onMode(@Payload() data: unknown): unknown {
    if (isRecord(data) && data['mode'] !== undefined) this.runner.setMode(parseMode(data));
    return this.runner.mode;
  }

  @Get('mode')
  getMode(): unknown {
    return this.runner.mode;
  }

  @Post('mode')
  @HttpCode(200)
  async postMode(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    try {
      this.runner.setMode(parseMode(await readJsonBody(req)));
      writeJson(res, 200, this.runner.mode);
    } catch (err) {
      writeJson(res, 400, toErrorReply(err));
    }
  }
}
