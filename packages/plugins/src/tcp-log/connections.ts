import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import type { TcpLogConfig } from './schema';

interface Kept {
  socket: Socket;
  ready: Promise<void>;
  idle: NodeJS.Timeout | null;
}

/**
 * The connections tcp-log keeps on one data-plane node, one per destination (host, port, TLS, SNI): a line is
 * written on the kept connection, which is closed after `keepalive` ms without one. `timeout` bounds the connect
 * (and the TLS handshake). As Kong does, the server's certificate is not verified.
 */
export class TcpLogConnections {
  private readonly kept = new Map<string, Kept>();

  async send(config: TcpLogConfig, line: string): Promise<void> {
    const key = `${config.host}|${config.port}|${config.tls}|${config.tls_sni ?? ''}`;
    let conn = this.kept.get(key);
    if (conn === undefined) {
      conn = this.open(config, key);
      this.kept.set(key, conn);
    }
    if (conn.idle) clearTimeout(conn.idle);
    conn.idle = null;
    await conn.ready;
    await new Promise<void>((resolve, reject) => conn.socket.write(line, (err) => (err ? reject(err) : resolve())));
    if (conn.idle) clearTimeout(conn.idle);
    const idleMs = Math.max(config.keepalive, 1);
    conn.idle = setTimeout(() => this.drop(key, conn), idleMs);
    conn.idle.unref();
  }

  private open(config: TcpLogConfig, key: string): Kept {
    const host = config.host.replace(/^\[(.*)\]$/, '$1');
    const socket = config.tls
      ? connectTls({ host, port: config.port, servername: config.tls_sni ?? undefined, rejectUnauthorized: false })
      : connectTcp({ host, port: config.port });
    const ready = new Promise<void>((resolve, reject) => {
      const timer = config.timeout > 0 ? setTimeout(() => socket.destroy(new Error(`timeout after ${config.timeout} ms`)), config.timeout) : null;
      socket.once(config.tls ? 'secureConnect' : 'connect', () => {
        if (timer) clearTimeout(timer);
        resolve();
      });
      socket.once('error', (err) => {
        if (timer) clearTimeout(timer);
        reject(err);
      });
    });
    const kept: Kept = { socket, ready, idle: null };
    socket.on('error', () => this.drop(key, kept));
    socket.on('close', () => this.drop(key, kept));
    ready.catch(() => {});
    return kept;
  }

  private drop(key: string, conn: Kept): void {
    if (this.kept.get(key) === conn) this.kept.delete(key);
    if (conn.idle) clearTimeout(conn.idle);
    conn.socket.destroy();
  }

  close(): void {
    for (const [key, conn] of [...this.kept]) this.drop(key, conn);
  }
}
