import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';

/**
 * The UDP sockets a logging plugin sends datagrams from on one data-plane node (one per address family, opened on
 * first use). `timeout` bounds the name lookup and the send.
 */
export class UdpSender {
  private readonly sockets = new Map<'udp4' | 'udp6', Socket>();

  send(host: string, port: number, payload: string, timeout: number): Promise<void> {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    const family = isIP(bare) === 6 ? 'udp6' : 'udp4';
    let socket = this.sockets.get(family);
    if (socket === undefined) {
      socket = createSocket(family);
      socket.on('error', () => {});
      socket.unref();
      this.sockets.set(family, socket);
    }
    const sock = socket;
    return new Promise<void>((resolve, reject) => {
      const timer = timeout > 0 ? setTimeout(() => reject(new Error(`timeout after ${timeout} ms`)), timeout) : null;
      sock.send(payload, port, bare, (err) => {
        if (timer) clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      });
    });
  }

  close(): void {
    for (const socket of this.sockets.values()) socket.close();
    this.sockets.clear();
  }
}
