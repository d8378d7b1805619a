/**
 * Who may use a service's HTTP port. Its routes serve pod specs (whose env
 * may hold secrets: sync-loop and status-manager `/pods`, config-source
 * `/sources`) or act (pleg `POST /mode`), so, as upstream disabled the
 * kubelet's unauthenticated read-only port for this reason:
 *  - on loopback (HOST 127.0.0.1, the default) they are served to root and
 *    to the service's own user only: the client socket's owner is read from
 *    the kernel's socket table (peer-uid.ts), so an unprivileged local user
 *    cannot read what the root-only CRI socket would not show them
 *    (container logs, pod specs) nor act (pleg `POST /mode`);
 *  - off loopback they need `Authorization: Bearer <token>`, the token being
 *    the content of HTTP_TOKEN_FILE; without a token file they answer 403;
 *  - with HTTP_TOKEN_FILE set, the token is needed on loopback too (local
 *    users are then kept out as well).
 * `/healthz`, `/readyz` and `/metrics` stay open: health checks and scrapes
 * need them and they serve nothing about pods. docs/adr/0012.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { readSecretFile } from '@app/config';
import { type PeerUidLookup, procPeerUid } from './peer-uid.js';

/** Paths served to anyone who can reach the port. */
export const OPEN_PATHS: readonly string[] = ['/healthz', '/readyz', '/metrics'];

/** Whether an HTTP bind address is loopback only. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return /^::ffff:127\./.test(h);
}

export interface HttpAccess {
  /** Why the port is open or closed, for the start log. */
  readonly summary: string;
  /** Express-style middleware: answers 401/403 itself, or calls next(). */
  middleware(this: void, req: IncomingMessage, res: ServerResponse, next: () => void): void;
}

/** Reads HTTP_TOKEN_FILE (a ConfigError when unreadable or empty). */
export function readHttpToken(file: string | undefined): string | undefined {
  return readSecretFile('HTTP_TOKEN_FILE', file);
}

export interface HttpAccessOptions {
  /** Who owns the client's socket (default: the kernel's socket tables). */
  peerUid?: PeerUidLookup;
  /** The service's own uid, let in on loopback beside root (default: process.getuid()). */
  ownUid?: number;
}

export function httpAccess(host: string, token: string | undefined, options: HttpAccessOptions = {}): HttpAccess {
  const loopback = isLoopbackHost(host);
  const peerUid = options.peerUid ?? procPeerUid;
  const ownUid = options.ownUid ?? process.getuid?.() ?? 0;
  const trusted = new Set([0, ownUid]);
  const expected = token === undefined ? undefined : Buffer.from(`Bearer ${token}`);
  const summary =
    expected !== undefined
      ? 'every route but /healthz, /readyz and /metrics needs Authorization: Bearer <HTTP_TOKEN_FILE>'
      : loopback
        ? `loopback only: every route is served to uid ${[...trusted].join(' and ')} (others: only /healthz, /readyz and /metrics)`
        : `HOST ${host} is not loopback and HTTP_TOKEN_FILE is unset: only /healthz, /readyz and /metrics are served`;
  const refuse = (res: ServerResponse, status: 401 | 403, description: string) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}) });
    res.end(JSON.stringify({ error: { code: status === 401 ? 'Unauthenticated' : 'PermissionDenied', description } }));
  };
  /** A connection's owner never changes: looked up once per kept-alive socket. */
  const owners = new WeakMap<object, Promise<number | undefined>>();
  const ownerOf = (s: IncomingMessage['socket']) => {
    let owner = owners.get(s);
    if (!owner) {
      owner =
        s.remoteAddress && s.remotePort && s.localAddress && s.localPort
          ? peerUid({ address: s.remoteAddress, port: s.remotePort }, { address: s.localAddress, port: s.localPort }).catch(() => undefined)
          : Promise.resolve(undefined);
      owners.set(s, owner);
    }
    return owner;
  };
  const admitLocal = async (req: IncomingMessage, res: ServerResponse, path: string, next: () => void) => {
    const uid = await ownerOf(req.socket);
    if (uid !== undefined && trusted.has(uid)) return next();
    const who = uid === undefined ? 'a client whose user could not be found in /proc/net/tcp' : `uid ${uid}`;
    refuse(res, 403, `${path} serves pod data or acts: on loopback it is served to uid ${[...trusted].join(' and ')} only, not to ${who} (set HTTP_TOKEN_FILE to let others in with the token)`);
  };
  return {
    summary,
    middleware(req, res, next) {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (OPEN_PATHS.includes(path)) return next();
      if (expected === undefined) {
        if (loopback) return void admitLocal(req, res, path, next);
        return refuse(res, 403, `${path} serves pod data or acts: off loopback it needs HTTP_TOKEN_FILE set and Authorization: Bearer <token>`);
      }
      const given = Buffer.from(req.headers.authorization ?? '');
      if (given.length === expected.length && timingSafeEqual(given, expected)) return next();
      return refuse(res, 401, `${path} needs Authorization: Bearer <the token in HTTP_TOKEN_FILE>`);
    },
  };
}
