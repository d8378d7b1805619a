import { Module } from '@nestjs/common';

/** GenericPLEG (and Evented PLEG where the runtime streams events) and the pod cache. */
@Module({})
export class PlegModule {}
