/**
 * The kubelet's image manager as a container start uses it
 * (pkg/kubelet/images image_manager.go EnsureImageExists: the pull policies
 * and the pull back-off; puller.go pullImage), pulling with the pod's
 * imagePullSecrets (kuberuntime_image.go PullImage, getPullSecretsForPod;
 * the keyring in credentialprovider/keyring.ts). The runtime manager's
 * startContainer calls `ensure` before it creates the container.
 */
import { Clock } from '@app/clock';
import type { Container, EventRecorder, Pod } from '@app/contracts';
import type { CriRuntime } from '@app/cri/client';
import { DockerKeyring, dockerConfigOf, repositoryOf, type PullCredential } from '../credentialprovider/keyring.js';
import { CrashLoopBackOff } from '../kuberuntime/backoff.js';
import type { ImageUser } from '../kuberuntime/security-context.js';
import { ApiObjects } from '../ports.js';

/** Why a container has no image to run (images/types.go): its waiting reason (ErrImagePull, ImagePullBackOff, ErrImageNeverPull, ErrImageInspect) and the message. */
export interface ImageError {
  reason: string;
  message: string;
}

/** The image's user as ImageStatus gives it (containerd: a numeric USER as uid, another as username). */
export function imageUserOf(image: { uid?: { value: string } | undefined; username?: string } | undefined): ImageUser {
  if (image?.uid) return { uid: Number(image.uid.value) };
  return image?.username ? { username: image.username } : {};
}

/**
 * The kubelet's image pull policies (EnsureImageExists) and PullImage with
 * the pod's imagePullSecrets (getPullSecretsForPod, MakeDockerKeyring): the
 * secrets are read from config-source when a pull is needed; one that
 * cannot be read is a FailedToRetrieveImagePullSecret warning and the pull
 * goes on without it.
 */
/** What an ImagePuller is built from. */
export interface ImagePullerDeps {
  cri: CriRuntime;
  events: EventRecorder;
  clock: Clock;
  /** The delays of the pull back-off (ImagePullBackOff), per pod, container and image. */
  pullBackOff: { initialMs: number; maxMs: number };
  /** The pull secrets' source; none: every imagePullSecret is unreadable. */
  objects?: ApiObjects;
}

export class ImagePuller {
  private readonly backOff: CrashLoopBackOff;

  constructor(private readonly deps: ImagePullerDeps) {
    this.backOff = new CrashLoopBackOff(deps.pullBackOff);
  }

  /** getPullSecretsForPod + keyring.Lookup: the credentials to try for `image`, most specific first. */
  private async pullCredentials(pod: Pod, image: string): Promise<PullCredential[]> {
    const configs: Map<string, PullCredential>[] = [];
    const failed: string[] = [];
    for (const ref of pod.spec.imagePullSecrets ?? []) {
      if (!ref.name) continue;
      try {
        const secret = await this.deps.objects?.get('Secret', pod.metadata.namespace ?? 'default', ref.name);
        if (!secret) throw new Error(`secret "${ref.name}" not found`);
        configs.push(dockerConfigOf(secret));
      } catch {
        failed.push(ref.name);
      }
    }
    if (failed.length > 0) {
      this.deps.events.event(pod, 'Warning', 'FailedToRetrieveImagePullSecret', `Unable to retrieve some image pull secrets (${failed.join(', ')}); attempting to pull the image may not succeed.`);
    }
    return configs.length > 0 ? new DockerKeyring(configs).lookup(repositoryOf(image)) : [];
  }

  /** PullImage with each credential in turn until one works (anonymously when there is none); the last failure otherwise. */
  private async pull(pod: Pod, image: string): Promise<string> {
    const creds = await this.pullCredentials(pod, image);
    const errors: string[] = [];
    for (const auth of creds.length > 0 ? creds : [undefined]) {
      try {
        return (await this.deps.cri.image('PullImage', { image: { image }, ...(auth ? { auth: { username: auth.username, password: auth.password } } : {}) })).imageRef;
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
    throw new Error(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
  }

  /** The image ref to run, or the waiting reason that keeps the container from starting. A pull runs to its end (upstream's SyncPod is not cancelled). */
  async ensure(pod: Pod, c: Container): Promise<{ ref: string; user?: ImageUser } | { error: ImageError }> {
    const image = c.image ?? '';
    const policy = c.imagePullPolicy ?? 'IfNotPresent';
    const fieldPath = `spec.containers{${c.name}}`;
    let present: string | undefined;
    let user: ImageUser | undefined;
    try {
      const status = (await this.deps.cri.image('ImageStatus', { image: { image } })).image;
      present = status?.id;
      user = imageUserOf(status);
    } catch (err) {
      return { error: { reason: 'ErrImageInspect', message: `Failed to inspect image "${image}": ${(err as Error).message}` } };
    }
    if (present && policy !== 'Always') {
      this.deps.events.event(pod, 'Normal', 'Pulled', `Container image "${image}" already present on machine`, fieldPath);
      return { ref: present, user };
    }
    if (!present && policy === 'Never') {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      this.deps.events.event(pod, 'Warning', 'ErrImageNeverPull', message, fieldPath);
      return { error: { reason: 'ErrImageNeverPull', message } };
    }
    const key = `${pod.metadata.uid ?? ''}/${c.name}/${image}`;
    const now = this.deps.clock.now();
    if (this.backOff.inBackOffSinceUpdate(key, now).backingOff) {
      const message = `Back-off pulling image "${image}"`;
      this.deps.events.event(pod, 'Normal', 'BackOff', message, fieldPath);
      return { error: { reason: 'ImagePullBackOff', message } };
    }
    this.deps.events.event(pod, 'Normal', 'Pulling', `Pulling image "${image}"`, fieldPath);
    const started = this.deps.clock.now();
    try {
      const ref = await this.pull(pod, image);
      this.backOff.reset(key);
      this.backOff.gc(this.deps.clock.now()); // upstream's imageManager GCs its back-off after each pull
      this.deps.events.event(pod, 'Normal', 'Pulled', `Successfully pulled image "${image}" in ${this.deps.clock.now() - started}ms`, fieldPath);
      return { ref };
    } catch (err) {
      this.backOff.next(key, this.deps.clock.now());
      const message = `Failed to pull image "${image}": ${(err as Error).message}`;
      this.deps.events.event(pod, 'Warning', 'Failed', message, fieldPath);
      return { error: { reason: 'ErrImagePull', message } };
    }
  }
}
