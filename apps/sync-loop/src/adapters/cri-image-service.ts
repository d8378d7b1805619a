import { statfs } from 'node:fs/promises';
import type { CriRuntime } from '@app/cri';
import type { LeaderFence } from '@app/leader-election';
import { ImageFs, ImageService, type GcImage, type ImageFsStats } from '../ports.js';

/** The runtime's images through the CRI; removing one is the leader's only. */
export class CriImageService extends ImageService {
  constructor(
    private readonly cri: CriRuntime,
    private readonly fence: LeaderFence,
  ) {
    super();
  }
  async listImages(): Promise<GcImage[]> {
    const res = await this.cri.image('ListImages', {});
    return res.images.map((i) => ({ id: i.id, repoTags: i.repoTags, repoDigests: i.repoDigests, size: Number(i.size) || 0, pinned: i.pinned }));
  }
  /** Every container, not only this node's: on a runtime shared by several nodes' stacks, another's image is in use too. */
  async containerImages(): Promise<string[]> {
    const res = await this.cri.runtime('ListContainers', {});
    return res.containers.flatMap((c) => [c.imageId || c.imageRef, c.image?.image ?? ''].filter((r) => r !== ''));
  }
  async sandboxImage(): Promise<string | undefined> {
    const res = await this.cri.runtime('Status', { verbose: true });
    return sandboxImageOf(res.info);
  }
  async removeImage(id: string): Promise<void> {
    this.fence.check('remove an image');
    await this.cri.image('RemoveImage', { image: { image: id } });
  }
}

/** containerd's verbose Status: `info.config` is its CRI plugin's configuration, with `sandboxImage`. */
export function sandboxImageOf(info: Readonly<Record<string, string>>): string | undefined {
  try {
    const config = JSON.parse(info['config'] ?? '{}') as { sandboxImage?: unknown };
    return typeof config.sandboxImage === 'string' && config.sandboxImage !== '' ? config.sandboxImage : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The image filesystem as cadvisor measures it: ImageFsInfo's first image
 * filesystem (its used bytes and mountpoint), and statfs of that mountpoint
 * for capacity and available bytes. The mountpoint must be visible to this
 * process (compose mounts containerd's root): a wrong filesystem would be a
 * wrong usage, so an invisible one is an error, not a guess.
 */
export class CriImageFs extends ImageFs {
  constructor(
    private readonly cri: CriRuntime,
    private readonly statfsOf: (path: string) => Promise<{ capacityBytes: number; availableBytes: number }> = statfsBytes,
  ) {
    super();
  }
  async stats(): Promise<ImageFsStats> {
    const res = await this.cri.image('ImageFsInfo', {});
    const fs = res.imageFilesystems[0];
    if (!fs) throw new Error('imageFs information is unavailable');
    const mountpoint = fs.fsId?.mountpoint ?? '';
    if (!mountpoint) throw new Error('the runtime names no mountpoint for its image filesystem: its capacity is unknown');
    const bounds = await this.statfsOf(mountpoint).catch((err: unknown) => {
      throw new Error(`get filesystem info of the image filesystem ${mountpoint}: ${(err as Error).message}`);
    });
    const used = Number(fs.usedBytes?.value);
    return { ...bounds, mountpoint, ...(Number.isFinite(used) ? { usedBytes: used } : {}) };
  }
}

async function statfsBytes(path: string): Promise<{ capacityBytes: number; availableBytes: number }> {
  const s = await statfs(path);
  return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize };
}
