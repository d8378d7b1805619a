/**
 * Services read HTTP bodies themselves (Nest's body parser is off), so that
 * a body that is not JSON gets the same `{error:{code, description}}` reply
 * as a bad NATS message, instead of a framework-shaped 400.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MessageError } from '@app/contracts';

const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** The request body parsed as JSON; an empty body is `{}`. Throws MessageError. */
export async function readJsonBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > maxBytes) throw new MessageError(`body is larger than ${maxBytes} bytes`);
    chunks.push(buf);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new MessageError(`body is not JSON: ${(err as Error).message}`);
  }
}

/** Answers `status` with `body` as JSON (a handler that took the response with `@Res()`). */
export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
