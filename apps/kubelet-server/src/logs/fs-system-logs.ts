/**
 * `/logs/` on the kubelet API server: the node's /var/log as Go's
 * http.FileServer(http.Dir("/var/log/")) serves it behind
 * http.StripPrefix("/logs/") (pkg/kubelet/kubelet.go logServer, served by
 * server.go getLogs once authorized as `nodes/log`): a directory is an HTML
 * listing of its entries (directories with a trailing `/`), a directory
 * asked for without its `/` is redirected to it, a file is sent as it is
 * (symlinks followed, as /var/log/containers' are), anything else is 404.
 */
import { createReadStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { KubeletServerError, SystemLogServer } from '../ports.js';

/** One entry of a directory listing. */
export interface ListedEntry {
  name: string;
  directory: boolean;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** dirList: Go's listing, entries sorted by name, each a link relative to the directory. */
export function directoryListing(entries: readonly ListedEntry[]): string {
  const rows = [...entries]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((e) => {
      const name = e.directory ? `${e.name}/` : e.name;
      return `<a href="${escapeHtml(encodeURIComponent(e.name) + (e.directory ? '/' : ''))}">${escapeHtml(name)}</a>\n`;
    });
  return `<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n${rows.join('')}</pre>\n`;
}

/** serveContent's sniffing, for log files: text unless its first 512 bytes hold a NUL (a .gz rotation, a wtmp). */
export function contentTypeOf(head: Buffer): string {
  return head.includes(0) ? 'application/octet-stream' : 'text/plain; charset=utf-8';
}

const notFound = () => new KubeletServerError(404, '404 page not found');

export class FsSystemLogServer extends SystemLogServer {
  constructor(private readonly root: string) {
    super();
  }

  async serve(path: readonly string[], directory: boolean, req: IncomingMessage, res: ServerResponse): Promise<void> {
    // http.Dir refuses a NUL; http.FileServer a `..` element (400 "invalid URL path"): nothing outside the root.
    if (path.some((p) => p === '..' || p.includes('\0') || p.includes('/'))) throw new KubeletServerError(400, 'invalid URL path');
    const file = join(this.root, ...path.filter((p) => p !== '.'));
    const st = await stat(file).catch(() => undefined);
    if (!st) throw notFound();
    if (st.isDirectory()) {
      if (!directory && path.length > 0) {
        // localRedirect: relative to the request, so it works behind the apiserver's node proxy too.
        res.writeHead(301, { location: `${encodeURIComponent(path[path.length - 1] ?? '')}/` });
        res.end();
        return;
      }
      const entries = await readdir(file, { withFileTypes: true });
      const listed = await Promise.all(entries.map(async (e) => ({ name: e.name, directory: e.isDirectory() || (e.isSymbolicLink() && (await stat(join(file, e.name)).catch(() => undefined))?.isDirectory() === true) })));
      const body = directoryListing(listed);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    if (!st.isFile()) throw notFound();
    if (directory) {
      // A file asked for as a directory: redirected to the file, as serveFile does.
      res.writeHead(301, { location: `../${encodeURIComponent(path[path.length - 1] ?? '')}` });
      res.end();
      return;
    }
    const head = Buffer.alloc(Math.min(512, st.size));
    const fh = await open(file, 'r');
    try {
      await fh.read(head, 0, head.length, 0);
    } finally {
      await fh.close();
    }
    res.writeHead(200, { 'content-type': contentTypeOf(head), 'content-length': st.size, 'last-modified': st.mtime.toUTCString() });
    if (req.method === 'HEAD' || st.size === 0) {
      res.end();
      return;
    }
    // The size at stat: a log growing meanwhile is sent as it was, as content-length says.
    await new Promise<void>((resolve, reject) => {
      const stream = createReadStream(file, { start: 0, end: st.size - 1 });
      stream.on('error', reject);
      res.on('close', () => {
        stream.destroy();
        resolve();
      });
      stream.pipe(res);
    });
  }
}
