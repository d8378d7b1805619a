/**
 * The kubelet's image garbage collector: pkg/kubelet/images/image_gc_manager.go
 * (realImageGCManager) and the image half of kubelet.go StartGarbageCollection.
 *
 * One pass (GarbageCollect), every IMAGE_GC_PERIOD (5 minutes) on the sync
 * loop's leader (ADR 0014):
 *
 *   detectImages          ListImages and every container of the runtime (any
 *                         state, any node: GetPods(all=true)); a new image gets
 *                         firstDetected = now, an image a container uses gets
 *                         lastUsed = now; records of images gone are dropped
 *   imagesInEvictionOrder the records, less the images in use, the pinned ones
 *                         (CRI Image.pinned) and the runtime's sandbox (pause)
 *                         image, least recently used first (ties: first detected)
 *   freeOldImages         with IMAGE_MAXIMUM_GC_AGE set, once that long has
 *                         passed since the GC began, images unused for longer
 *                         are removed whatever the disk usage
 *   usage                 100 - available * 100 / capacity of the image
 *                         filesystem; at or over the high threshold, free
 *                         capacity * (100 - low) / 100 - available bytes:
 *   freeSpace             in eviction order, skipping images younger than
 *                         IMAGE_MINIMUM_GC_AGE (since first detected), remove
 *                         until enough is freed; too little eligible is
 *                         FreeDiskSpaceFailed ("Failed to garbage collect
 *                         required amount of images...")
 *
 * The image filesystem's usage, decided here: upstream reads used bytes from
 * CRI ImageFsInfo but capacity and available bytes from cadvisor's statfs of
 * the filesystem holding the image filesystem's mountpoint, and the policy only
 * looks at those two. containerd 1.6's ImageFsInfo gives used bytes and inodes
 * and the mountpoint (its snapshotter's root), no capacity; the ImageFs
 * adapter does what cadvisor does, statfs of that mountpoint, which the sync
 * loop must therefore see (docker-compose.yml mounts containerd's root).
 *
 * The pause image: upstream trusts CRI Image.pinned (containerd pins its
 * sandbox_image from 1.7 on). containerd 1.6 does not, so the image the
 * runtime says it makes sandboxes from (Status verbose, config.sandboxImage)
 * is kept as well, by tag, digest or id.
 *
 * The records live in the leader's memory only: a new leader starts them
 * fresh (startTerm), as a restarted kubelet does. Images are then first
 * detected at the takeover, so none is removed for space before
 * IMAGE_MINIMUM_GC_AGE has passed under the new leader.
 */
import type { Clock } from '@app/clock';
import type { EventRecorder } from '@app/contracts';
import type { Logger } from '@app/observability';
import type { GcImage, ImageFs, ImageService } from '../ports.js';

/** images.ImageGCPolicy; the kubelet's defaults are 85 / 80 %, MinAge 2m, MaxAge 0 (off). */
export interface ImageGCPolicy {
  /** Any usage at or above this always triggers a collection (--image-gc-high-threshold). */
  highThresholdPercent: number;
  /** A collection frees down to this usage (--image-gc-low-threshold). */
  lowThresholdPercent: number;
  /** An image first detected less than this ago is never removed for space (--minimum-image-gc-age). */
  minAgeMs: number;
  /** An image unused for longer than this is removed whatever the usage; 0: off (imageMaximumGCAge). */
  maxAgeMs: number;
}

export const DEFAULT_IMAGE_GC_POLICY: ImageGCPolicy = Object.freeze({ highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 2 * 60_000, maxAgeMs: 0 });

/** The kubelet's configuration checks of the policy (validation.go ValidateKubeletConfiguration); each problem a sentence naming the setting. */
export function imageGCPolicyProblems(p: ImageGCPolicy): string[] {
  const problems: string[] = [];
  const pct = (name: string, v: number) => {
    if (!Number.isInteger(v) || v < 0 || v > 100) problems.push(`${name} ${v} must be between 0 and 100, inclusive`);
  };
  pct('IMAGE_GC_HIGH_THRESHOLD_PERCENT', p.highThresholdPercent);
  pct('IMAGE_GC_LOW_THRESHOLD_PERCENT', p.lowThresholdPercent);
  if (p.lowThresholdPercent >= p.highThresholdPercent) {
    problems.push(`IMAGE_GC_LOW_THRESHOLD_PERCENT ${p.lowThresholdPercent} must be less than IMAGE_GC_HIGH_THRESHOLD_PERCENT ${p.highThresholdPercent}`);
  }
  if (p.minAgeMs < 0) problems.push(`IMAGE_MINIMUM_GC_AGE must not be negative`);
  if (p.maxAgeMs < 0) problems.push(`IMAGE_MAXIMUM_GC_AGE must not be negative`);
  if (p.maxAgeMs > 0 && p.maxAgeMs <= p.minAgeMs) problems.push(`IMAGE_MAXIMUM_GC_AGE (${p.maxAgeMs}ms) must be greater than IMAGE_MINIMUM_GC_AGE (${p.minAgeMs}ms), or 0 (off)`);
  return problems;
}

/** The events of upstream's pkg/kubelet/events for images. */
export const ImageGCEvents = {
  InvalidDiskCapacity: 'InvalidDiskCapacity',
  FreeDiskSpaceFailed: 'FreeDiskSpaceFailed',
  ImageGCFailed: 'ImageGCFailed',
} as const;

/** What is known of an image (imageRecord). Times in ms since the epoch; lastUsed 0: never seen in use. */
export interface ImageRecord {
  firstDetected: number;
  lastUsed: number;
  size: number;
  pinned: boolean;
}

interface EvictionInfo extends ImageRecord {
  id: string;
}

/**
 * A reference as containerd and Docker normalise it: a domain (docker.io when
 * the first component is not one), `library/` for a bare docker.io name, and
 * `:latest` when neither tag nor digest is given.
 */
export function normalizeImageRef(ref: string): string {
  if (ref.startsWith('sha256:')) return ref;
  const slash = ref.indexOf('/');
  const first = slash < 0 ? '' : ref.slice(0, slash);
  const hasDomain = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost');
  let name = hasDomain ? ref : `docker.io/${slash < 0 ? 'library/' : ''}${ref}`;
  const last = name.slice(name.lastIndexOf('/') + 1);
  if (!last.includes(':') && !last.includes('@')) name += ':latest';
  return name;
}

/** Whether `ref` (a name, a digested name or an id) names `image`. */
export function imageMatches(image: GcImage, ref: string): boolean {
  if (ref === image.id) return true;
  const want = normalizeImageRef(ref);
  return [...image.repoTags, ...image.repoDigests].some((r) => normalizeImageRef(r) === want);
}

/** What realImageGCManager works with. */
export interface ImageGCManagerDeps {
  images: ImageService;
  imageFs: ImageFs;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
  /** metrics.ImageGarbageCollectedTotal: an image removed, by reason. */
  onImageRemoved?: (reason: 'age' | 'space') => void;
}

/** realImageGCManager: the records and one collection pass. */
export class RealImageGCManager {
  /** By image id; the leader's memory only (see the header). */
  private readonly imageRecords = new Map<string, ImageRecord>();

  private readonly images: ImageService;
  private readonly imageFs: ImageFs;
  private readonly events: EventRecorder;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly onImageRemoved: (reason: 'age' | 'space') => void;

  constructor(
    deps: ImageGCManagerDeps,
    readonly policy: ImageGCPolicy = DEFAULT_IMAGE_GC_POLICY,
  ) {
    ({ images: this.images, imageFs: this.imageFs, events: this.events, clock: this.clock, logger: this.logger, onImageRemoved: this.onImageRemoved = () => undefined } = deps);
    const problems = imageGCPolicyProblems(policy);
    if (problems.length > 0) throw new Error(`invalid image GC policy: ${problems.join('; ')}`);
  }

  /** A copy of the records, for tests and diagnostics. */
  records(): Map<string, ImageRecord> {
    return new Map([...this.imageRecords].map(([id, r]) => [id, { ...r }]));
  }

  /** Forgets every record: a new leader starts fresh, as a restarted kubelet. */
  reset(): void {
    this.imageRecords.clear();
  }

  /**
   * detectImages: the records brought up to date with the runtime's images;
   * resolves to the ids of the images that must stay (in use by a container,
   * or the runtime's sandbox image).
   */
  async detectImages(detectTime: number): Promise<{ inUse: Set<string>; sandbox: Set<string> }> {
    const [images, used, sandboxImage] = await Promise.all([this.images.listImages(), this.images.containerImages(), this.images.sandboxImage()]);
    const inUse = new Set<string>();
    const sandbox = new Set<string>();
    for (const image of images) {
      if (used.some((ref) => imageMatches(image, ref))) inUse.add(image.id);
      if (sandboxImage !== undefined && imageMatches(image, sandboxImage)) sandbox.add(image.id);
    }
    const now = this.clock.now();
    const current = new Set<string>();
    for (const image of images) {
      current.add(image.id);
      const record = this.imageRecords.get(image.id) ?? { firstDetected: detectTime, lastUsed: 0, size: 0, pinned: false };
      if (inUse.has(image.id)) record.lastUsed = now;
      record.size = image.size;
      record.pinned = image.pinned;
      this.imageRecords.set(image.id, record);
    }
    for (const id of [...this.imageRecords.keys()]) if (!current.has(id)) this.imageRecords.delete(id);
    return { inUse, sandbox };
  }

  /** imagesInEvictionOrder: the records an image GC may remove, least recently used first. */
  async imagesInEvictionOrder(freeTime: number): Promise<EvictionInfo[]> {
    const { inUse, sandbox } = await this.detectImages(freeTime);
    const out: EvictionInfo[] = [];
    for (const [id, record] of this.imageRecords) {
      if (inUse.has(id) || record.pinned || sandbox.has(id)) continue;
      out.push({ id, ...record });
    }
    return out.sort((a, b) => (a.lastUsed === b.lastUsed ? a.firstDetected - b.firstDetected : a.lastUsed - b.lastUsed));
  }

  /**
   * GarbageCollect: one pass. `beganGC` is when collection began on this
   * leader (IMAGE_MAXIMUM_GC_AGE waits that long first). Throws when the
   * pass failed or could not free enough, after the event upstream records.
   */
  async garbageCollect(beganGC: number): Promise<void> {
    const freeTime = this.clock.now();
    let images = await this.imagesInEvictionOrder(freeTime);
    images = await this.freeOldImages(images, freeTime, beganGC);

    const fs = await this.imageFs.stats();
    const capacity = fs.capacityBytes;
    let available = fs.availableBytes;
    if (available > capacity) {
      this.logger.info({ available, capacity }, 'Availability is larger than capacity');
      available = capacity;
    }
    if (capacity === 0) {
      const message = 'invalid capacity 0 on image filesystem';
      this.events.nodeEvent('Warning', ImageGCEvents.InvalidDiskCapacity, message);
      throw new Error(message);
    }
    const usagePercent = 100 - Math.trunc((available * 100) / capacity);
    if (usagePercent < this.policy.highThresholdPercent) return;

    const amountToFree = Math.trunc((capacity * (100 - this.policy.lowThresholdPercent)) / 100) - available;
    this.logger.info(
      { usage: usagePercent, highThreshold: this.policy.highThresholdPercent, amountToFree, lowThreshold: this.policy.lowThresholdPercent, imageFsUsedBytes: fs.usedBytes, mountpoint: fs.mountpoint },
      'Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold',
    );
    const freed = await this.freeSpace(amountToFree, freeTime, images);
    if (freed < amountToFree) {
      const message = `Failed to garbage collect required amount of images. Attempted to free ${amountToFree} bytes, but only found ${freed} bytes eligible to free.`;
      this.events.nodeEvent('Warning', ImageGCEvents.FreeDiskSpaceFailed, message);
      throw new Error(message);
    }
  }

  /** freeOldImages: with a maximum age, once it has passed since GC began, the images unused for longer go. */
  private async freeOldImages(images: EvictionInfo[], freeTime: number, beganGC: number): Promise<EvictionInfo[]> {
    const maxAge = this.policy.maxAgeMs;
    if (maxAge === 0 || freeTime - beganGC <= maxAge) return images;
    const errors: string[] = [];
    const remaining: EvictionInfo[] = [];
    for (const image of images) {
      if (freeTime - image.lastUsed > maxAge) {
        try {
          await this.freeImage(image, 'age');
          continue;
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
      remaining.push(image);
    }
    if (errors.length > 0) throw new Error(`wanted to free images older than ${maxAge}ms, encountered errors in image deletion: [${errors.join(', ')}]`);
    return remaining;
  }

  /** freeSpace: in eviction order, until `bytesToFree` is freed; resolves to the bytes freed. */
  private async freeSpace(bytesToFree: number, freeTime: number, images: EvictionInfo[]): Promise<number> {
    const errors: string[] = [];
    let spaceFreed = 0;
    for (const image of images) {
      // An image in use got lastUsed = now during this pass.
      if (image.lastUsed >= freeTime) continue;
      // Just pulled, maybe about to be used: not old enough.
      if (freeTime - image.firstDetected < this.policy.minAgeMs) continue;
      try {
        await this.freeImage(image, 'space');
      } catch (err) {
        errors.push((err as Error).message);
        continue;
      }
      spaceFreed += image.size;
      if (spaceFreed >= bytesToFree) break;
    }
    if (errors.length > 0) throw new Error(`wanted to free ${bytesToFree} bytes, but freed ${spaceFreed} bytes space with errors in image deletion: [${errors.join(', ')}]`);
    return spaceFreed;
  }

  private async freeImage(image: EvictionInfo, reason: 'age' | 'space'): Promise<void> {
    this.logger.info({ imageID: image.id, size: image.size, reason }, 'Removing image to free bytes');
    await this.images.removeImage(image.id);
    this.imageRecords.delete(image.id);
    this.onImageRemoved(reason);
  }
}

/**
 * kubelet.go StartGarbageCollection's image half: a pass every period; the
 * first failure in a row is only logged (stats may not be ready yet), a
 * repeated one is also an ImageGCFailed event on the node. Off when the high
 * threshold is 100 % and there is no maximum age, as upstream.
 */
/** What StartGarbageCollection's image half works with. */
export interface ImageGarbageCollectorDeps {
  manager: RealImageGCManager;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
}

export class ImageGarbageCollector {
  private beganGC = 0;
  private prevImageGCFailed = false;

  readonly manager: RealImageGCManager;
  private readonly events: EventRecorder;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(deps: ImageGarbageCollectorDeps) {
    ({ manager: this.manager, events: this.events, clock: this.clock, logger: this.logger } = deps);
  }

  get enabled(): boolean {
    const p = this.manager.policy;
    return !(p.highThresholdPercent === 100 && p.maxAgeMs === 0);
  }

  /** Leadership won: fresh records, and collection begins now. */
  startTerm(): void {
    this.manager.reset();
    this.beganGC = this.clock.now();
    this.prevImageGCFailed = false;
  }

  /** One pass; never throws. Resolves to whether it succeeded. */
  async garbageCollect(): Promise<boolean> {
    try {
      await this.manager.garbageCollect(this.beganGC);
    } catch (err) {
      const message = (err as Error).message;
      if (this.prevImageGCFailed) {
        this.logger.error({ err: message }, 'Image garbage collection failed multiple times in a row');
        this.events.nodeEvent('Warning', ImageGCEvents.ImageGCFailed, message);
      } else {
        this.logger.error({ err: message }, 'Image garbage collection failed once. Stats initialization may not have completed yet');
      }
      this.prevImageGCFailed = true;
      return false;
    }
    if (this.prevImageGCFailed) this.logger.info('Image garbage collection succeeded');
    else this.logger.debug('Image garbage collection succeeded');
    this.prevImageGCFailed = false;
    return true;
  }
}
