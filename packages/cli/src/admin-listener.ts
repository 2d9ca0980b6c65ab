import type { Settings } from './settings';

/** `host:port` of a listener (an IPv6 host in brackets), as listeners are given and reported */
export const listenText = (l: { host: string; port: number }): string => `${l.host.includes(':') ? `[${l.host}]` : l.host}:${l.port}`;

/** the admin API's URL as the node prints it */
export function adminUrlOf(settings: Settings, listening: { host: string; port: number }): string {
  return `${settings.adminListen.flags?.ssl ? 'https' : 'http'}://${listenText(listening)}`;
}
