import { Duplex } from 'node:stream';

/**
 * One end of a connection held in memory: what one end writes, the other reads. Node's HTTP server and client take
 * any Duplex as their connection, so a request can be parsed, served and answered by their own code without a socket.
 * Carries the addresses a TCP socket reports, which the proxy reads (client IP, local port, TLS server name).
 */
export class MemorySocket extends Duplex {
  remoteAddress: string;
  remotePort = 40000;
  localAddress = '127.0.0.1';
  localPort: number;
  /** the TLS server name a client sent (the proxy reads it for `snis` routes on https) */
  servername?: string;
  private peer: MemorySocket | null = null;

  private constructor(remoteAddress: string, localPort: number) {
    super();
    this.remoteAddress = remoteAddress;
    this.localPort = localPort;
  }

  /** A connected pair: [the server's end, the client's end]. */
  static pair(clientAddress: string, serverPort: number): [MemorySocket, MemorySocket] {
    const server = new MemorySocket(clientAddress, serverPort);
    const client = new MemorySocket('127.0.0.1', 40000);
    client.remotePort = serverPort;
    server.peer = client;
    client.peer = server;
    return [server, client];
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.peer?.push(chunk);
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.peer?.push(null);
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const peer = this.peer;
    this.peer = null;
    if (peer !== null && !peer.destroyed) peer.push(null);
    callback(error);
  }

  // what Node's HTTP layer may call on a TCP socket
  setTimeout(_ms: number, _callback?: () => void): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}
