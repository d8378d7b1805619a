import { Module } from '@nestjs/common';

/** kuberuntime's remote runtime and image clients: the only process on the CRI socket. */
@Module({})
export class CriGatewayModule {}
