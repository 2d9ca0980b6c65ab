import type { BusSubscription, ConfigBus } from './bus';
import { parseAnnouncement } from './announcement';
import type { SyncLogger } from './logger';
import type { RedisClient } from './redis-connection';

type Handlers = Parameters<ConfigBus['subscribe']>[0];

/** What a subscription of the Redis bus needs: its own connection and the bus's command connection's readiness. */
export interface AnnouncementListener {
  /** a connection for this subscription alone (a subscribed connection can do nothing else), without autoResubscribe */
  connection: RedisClient;
  channel: string;
  logger: SyncLogger;
  connectTimeoutMs: number;
  /** resolves once the command connection is usable (the refetch after a reconnect goes through it) */
  commandsReady: () => Promise<void>;
  /** told when the subscription is closed, before its connection is */
  onClose: () => void;
}

/**
 * Subscribes to the announcements channel. Resolves once subscribed, or as soon as Redis turns out to be unreachable
 * (the subscription then keeps trying in the background). Every later successful (re)subscription fires
 * `onReconnect`.
 */
export async function listenForAnnouncements(listener: AnnouncementListener, handlers: Handlers): Promise<BusSubscription> {
  const { connection, channel, logger } = listener;
  let active = true;
  let settled = false;
  let settle!: () => void;
  const firstAttempt = new Promise<void>((resolve) => (settle = resolve));
  const settleFirst = () => {
    if (settled) return false;
    settled = true;
    settle();
    return true;
  };

  connection.on('message', (from: string, message: string) => {
    if (!active || from !== channel) return;
    const announcement = parseAnnouncement(message);
    if (!announcement) {
      logger.warn('ignoring a malformed announcement', { channel });
      return;
    }
    try {
      handlers.onAnnouncement(announcement);
    } catch (error) {
      logger.error('announcement handler failed', { error: (error as Error).message });
    }
  });
  // ioredis would resubscribe on its own, but only we know when that is done: onReconnect must come after
  // the subscription is back, or an announcement could slip between the refetch and the resubscribe.
  connection.on('ready', () => {
    connection.subscribe(channel).then(
      async () => {
        if (!active) return;
        if (settleFirst()) return;
        // the refetch goes through the command connection, which may come back a moment later
        await listener.commandsReady();
        if (!active) return;
        try {
          handlers.onReconnect();
        } catch (error) {
          logger.error('reconnect handler failed', { error: (error as Error).message });
        }
      },
      (error: Error) => logger.debug?.('subscribe failed; will retry on the next connection', { error: error.message }),
    );
  });
  connection.on('error', () => settleFirst());
  connection.on('end', () => settleFirst());
  const cap = setTimeout(settleFirst, listener.connectTimeoutMs + 1000);
  await firstAttempt;
  clearTimeout(cap);

  return {
    close: async () => {
      active = false;
      listener.onClose();
      connection.disconnect();
    },
  };
}
