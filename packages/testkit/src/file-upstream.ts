import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { posix } from 'node:path';

/** One request as the file upstream saw it. */
export interface FileRequest {
  method: string;
  /** the raw request target, as received */
  url: string;
  /** the path it resolved that target to */
  resolved: string;
  /** how many body bytes arrived */
  bodyBytes: number;
}

export interface FileUpstream {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** every request received so far, oldest first */
  readonly received: FileRequest[];
  close(): Promise<void>;
}

/**
 * How a lax file server resolves a request target: every escape decoded (`%2F` and `%5C` included), `\` read as `/`,
 * `;` parameters dropped, dot segments resolved (never above the root). A path the gateway lets through in any
 * unnormalised form is served here as the file it names, so a routing bypass shows up as content.
 */
export function laxResolve(target: string): string {
  const q = target.indexOf('?');
  let path = q < 0 ? target : target.slice(0, q);
  path = path.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  path = path.replace(/\\/g, '/').replace(/;[^/]*/g, '');
  return posix.normalize(`/${path}`).replace(/\/+$/, '') || '/';
}

/**
 * A real HTTP upstream serving fixed files by path: `files` maps a path (`/app/private/secret`) to its content.
 * Answers 200 `text/plain` with the content, 404 `not found` otherwise; every request is recorded.
 */
export async function startFileUpstream(files: Record<string, string>, options: { host?: string } = {}): Promise<FileUpstream> {
  const received: FileRequest[] = [];
  const server: Server = createServer((req, res) => {
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
    req.on('end', () => {
      const url = req.url ?? '/';
      const resolved = laxResolve(url);
      received.push({ method: req.method ?? 'GET', url, resolved, bodyBytes });
      const content = files[resolved];
      const body = Buffer.from(content ?? 'not found');
      res.writeHead(content === undefined ? 404 : 200, { 'content-type': 'text/plain', 'content-length': String(body.length) });
      res.end(body);
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
