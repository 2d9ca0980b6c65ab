// An upstream whose response headers the request chooses, as httpbin's /response-headers: every query argument
// becomes a response header (`?Vary=Accept-Encoding&Set-Cookie=a%3D1`), repeated arguments repeated headers. The body
// is the JSON of the request ({method, path, query, headers}); `x-echo-status: <code>` chooses the status; `received`
// counts requests per path.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HeaderUpstream {
  readonly url: string;
  /** requests received, by path */
  readonly received: Map<string, number>;
  close(): Promise<void>;
}

export async function startHeaderUpstream(): Promise<HeaderUpstream> {
  const received = new Map<string, number>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    received.set(url.pathname, (received.get(url.pathname) ?? 0) + 1);
    const headers: string[] = ['content-type', 'application/json'];
    for (const [name, value] of url.searchParams) headers.push(name, value);
    const body: { method: string | undefined; path: string; query: string; headers: IncomingHttpHeaders } = { method: req.method, path: url.pathname, query: url.search, headers: req.headers };
    req.resume();
    req.on('end', () => {
      res.writeHead(Number(req.headers['x-echo-status'] ?? 200), headers);
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
