import { createServer } from 'node:net';

/**
 * Ports are chosen below Linux's ephemeral range (32768–60999), from which the kernel takes the local ports of
 * outgoing connections: a port taken from that range (listening on port 0) may become a connection's local port
 * between being chosen and being listened on, which many tests running side by side made frequent.
 */
const LOW = 20000;
const HIGH = 32768;

function tryListen(port: number, host: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(null) : reject(err)));
    server.listen(port, host, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(bound || null));
    });
  });
}

/**
 * A TCP port that was free on 127.0.0.1 a moment ago. The port is released before returning, so another
 * process could take it in between; callers that spawn servers retry on "address in use" where it matters.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await tryListen(LOW + Math.floor(Math.random() * (HIGH - LOW)), host);
    if (port) return port;
  }
  const port = await tryListen(0, host);
  if (!port) throw new Error('could not determine a free port');
  return port;
}

/** `count` distinct free ports. */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort(host));
  return [...ports];
}
