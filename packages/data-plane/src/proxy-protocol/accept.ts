import type { Server as NetServer, Socket } from 'node:net';
import { readProxyHeader, type ProxiedAddresses } from './header';

/** How long a connection on a `proxy_protocol` listener may take to send its header (nginx's proxy_protocol_timeout). */
export const PROXY_HEADER_TIMEOUT_MS = 30_000;

/**
 * The addresses PROXY headers gave, per open connection, keyed by the connection's own addresses: a TLS socket
 * wrapping the TCP one has the same, so both find the header.
 */
const proxied = new Map<string, ProxiedAddresses>();

const keyOf = (socket: Pick<Socket, 'remoteAddress' | 'remotePort' | 'localAddress' | 'localPort'>) => `${socket.remoteAddress}|${socket.remotePort}|${socket.localAddress}|${socket.localPort}`;

/** The client a PROXY header named for this connection (or the TLS/HTTP socket over it); undefined when none did. */
export function proxiedAddressesOf(socket: Pick<Socket, 'remoteAddress' | 'remotePort' | 'localAddress' | 'localPort'>): ProxiedAddresses | undefined {
  return proxied.size === 0 ? undefined : proxied.get(keyOf(socket));
}

/**
 * Reads the PROXY header off a new connection: resolves true once it is read (the bytes after it put back for
 * whoever reads next, the socket paused), false when the connection sent something else, closed, or took longer
 * than `timeoutMs` (the socket is then destroyed).
 */
export function prereadProxyHeader(socket: Socket, timeoutMs = PROXY_HEADER_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    let head: Buffer = Buffer.alloc(0);
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      if (!ok) socket.destroy();
      resolve(ok);
    };
    const onClose = () => finish(false);
    const onData = (chunk: Buffer) => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const read = readProxyHeader(head);
      if (read.kind === 'incomplete') return;
      if (read.kind === 'invalid') return finish(false);
      socket.pause();
      if (read.addresses !== null) {
        const key = keyOf(socket);
        proxied.set(key, read.addresses);
        socket.once('close', () => proxied.delete(key));
      }
      if (head.length > read.length) socket.unshift(head.subarray(read.length));
      finish(true);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('error', () => socket.destroy());
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

/**
 * Makes a listener take the PROXY protocol (Kong's `proxy_protocol` listen flag): every connection must open with a
 * valid v1 or v2 header, read here before the server's own `connection` listeners see the socket; one without is
 * closed. Call after the server's other `connection` listeners are added. The socket is resumed after them unless
 * `resume` is false (listeners that start reading it themselves, once they have somewhere to put its bytes).
 */
export function acceptProxyProtocol(server: NetServer, resume = true, timeoutMs = PROXY_HEADER_TIMEOUT_MS): void {
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    void prereadProxyHeader(socket, timeoutMs).then((ok) => {
      if (!ok) return;
      for (const listener of listeners) listener.call(server, socket);
      if (resume) socket.resume();
    });
  });
}
