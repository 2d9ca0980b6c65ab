import { EventEmitter } from 'node:events';
import type { SnapshotConfig } from '@gatehouse/core';
import type { RedisClient } from '../contract';
import { acmeConfigSchema, coversDomain, type AcmeConfig } from './schema';

/**
 * Kong's acme `certificate` phase: a TLS handshake for a name of the plugin's `domains` that no certificate serves gets
 * the default certificate, and the data plane asks the control plane to order one (through this channel); once stored,
 * the certificate reaches every data plane with the next configuration.
 */
export interface AcmeOrderChannel {
  /** data plane: asks for a certificate for `host` */
  request(host: string): Promise<void>;
  /** control plane: `order` is called for every request; returns a function that stops listening */
  listen(order: (host: string) => void): () => void;
  /** control plane: true for the one node that is to order `host` now (several control planes hear each request) */
  claim(host: string, ttlMs: number): Promise<boolean>;
}

/** In this process (`gatehouse start` without Redis). */
class ProcessOrderChannel implements AcmeOrderChannel {
  private readonly events = new EventEmitter();
  private readonly claims = new Map<string, number>();

  async request(host: string): Promise<void> {
    this.events.emit('order', host);
  }

  listen(order: (host: string) => void): () => void {
    this.events.on('order', order);
    return () => this.events.off('order', order);
  }

  async claim(host: string, ttlMs: number): Promise<boolean> {
    const until = this.claims.get(host);
    if (until !== undefined && until > Date.now()) return false;
    this.claims.set(host, Date.now() + ttlMs);
    return true;
  }
}

export const processOrders: AcmeOrderChannel = new ProcessOrderChannel();

/** Over Redis: requests on `<prefix>acme:orders`, one claim per host under `<prefix>acme:ordering:<host>`. */
export function redisOrders(publisher: Pick<RedisClient, 'publish' | 'set'>, prefix: string, subscriber?: RedisClient): AcmeOrderChannel {
  const channel = `${prefix}acme:orders`;
  return {
    request: async (host) => void (await publisher.publish(channel, host)),
    listen: (order) => {
      if (subscriber === undefined) throw new Error('listening for acme orders needs a subscriber connection');
      const onMessage = (from: string, host: string) => from === channel && order(host);
      subscriber.on('message', onMessage);
      void subscriber.subscribe(channel).catch(() => undefined);
      return () => void subscriber.off('message', onMessage);
    },
    claim: async (host, ttlMs) => (await publisher.set(`${prefix}acme:ordering:${host}`, '1', 'PX', ttlMs, 'NX')) === 'OK',
  };
}

/** The acme plugin's index: the configuration of the global acme plugin (Kong's acme is global), or null. */
export function acmeIndex(config: SnapshotConfig): AcmeConfig | null {
  const found = config.plugins.find((p) => p.name === 'acme' && p.enabled !== false);
  if (found === undefined) return null;
  const parsed = acmeConfigSchema.safeParse(found.config);
  return parsed.success ? parsed.data : null;
}

/** how long a data plane waits before asking again for the same name */
const ASK_AGAIN_MS = 30_000;

/**
 * The data plane's side: `defaultServed(name)` is called for each handshake the default certificate answers; a name
 * the acme plugin covers is asked for (once per 30 s per name).
 */
export function onDemandCertificates(config: () => AcmeConfig | null, orders: AcmeOrderChannel, now = Date.now): (servername: string) => void {
  const asked = new Map<string, number>();
  return (servername) => {
    const acme = config();
    const host = servername.toLowerCase();
    if (acme === null || host === '' || !coversDomain(acme, host)) return;
    const last = asked.get(host);
    if (last !== undefined && now() - last < ASK_AGAIN_MS) return;
    if (asked.size > 10_000) asked.clear();
    asked.set(host, now());
    void orders.request(host).catch(() => asked.delete(host));
  };
}
