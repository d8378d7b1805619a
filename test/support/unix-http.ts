/** HTTP over a unix socket (fetch has no socketPath): what `curl --unix-socket` does, for the CRI over HTTP. */
import { request } from 'node:http';

export interface UnixResponse {
  status: number;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

/** A fetch for one unix socket: `path` is the request path (`/runtime/Version`). */
export function unixFetch(socketPath: string) {
  return (path: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<UnixResponse> =>
    new Promise((resolve, reject) => {
      const req = request({ socketPath, path, method: init.method ?? 'GET', headers: { host: 'cri', ...init.headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, text: () => Promise.resolve(text), json: () => Promise.resolve(JSON.parse(text) as unknown) });
        });
      });
      req.on('error', reject);
      req.end(init.body ?? '');
    });
}
