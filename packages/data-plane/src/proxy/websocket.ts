import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import httpProxy from 'http-proxy';
import { stampUpgradeResponse } from '../observe/exchange-trace';
import { ProxyErrors, sendOnSocket } from './responses';
import type { UpstreamRequest } from './upstream-request';

/** Carries upgraded connections (WebSocket) to the upstream through `http-proxy`. */
export class UpgradeRelay {
  private readonly proxy = httpProxy.createProxyServer({ xfwd: false, prependPath: false, ws: true });

  /** the upstream request of each upgrade in flight, for the head of the upstream's answer */
  private readonly upstreams = new WeakMap<IncomingMessage, UpstreamRequest>();

  constructor() {
    // errors after the upgrade (a socket reset) end the client socket; they must not reach the process
    this.proxy.on('error', (_err, _req, socket) => (socket as Duplex | undefined)?.destroy?.());
    // the upstream's answer (101, or a refusal) is written by http-proxy from its headers: the gateway's are added
    // first, as on any proxied response (these listeners run before http-proxy's own)
    this.proxy.on('proxyReqWs', (proxyReq: ClientRequest, req: IncomingMessage) => {
      const upstream = this.upstreams.get(req);
      if (upstream === undefined) return;
      const stamp = (res: IncomingMessage) => {
        const extra = upstream.responseHeaders;
        if (extra !== null) for (const [name, value] of extra) res.headers[name] = value;
        if (upstream.trace) stampUpgradeResponse(res.headers, upstream.trace);
      };
      proxyReq.once('upgrade', stamp);
      proxyReq.once('response', stamp);
    });
  }

  relay(req: IncomingMessage, socket: Duplex, head: Buffer, upstream: UpstreamRequest): void {
    const { target } = upstream;
    this.upstreams.set(req, upstream);
    upstream.trace?.sent(upstream.path, target);
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
