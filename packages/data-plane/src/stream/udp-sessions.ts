import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { UpstreamTarget } from '../compile/types';
import type { StreamCounters } from './stream-counters';

/** The bytes of one UDP session: from the client (all sent upstream) and from the upstream (all sent back). */
export interface UdpBytes {
  received: number;
  replied: number;
}

/** Where a new client's datagrams go; `ended` is told the session's bytes once it is closed. */
export interface UdpRouting {
  target: UpstreamTarget;
  ended?: (bytes: UdpBytes) => void;
}

interface Session {
  upstream: UdpSocket;
  timer: NodeJS.Timeout;
  target: UpstreamTarget;
  bytes: UdpBytes;
  ended: () => void;
}

/**
 * UDP relaying for one listener: each client (address and port) gets a socket of its own towards the upstream chosen
 * for its first datagram; replies go back to the client from the listener's socket. A session idle for the service's
 * read timeout is closed.
 */
export class UdpSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly listener: UdpSocket,
    private readonly route: (client: RemoteInfo) => UdpRouting | null,
    private readonly counters: StreamCounters | null = null,
  ) {
    listener.on('message', (message: Buffer, client: RemoteInfo) => this.relay(message, client));
    listener.on('error', () => {});
  }

  private relay(message: Buffer, client: RemoteInfo): void {
    const key = `${client.address}|${client.port}`;
    let session = this.sessions.get(key);
    if (session === undefined) {
      const routed = this.route(client);
      if (routed === null) return;
      session = this.open(key, client, routed);
    }
    session.timer.refresh();
    session.bytes.received += message.length;
    session.upstream.send(message, session.target.port, session.target.host);
  }

  private open(key: string, client: RemoteInfo, routed: UdpRouting): Session {
    const { target } = routed;
    const upstream = createSocket(isIPv6(target.host) ? 'udp6' : 'udp4');
    const close = () => {
      if (this.sessions.get(key) !== session) return;
      this.sessions.delete(key);
      clearTimeout(session.timer);
      session.ended();
      upstream.close();
    };
    const counted = this.counters?.opened();
    const bytes: UdpBytes = { received: 0, replied: 0 };
    const ended = () => {
      counted?.();
      routed.ended?.(bytes);
    };
    const session: Session = { upstream, timer: setTimeout(close, target.readTimeout), target, bytes, ended };
    this.counters?.relayed();
    session.timer.unref();
    upstream.on('message', (reply: Buffer) => {
      session.timer.refresh();
      session.bytes.replied += reply.length;
      this.listener.send(reply, client.port, client.address);
    });
    upstream.on('error', close);
    this.sessions.set(key, session);
    return session;
  }

  close(): void {
    for (const session of this.sessions.values()) {
      clearTimeout(session.timer);
      session.ended();
      session.upstream.close();
    }
    this.sessions.clear();
    this.listener.close();
  }
}
