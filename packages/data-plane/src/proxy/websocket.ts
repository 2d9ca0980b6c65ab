import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import httpProxy from 'http-proxy';
import { ProxyErrors, sendOnSocket } from './responses';
import type { UpstreamRequest } from './upstream-request';

/** Carries upgraded connections (WebSocket) to the upstream through `http-proxy`. */
export class UpgradeRelay {
  private readonly proxy = httpProxy.createProxyServer({ xfwd: false, prependPath: false, ws: true });

  constructor() {
    // errors after the upgrade (a socket reset) end the client socket; they must not reach the process
    this.proxy.on('error', (_err, _req, socket) => (socket as Duplex | undefined)?.destroy?.());
  }

  relay(req: IncomingMessage, socket: Duplex, head: Buffer, upstream: UpstreamRequest): void {
    const { target } = upstream;
    req.url = upstream.path;
    req.headers = upstream.headers as IncomingMessage['headers'];
    this.proxy.ws(
      req,
      socket,
      head,
      {
        target: { protocol: `${target.protocol}:`, host: target.host, port: String(target.port) },
        secure: target.tlsVerify,
      },
      () => {
        // once the upgrade was answered the socket carries frames: it can only be cut
        if ((socket as Socket).bytesWritten > 0) return socket.destroy();
        const bad = ProxyErrors.badGateway;
        sendOnSocket(socket as Socket, bad.status, bad.headers, bad.body);
      },
    );
  }

  close(): void {
    this.proxy.close();
  }
}
