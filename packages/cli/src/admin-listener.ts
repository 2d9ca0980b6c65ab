import { readPemPair, selfSignedDefault, type PemPair } from '@gatehouse/data-plane';
import type { Settings } from './settings';

/** `host:port` of a listener (an IPv6 host in brackets), as listeners are given and reported */
export const listenText = (l: { host: string; port: number }): string => `${l.host.includes(':') ? `[${l.host}]` : l.host}:${l.port}`;

/**
 * Kong's `admin_listen … ssl`: the configured certificate and key, else the data directory's self-signed pair;
 * undefined when the admin API speaks plain HTTP. The same for the admin API of every mode, database or none.
 */
export async function adminTlsOf(settings: Settings): Promise<PemPair | undefined> {
  if (!settings.adminListen.flags?.ssl) return undefined;
  return settings.adminTlsCert && settings.adminTlsKey ? readPemPair(settings.adminTlsCert, settings.adminTlsKey) : selfSignedDefault(settings.dataDir);
}

/** the admin API's URL as the node prints it */
export function adminUrlOf(settings: Settings, listening: { host: string; port: number }): string {
  return `${settings.adminListen.flags?.ssl ? 'https' : 'http'}://${listenText(listening)}`;
}
