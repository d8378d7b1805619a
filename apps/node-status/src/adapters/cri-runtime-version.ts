import type { CriRuntime } from '@app/cri';
import { RuntimeNetworkConfig, RuntimeVersion } from '../ports.js';

/** The runtime's Version call through the CRI: `<runtimeName>://<runtimeVersion>`, as the VersionInfo setter writes it. */
export class CriRuntimeVersion extends RuntimeVersion {
  constructor(private readonly cri: CriRuntime) {
    super();
  }
  async containerRuntimeVersion(): Promise<string> {
    const v = await this.cri.runtime('Version', { version: '' });
    return `${v.runtimeName}://${v.runtimeVersion}`;
  }
}

/** UpdatePodCIDR through the CRI: UpdateRuntimeConfig with the network config's podCidr. */
export class CriRuntimeNetworkConfig extends RuntimeNetworkConfig {
  constructor(private readonly cri: CriRuntime) {
    super();
  }
  async updatePodCIDR(cidrs: string): Promise<void> {
    await this.cri.runtime('UpdateRuntimeConfig', { runtimeConfig: { networkConfig: { podCidr: cidrs } } });
  }
}
