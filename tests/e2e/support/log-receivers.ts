// Real receivers for the logging plugins' tests: a TCP (or TLS) server collecting lines, a UDP socket and a unix
// datagram socket collecting messages.
import { createSocket } from 'node:dgram';
import { rmSync } from 'node:fs';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { DgramSocket } from 'node-unix-socket';

export interface LineReceiver {
  port: number;
  /** complete lines received, in order */
  lines: string[];
  /** for TLS: the server names clients asked for */
  serverNames: string[];
  close(): Promise<void>;
}

export interface MessageReceiver {
  /** the UDP port (0 for a unix socket) */
  port: number;
  messages: string[];
  close(): Promise<void>;
}

function collectLines(socket: Socket, lines: string[]): void {
  let pending = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      lines.push(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
  });
  socket.on('error', () => {});
}

/** A TCP server (TLS when given a certificate) that keeps every line it is sent. */
export async function startLineReceiver(tls?: { cert: string; key: string }): Promise<LineReceiver> {
  const lines: string[] = [];
  const serverNames: string[] = [];
  const sockets = new Set<Socket>();
  const onSocket = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    collectLines(socket, lines);
  };
  const server: Server = tls
    ? createTlsServer({ cert: tls.cert, key: tls.key }, (socket: TLSSocket) => {
        serverNames.push(String(socket.servername));
        onSocket(socket);
      })
    : createTcpServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    lines,
    serverNames,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function startUdpReceiver(): Promise<MessageReceiver> {
  const messages: string[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (msg) => messages.push(msg.toString('utf8')));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, messages, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}

export function startUnixDatagramReceiver(path: string): MessageReceiver {
  const messages: string[] = [];
  const socket = new DgramSocket();
  socket.on('data', (buf: Buffer) => messages.push(buf.toString('utf8')));
  socket.bind(path);
  return {
    port: 0,
    messages,
    close: async () => {
      socket.close();
      rmSync(path, { force: true });
    },
  };
}
