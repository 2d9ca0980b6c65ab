/** Host and `host:port` parsing shared by upstreams, targets and the data plane's balancer (Kong's normalize_ip). */

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HOSTNAME_LABEL = /^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;

export type HostKind = 'ipv4' | 'ipv6' | 'name';

export interface ParsedHost {
  kind: HostKind;
  /** the host without brackets */
  host: string;
  /** the port when one was given */
  port: number | null;
}

export function isIpv4(value: string): boolean {
  return IPV4.test(value);
}

export function isIpv6(value: string): boolean {
  if (!value.includes(':') || !/^[0-9A-Fa-f:.]+$/.test(value)) return false;
  const doubles = value.split('::').length - 1;
  if (doubles > 1) return false;
  const groups = value.split(':');
  const last = groups[groups.length - 1]!;
  const v4Tail = last.includes('.');
  if (v4Tail && !isIpv4(last)) return false;
  const hexGroups = groups.filter((g, i) => !(v4Tail && i === groups.length - 1));
  if (hexGroups.some((g) => g.length > 4)) return false;
  const count = hexGroups.filter((g) => g !== '').length + (v4Tail ? 2 : 0);
  return doubles === 1 ? count < 8 : count === 8;
}

export function isHostname(value: string): boolean {
  if (value.length === 0 || value.length > 253) return false;
  const labels = value.replace(/\.$/, '').split('.');
  return labels.every((label) => HOSTNAME_LABEL.test(label)) && !isIpv4(value) && !/^[\d.]+$/.test(value);
}

/** `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address; null when it is none of these. */
export function parseHostPort(value: string): ParsedHost | null {
  if (typeof value !== 'string' || value === '') return null;
  let host = value;
  let portText: string | null = null;
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    if (close < 0) return null;
    host = value.slice(1, close);
    const rest = value.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return null;
      portText = rest.slice(1);
    }
    if (!isIpv6(host)) return null;
  } else if (isIpv6(value)) {
    return { kind: 'ipv6', host: value, port: null };
  } else {
    const colon = value.lastIndexOf(':');
    if (colon >= 0) {
      host = value.slice(0, colon);
      portText = value.slice(colon + 1);
    }
  }
  let port: number | null = null;
  if (portText !== null) {
    if (!/^\d{1,5}$/.test(portText)) return null;
    port = Number(portText);
    if (port > 65535) return null;
  }
  if (isIpv6(host)) return { kind: 'ipv6', host, port };
  if (isIpv4(host)) return { kind: 'ipv4', host, port };
  if (isHostname(host)) return { kind: 'name', host: host.toLowerCase(), port };
  return null;
}

/** `host:port` as Kong stores a target: port 8000 when omitted, IPv6 in brackets. */
export function formatHostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
