import type { DgramSocket } from 'node-unix-socket';
import { UdpSender } from '../shared/udp-sender';

/** Where syslog lines go when the node does not say: the local syslog daemon's socket, as syslog(3) uses. */
export const DEFAULT_SYSLOG_ADDRESS = '/dev/log';

/** A syslog destination: `udp://host:port`, or the path of a unix datagram socket. */
export type SyslogTarget = { kind: 'udp'; host: string; port: number } | { kind: 'unix'; path: string };

export function parseSyslogAddress(address: string): SyslogTarget {
  if (!address.startsWith('udp://')) return { kind: 'unix', path: address };
  const url = new URL(address);
  const port = Number(url.port || 514);
  return { kind: 'udp', host: url.hostname, port };
}

/** Sends syslog lines of one data-plane node, over UDP or to a unix datagram socket (opened on first use). */
export class SyslogTransport {
  private readonly udp = new UdpSender();
  private unix: Promise<DgramSocket> | null = null;

  constructor(private readonly target: SyslogTarget) {}

  async send(line: string): Promise<void> {
    if (this.target.kind === 'udp') return this.udp.send(this.target.host, this.target.port, line, 10_000);
    const path = this.target.path;
    this.unix ??= import('node-unix-socket').then(({ DgramSocket: Socket }) => {
      const socket = new Socket();
      socket.on('error', () => {});
      return socket;
    });
    const socket = await this.unix;
    const buf = Buffer.from(line);
    await new Promise<void>((resolve, reject) => socket.sendTo(buf, 0, buf.length, path, (err) => (err ? reject(err) : resolve())));
  }

  async close(): Promise<void> {
    this.udp.close();
    const unix = this.unix;
    this.unix = null;
    if (unix) (await unix).close();
  }
}
