import { Controller, Get } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { MessageTypes, Subjects, decodeMessage, type ApiObjectReplyMessage, type ServiceAccountTokenMessage, type ServiceListMessage, type SourcesSnapshotMessage } from '@app/contracts';
import { rpcError } from '@app/service';
import { ApiObjectError, WatchBasedObjectManager } from './object-manager.js';
import { PodConfigPublisher } from './pod-config-publisher.js';
import { ServiceLister } from './service-lister.js';
import { ServiceAccountTokenManager } from './token-manager.js';

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

/**
 * The objects pods reference and their service account tokens, for
 * pod-worker only (a NATS permission): `kubelet.<node>.service.config-source.object`,
 * `.token` and `.services`, request/reply (ADR 0014).
 * A secret's content is in the reply and nowhere else: not logged, not
 * served over HTTP.
 */
@Controller()
export class ApiObjectsController {
  constructor(
    private readonly objects: WatchBasedObjectManager,
    private readonly tokens: ServiceAccountTokenManager,
    private readonly services: ServiceLister,
  ) {}

  /** The services of a pod's namespace and of `default` (its service environment variables): `.services`, pod-worker only. */
  @MessagePattern(Subjects.serviceList.pattern)
  async onServices(@Payload() data: unknown): Promise<ServiceListMessage> {
    const req = decodeMessage(MessageTypes.serviceListRequest, data);
    try {
      return await this.services.list(req.namespace);
    } catch (err) {
      if (err instanceof ApiObjectError) throw rpcError(err.code, err.message);
      throw err;
    }
  }

  /** A projected serviceAccountToken's token: `kubelet.<node>.service.config-source.token`, pod-worker only. */
  @MessagePattern(Subjects.serviceAccountToken.pattern)
  async onToken(@Payload() data: unknown): Promise<ServiceAccountTokenMessage> {
    const req = decodeMessage(MessageTypes.serviceAccountTokenRequest, data);
    try {
      return await this.tokens.get(req);
    } catch (err) {
      if (err instanceof ApiObjectError) throw rpcError(err.code, err.message);
      throw err;
    }
  }

  @MessagePattern(Subjects.apiObject.pattern)
  async onObject(@Payload() data: unknown): Promise<ApiObjectReplyMessage> {
    const req = decodeMessage(MessageTypes.apiObjectRequest, data);
    try {
      return await this.objects.get({ kind: req.kind, namespace: req.namespace ?? '', name: req.name });
    } catch (err) {
      if (err instanceof ApiObjectError) throw rpcError(err.code, err.message);
      throw err;
    }
  }
}
