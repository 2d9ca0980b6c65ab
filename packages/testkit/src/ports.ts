import { createServer } from 'node:net';

/**
 * Ports are chosen below Linux's ephemeral range (32768–60999), from which the kernel takes the local ports of
 * outgoing connections: a port taken from that range (listening on port 0) may become a connection's local port
 * between being chosen and being listened on, which many tests running side by side made frequent.
 */
const LOW = 20000;
const HIGH = 32768;
/**
 * The range is cut into this many slices, one for each jest worker (by `JEST_WORKER_ID`; a process outside jest takes
 * the first): a port one worker chose and has not listened on yet is never chosen by another.
 */
const SLICES = 4;
const SLICE = Math.floor((HIGH - LOW) / SLICES);
const workerId = Number(process.env.JEST_WORKER_ID ?? '1');
const sliceStart = LOW + ((Number.isInteger(workerId) && workerId > 0 ? workerId - 1 : 0) % SLICES) * SLICE;
/**
 * Ports this process handed out lately, not handed out again: a test that asks for two ports one after the other (a
 * data plane's proxy and status ports) must not get the same one twice because the first was not listened on yet.
 */
const RECENT = 512;
const recent = new Set<number>();

function remember(port: number): number {
  recent.add(port);
  if (recent.size > RECENT) recent.delete(recent.values().next().value!);
  return port;
}

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
    const candidate = sliceStart + Math.floor(Math.random() * SLICE);
    if (recent.has(candidate)) continue;
    const port = await tryListen(candidate, host);
    if (port) return remember(port);
  }
  const port = await tryListen(0, host);
  if (!port) throw new Error('could not determine a free port');
  return remember(port);
}

/** `count` distinct free ports. */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort(host));
  return [...ports];
}
