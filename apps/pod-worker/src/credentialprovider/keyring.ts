/**
 * The credentials of an image pull from the pod's imagePullSecrets
 * (pkg/credentialprovider keyring.go BasicDockerKeyring, config.go
 * DockerConfigEntry, secrets/secrets.go MakeDockerKeyring;
 * kuberuntime_image.go PullImage), pure: the secrets come in as config-source
 * gave them, the AuthConfigs to try go out, in upstream's order.
 *
 *   secret (kubernetes.io/dockerconfigjson `.dockerconfigjson`.auths,
 *           kubernetes.io/dockercfg `.dockercfg`)
 *     -> entries { "<registry>[/<path>]": {username, password | auth} }
 *     -> keys: the scheme dropped, `/v1/` and `/v2/` mean the host itself
 *     -> lookup(repo): every key matching the repo (same number of host parts,
 *        each a glob: `*.example.com`; the same port; the key's path a prefix
 *        of the repo's), most specific first (reverse-sorted keys); else, for
 *        a Docker Hub image, the `index.docker.io` entry.
 *
 * A pull tries each matching credential in turn and stops at the first that
 * works; with none it pulls anonymously. Credentials are never logged.
 */
import type { ApiObjectPayload } from '../ports.js';

/** What PullImage's AuthConfig gets from a matching entry (upstream sets these three). */
export interface PullCredential {
  username: string;
  password: string;
}

/** One registry's entry of a docker config (DockerConfigEntry). */
interface DockerConfigEntry {
  username?: string;
  password?: string;
  auth?: string;
  email?: string;
}

const DOCKER_CONFIG_JSON = 'kubernetes.io/dockerconfigjson';
const DOCKERCFG = 'kubernetes.io/dockercfg';
const DEFAULT_REGISTRY_HOST = 'index.docker.io';

/** A pull secret's registries and their credentials; a secret of another type has none. Throws when it cannot be read. */
export function dockerConfigOf(secret: ApiObjectPayload): Map<string, PullCredential> {
  const raw = (key: string) => Buffer.from(secret.data[key] ?? '', 'base64').toString('utf8');
  let entries: Record<string, DockerConfigEntry> | undefined;
  if (secret.secretType === DOCKERCFG && secret.data['.dockercfg']) {
    entries = JSON.parse(raw('.dockercfg')) as Record<string, DockerConfigEntry>;
  } else if (secret.secretType === DOCKER_CONFIG_JSON && secret.data['.dockerconfigjson']) {
    entries = (JSON.parse(raw('.dockerconfigjson')) as { auths?: Record<string, DockerConfigEntry> }).auths;
  }
  const out = new Map<string, PullCredential>();
  for (const [registry, e] of Object.entries(entries ?? {})) {
    let username = e.username ?? '';
    let password = e.password ?? '';
    if (e.auth) {
      // decodeDockerConfigFieldAuth: base64 of "user:password"; it wins over username/password.
      const decoded = Buffer.from(e.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new Error(`the auth of registry ${registry} is not "username:password"`);
      username = decoded.slice(0, colon);
      password = decoded.slice(colon + 1);
    }
    out.set(registry, { username, password });
  }
  return out;
}

/** A schemeless URL's host parts, port and path (ParseSchemelessURL, SplitURL). */
function splitUrl(s: string): { parts: string[]; port: string; path: string } {
  const withoutScheme = s.replace(/^https?:\/\//, '');
  const slash = withoutScheme.indexOf('/');
  const host = slash < 0 ? withoutScheme : withoutScheme.slice(0, slash);
  const path = slash < 0 ? '' : withoutScheme.slice(slash);
  const m = /^(.*):(\d+)$/.exec(host);
  return { parts: (m ? (m[1] ?? '') : host).split('.'), port: m ? (m[2] ?? '') : '', path };
}

/** filepath.Match of one host part: `*` any run, `?` one character, `[...]` a class. */
function globMatch(glob: string, s: string): boolean {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) return false;
      re += `[${glob.slice(i + 1, end).replace(/\\/g, '\\\\')}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`).test(s);
}

/** URLsMatchStr: a keyring key matches a repository. */
export function urlsMatch(glob: string, target: string): boolean {
  const g = splitUrl(glob);
  const t = splitUrl(target);
  if (g.port !== t.port || g.parts.length !== t.parts.length) return false;
  if (!t.path.startsWith(g.path)) return false;
  return g.parts.every((p, i) => globMatch(p, t.parts[i] ?? ''));
}

/** The keyring key of a docker config entry (BasicDockerKeyring.Add). */
function keyringKey(registry: string): string {
  const { parts, port, path } = splitUrl(registry);
  const host = parts.join('.') + (port ? `:${port}` : '');
  const effective = path.startsWith('/v2/') || path.startsWith('/v1/') ? path.slice(3) : path;
  return effective.length > 0 && effective !== '/' ? host + effective : host;
}

/** isDefaultRegistryMatch: the repository is Docker Hub's. */
function isDefaultRegistryMatch(repo: string): boolean {
  const [first, ...rest] = repo.split('/');
  if (!first) return false;
  if (rest.length === 0) return true;
  if (first === 'docker.io' || first === 'index.docker.io') return true;
  return !/[.:]/.test(first);
}

/** The keyring of a pod's pull secrets (MakeDockerKeyring without a node keyring). */
export class DockerKeyring {
  private readonly creds = new Map<string, PullCredential[]>();
  private readonly index: string[];

  constructor(configs: Map<string, PullCredential>[]) {
    for (const cfg of configs) {
      for (const [registry, cred] of cfg) {
        const key = keyringKey(registry);
        this.creds.set(key, [...(this.creds.get(key) ?? []), cred]);
      }
    }
    this.index = [...this.creds.keys()].sort().reverse();
  }

  /** The credentials to try for `repo` (a normalized repository, no tag), most specific first. */
  lookup(repo: string): PullCredential[] {
    const found = this.index.filter((k) => urlsMatch(k, repo)).flatMap((k) => this.creds.get(k) ?? []);
    if (found.length > 0) return found;
    if (isDefaultRegistryMatch(repo)) return this.creds.get(DEFAULT_REGISTRY_HOST) ?? [];
    return [];
  }
}

/**
 * parsers.ParseImageName's repository (distribution's ParseNormalizedNamed
 * Name()): the tag and digest dropped; a name without a registry is Docker
 * Hub's (`busybox` -> `docker.io/library/busybox`).
 */
export function repositoryOf(image: string): string {
  let name = image.split('@')[0] ?? '';
  const lastSlash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  if (colon > lastSlash) name = name.slice(0, colon);
  const [first, ...rest] = name.split('/');
  const isRegistry = rest.length > 0 && (first?.includes('.') || first?.includes(':') || first === 'localhost' || first !== first?.toLowerCase());
  if (isRegistry) return first === 'index.docker.io' ? `docker.io/${rest.join('/')}` : name;
  return rest.length === 0 ? `docker.io/library/${name}` : `docker.io/${name}`;
}
