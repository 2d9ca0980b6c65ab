import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { connect as netConnect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { connect as tlsConnect, createServer as createTlsServer, type ConnectionOptions, type TLSSocket } from 'node:tls';

/** Echo servers for the stream proxy tests: each reply is `<name>:<what was received>`. */
export interface EchoServer {
  port: number;
  close(): Promise<void>;
}

function echo(name: string) {
  return (socket: Socket) => {
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => socket.write(`${name}:${chunk.toString()}`));
  };
}

async function listening(server: { listen(port: number, host: string): unknown; address(): AddressInfo | string | null; once(event: string, fn: () => void): unknown }): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server as never, 'listening');
  return (server.address() as AddressInfo).port;
}

export async function startTcpEcho(name: string): Promise<EchoServer> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    echo(name)(socket);
  });
  const port = await listening(server);
  return { port, close: () => new Promise((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }) };
}

export async function startTlsEcho(name: string, pem: { cert: string; key: string }): Promise<EchoServer> {
  const server = createTlsServer(pem, (socket: TLSSocket) => echo(name)(socket));
  const port = await listening(server);
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export async function startUdpEcho(name: string): Promise<EchoServer> {
  const socket = createSocket('udp4');
  socket.on('message', (message, from) => socket.send(`${name}:${message.toString()}`, from.port, from.address));
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return { port: socket.address().port, close: () => new Promise((resolve) => socket.close(() => resolve())) };
}

/** Sends `message` on a new connection and returns the first reply, or null when the connection closes without one. */
export function tcpExchange(port: number, message: string, localAddress = '127.0.0.1'): Promise<string | null> {
  return exchangeOn(netConnect({ host: '127.0.0.1', port, localAddress }), 'connect', message);
}

/** The same over TLS; also gives the certificate the client was shown. */
export async function tlsExchange(port: number, message: string, options: ConnectionOptions): Promise<{ reply: string | null; subject: string }> {
  const socket = tlsConnect({ host: '127.0.0.1', port, ...options });
  let subject = '';
  socket.once('secureConnect', () => (subject = String(socket.getPeerCertificate().subject?.CN ?? '')));
  const reply = await exchangeOn(socket, 'secureConnect', message);
  return { reply, subject };
}

function exchangeOn(socket: Socket, ready: string, message: string): Promise<string | null> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (value: string | null) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(value);
    };
    socket.once(ready, () => socket.write(message));
    socket.once('data', (chunk: Buffer) => done(chunk.toString()));
    socket.once('close', () => done(null));
    socket.once('error', () => done(null));
    socket.setTimeout(10_000, () => done(null));
  });
}

/** Sends one datagram and waits for the reply. */
export async function udpExchange(port: number, message: string): Promise<string | null> {
  const socket = createSocket('udp4');
  try {
    socket.send(message, port, '127.0.0.1');
    const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000).unref());
    const reply = once(socket, 'message').then(([data]) => (data as Buffer).toString());
    return await Promise.race([reply, timeout]);
  } finally {
    socket.close();
  }
}
