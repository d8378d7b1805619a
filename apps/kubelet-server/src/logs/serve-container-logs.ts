/**
 * One `GET /containerLogs/<namespace>/<pod>/<container>` answered on a raw
 * HTTP response: the log server's reply, shared by the plain port's route
 * (logs.controller.ts) and the kubelet API server's
 * (../kubelet-server/kubelet-server.ts). text/plain, streamed; every error is
 * answered before a byte of the log (server.go getContainerLogs).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '@app/clock';
import type { Logger } from '@app/observability';
import { ContainerLogsError, type ContainerLogs } from './container-logs.js';
import { LogOptionsError, parseLogOptions } from './cri-log.js';

export interface ContainerLogTarget {
  namespace: string;
  pod: string;
  container: string;
}

export async function serveContainerLogs(
  deps: { logs: ContainerLogs; clock: Clock; logger: Logger },
  target: ContainerLogTarget,
  query: Record<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { namespace, pod, container } = target;
  const fail = (status: number, message: string) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ statusCode: status, message }));
  };
  let stream;
  try {
    stream = await deps.logs.open(namespace, pod, container, parseLogOptions(query, deps.clock.now()));
  } catch (err) {
    if (err instanceof ContainerLogsError) return fail(err.status, err.message);
    if (err instanceof LogOptionsError) return fail(400, err.message);
    return fail(500, `reading the logs of ${namespace}/${pod}/${container}: ${(err as Error).message}`);
  }
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  req.on('aborted', () => gone.abort());
  res.writeHead(200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked', 'x-content-type-options': 'nosniff' });
  res.flushHeaders();
  const sink = {
    write: (chunk: Buffer) =>
      new Promise<void>((resolve) => {
        if (chunk.length === 0 || res.write(chunk)) return resolve();
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      }),
  };
  try {
    await stream.run(sink, gone.signal);
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, namespace, pod, container }, 'streaming a container log failed');
  }
  res.end();
}
