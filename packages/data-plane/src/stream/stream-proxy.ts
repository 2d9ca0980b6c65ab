import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { connect as netConnect, createServer as createNetServer, isIPv6, type Server as NetServer, type Socket } from 'node:net';
import { connect as tlsConnect, createSecureContext, createServer as createTlsServer, TLSSocket, type SecureContext } from 'node:tls';
import type { PluginRuntime } from '@gatehouse/plugins';
import type { BalancerRegistry } from '../balancer/registry';
import type { UpstreamTarget } from '../compile/types';
import type { ConfigHolder } from '../config-holder';
import type { PemPair } from '../tls/default-certificate';
import { acceptProxyProtocol, proxiedAddressesOf } from '../proxy-protocol/accept';
import { TrustedProxies } from '../proxy/client-ip';
import { clientHelloServerName, looksLikeTls, recordLength } from './client-hello';
import { compileStreamRoutes, ipRefused, matchStream, type StreamConnection, type StreamRoute } from './stream-routes';
import { StreamCounters } from './stream-counters';
import { TcpSessionLog, udpSessionEnded } from './stream-log';
import { UdpSessions, type UdpRouting } from './udp-sessions';

/** One `GATEHOUSE_STREAM_LISTEN` entry: `addr:port [ssl] [udp] [proxy_protocol]`. */
export interface StreamListen {
  host: string;
  port: number;
  ssl: boolean;
  udp: boolean;
  /** every connection opens with a PROXY protocol header (TCP and TLS listeners) */
  proxyProtocol?: boolean;
}

export interface StreamProxyOptions {
  holder: ConfigHolder;
  balancers: BalancerRegistry;
  listens: readonly StreamListen[];
  /** the certificate of `ssl` listeners when no certificate of the store matches the SNI */
  defaultCertificate?: PemPair;
  log: { error(message: string, detail?: Record<string, unknown>): void };
  /** the proxies whose PROXY header names the client (Kong's trusted_ips, nginx's stream set_real_ip_from) */
  trustedIps?: readonly string[];
  /** the node's plugin runtime, for the logging plugins of stream routes */
  runtime?: PluginRuntime;
}

/** How long a plain TCP connection may take to send its first bytes when a `tls_passthrough` route wants them. */
const PREREAD_TIMEOUT_MS = 30_000;

/**
 * Kong's stream proxy: TCP and TLS (terminated with the certificate store, or passed through by the ClientHello's
 * SNI) and UDP listeners, each connection matched against the stream routes of the current configuration, checked by
 * the route's ip-restriction (Kong's preread phase), and relayed to the service (through its upstream's balancer)
 * both ways until either side closes or stays idle past the service's read timeout.
 */
export class StreamProxy {
  private routes: StreamRoute[];
  private readonly stopFollowing: () => void;
  private readonly tcp: NetServer[] = [];
  private readonly udp: UdpSessions[] = [];
  private readonly open = new Set<Socket>();
  private readonly trusted: TrustedProxies;
  /** the bound ports, in the order of `listens` */
  readonly ports: number[] = [];
  /** connections and sessions, for `/status` and `kong_nginx_connections_total{subsystem="stream"}` */
  readonly counters = new StreamCounters();

  private constructor(private readonly opts: StreamProxyOptions) {
    this.trusted = new TrustedProxies(opts.trustedIps ?? []);
    this.routes = compileStreamRoutes(opts.holder.current);
    this.stopFollowing = opts.holder.onSwap((next) => (this.routes = compileStreamRoutes(next)));
  }

  static async start(opts: StreamProxyOptions): Promise<StreamProxy> {
    const proxy = new StreamProxy(opts);
    try {
      for (const listen of opts.listens) proxy.ports.push(listen.udp ? await proxy.listenUdp(listen) : await proxy.listenTcp(listen));
    } catch (err) {
      await proxy.close();
      throw err;
    }
    return proxy;
  }

  private async listenTcp(listen: StreamListen): Promise<number> {
    let server: NetServer;
    if (listen.ssl) {
      if (!this.opts.defaultCertificate) throw new Error('an ssl stream listener needs a default certificate');
      const fallback: SecureContext = createSecureContext(this.opts.defaultCertificate);
      server = createTlsServer({
        ...this.opts.defaultCertificate,
        SNICallback: (name, done) => done(null, this.opts.holder.current.tls.sni.lookup(name) ?? fallback),
      });
      server.on('secureConnection', (socket: TLSSocket) => this.accept(socket, 'tls', typeof socket.servername === 'string' ? socket.servername : '', null));
      server.on('tlsClientError', (_err: Error, socket: Socket) => socket.destroy());
    } else {
      server = createNetServer((socket) => this.acceptPlain(socket));
    }
    // a plain connection is read once its upstream is connected (or by the ClientHello preread)
    if (listen.proxyProtocol) acceptProxyProtocol(server, listen.ssl);
    // tracked and counted from the start, before a PROXY header is in
    server.prependListener('connection', (socket: Socket) => {
      this.open.add(socket);
      socket.once('close', this.counters.opened());
      socket.once('close', () => this.open.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listen.port, listen.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.tcp.push(server);
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : listen.port;
  }

  private async listenUdp(listen: StreamListen): Promise<number> {
    const socket: UdpSocket = createSocket(isIPv6(listen.host) ? 'udp6' : 'udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(listen.port, listen.host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    const sessions = new UdpSessions(socket, (client: RemoteInfo) => this.udpTarget(socket, client), this.counters);
    this.udp.push(sessions);
    return socket.address().port;
  }

  /** A plain TCP connection: `tcp`, or `tls_passthrough` when it opens with a ClientHello and such routes exist. */
  private acceptPlain(socket: Socket): void {
    socket.on('error', () => socket.destroy());
    if (!this.routes.some((r) => r.protocols.has('tls_passthrough'))) return this.accept(socket, 'tcp', '', null);
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), PREREAD_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const whole = recordLength(head);
      if (looksLikeTls(head) && (whole === null || head.length < whole)) return;
      if (head.length < 3 && head[0] === 0x16) return;
      socket.off('data', onData);
      socket.pause();
      clearTimeout(timer);
      if (looksLikeTls(head)) this.accept(socket, 'tls_passthrough', clientHelloServerName(head), head);
      else this.accept(socket, 'tcp', '', head);
    };
    socket.on('data', onData);
    socket.resume();
  }

  private accept(client: Socket, protocol: string, sni: string, head: Buffer | null): void {
    const startedAt = Date.now();
    client.on('error', () => client.destroy());
    const peer = normalizeIp(client.remoteAddress ?? '');
    // nginx's stream realip: a trusted proxy's PROXY header names the client
    const proxied = proxiedAddressesOf(client);
    const named = proxied !== undefined && this.trusted.trusts(peer) ? proxied : null;
    const conn: StreamConnection = {
      protocol,
      srcIp: named ? normalizeIp(named.sourceAddress) : peer,
      srcPort: named ? named.sourcePort : (client.remotePort ?? 0),
      dstIp: normalizeIp(client.localAddress ?? ''),
      dstPort: client.localPort ?? 0,
      sni,
    };
    const entry = matchStream(this.routes, conn);
    if (entry === null) return void client.destroy();
    const session = this.sessionLog(entry, protocol, client, conn.srcIp, startedAt);
    if (session !== null) client.once('close', () => session.closed(client));
    const refused = ipRefused(entry, conn.srcIp);
    const target = refused || entry.upstream === null ? null : this.pick(entry.upstream);
    if (target === null) {
      if (session !== null) session.status = refused ? 403 : 503;
      return void client.destroy();
    }
    if (session !== null) session.target = { host: target.host, port: target.port };
    const tlsUpstream = entry.service?.protocol === 'tls';
    const options = { host: target.host, port: target.port, timeout: target.connectTimeout };
    const upstream: Socket = tlsUpstream
      ? tlsConnect({ ...options, ...(target.tls ? target.tls.options : { rejectUnauthorized: target.tlsVerify }), servername: target.sni ?? (sni || target.host) })
      : netConnect(options);
    if (session !== null) session.upstream = upstream;
    const ready = tlsUpstream ? 'secureConnect' : 'connect';
    upstream.once(ready, () => {
      this.counters.relayed();
      session?.connected();
      upstream.setTimeout(target.readTimeout, () => upstream.destroy());
      client.setTimeout(target.readTimeout, () => client.destroy());
      if (head !== null) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.once('timeout', () => upstream.destroy());
    upstream.on('error', () => upstream.destroy());
    upstream.once('close', () => {
      if (session !== null && !session.up) session.status = 502;
    });
    upstream.once('close', () => client.destroy());
    client.once('close', () => upstream.destroy());
  }

  /** The log of a session whose route has logging plugins for its protocol; null when it has none. */
  private sessionLog(entry: StreamRoute, protocol: string, client: Socket, clientIp: string, startedAt: number): TcpSessionLog | null {
    const steps = entry.logSteps.get(protocol);
    if (steps === undefined) return null;
    const tls = protocol === 'tls' && client instanceof TLSSocket ? { version: client.getProtocol() ?? '', cipher: client.getCipher().name } : null;
    const facts = { steps, route: entry.route, service: entry.service, clientIp, serverPort: client.localPort ?? 0, startedAt, tls };
    return new TcpSessionLog(facts, this.opts.runtime ?? {}, this.opts.log);
  }

  /** The address to connect to: the service's, or one of its upstream's targets. */
  private pick(service: UpstreamTarget): UpstreamTarget | null {
    if (service.balancer === null) return service;
    const balancer = this.opts.balancers.get(service.balancer);
    const address = balancer?.pick(null, null) ?? null;
    return address === null ? null : address.forwardTarget(service, null);
  }

  /** Where a new UDP client's datagrams go (null: dropped). */
  private udpTarget(socket: UdpSocket, client: RemoteInfo): UdpRouting | null {
    const startedAt = Date.now();
    const local = socket.address();
    const conn: StreamConnection = { protocol: 'udp', srcIp: normalizeIp(client.address), srcPort: client.port, dstIp: normalizeIp(local.address), dstPort: local.port, sni: '' };
    const entry = matchStream(this.routes, conn);
    if (entry === null || entry.upstream === null || ipRefused(entry, conn.srcIp)) return null;
    const target = this.pick(entry.upstream);
    if (target === null) return null;
    const steps = entry.logSteps.get('udp');
    if (steps === undefined) return { target };
    const facts = { steps, route: entry.route, service: entry.service, clientIp: conn.srcIp, serverPort: local.port, startedAt, tls: null };
    return { target, ended: (bytes) => udpSessionEnded(facts, { host: target.host, port: target.port }, bytes, this.opts.runtime ?? {}, this.opts.log) };
  }

  async close(): Promise<void> {
    this.stopFollowing();
    for (const sessions of this.udp) sessions.close();
    for (const socket of this.open) socket.destroy();
    await Promise.all(this.tcp.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

/** `::ffff:1.2.3.4` → `1.2.3.4`. */
function normalizeIp(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}
