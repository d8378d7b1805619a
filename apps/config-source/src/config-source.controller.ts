import { Controller, Get } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { Subjects, type SourcesSnapshotMessage } from '@app/contracts';
import { PodConfigPublisher } from './pod-config-publisher.js';

/** Each source's current listing: over NATS for the sync loop, over HTTP for people. */
@Controller()
export class SourcesController {
  constructor(private readonly publisher: PodConfigPublisher) {}

  @MessagePattern(Subjects.sourcesSnapshot.pattern)
  onSnapshot(): SourcesSnapshotMessage {
    return this.publisher.snapshot();
  }

  @Get('sources')
  sources(): SourcesSnapshotMessage {
    return this.publisher.snapshot();
  }
}
