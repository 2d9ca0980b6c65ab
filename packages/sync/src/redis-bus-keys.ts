export const DEFAULT_REDIS_PREFIX = 'gatehouse:';

/** Where the bus keeps things in Redis, for a given prefix. */
export function redisBusKeys(prefix = DEFAULT_REDIS_PREFIX) {
  return {
    /** the latest signed snapshot, JSON */
    snapshot: `${prefix}snapshot`,
    /** `{version, hash, epoch}` of the latest version (snapshot or delta), JSON: the cheap check and the guard against older publishes */
    head: `${prefix}snapshot:head`,
    /** `{version, hash, epoch}` of the stored full snapshot, JSON */
    stored: `${prefix}snapshot:stored`,
    /** sorted set: signed deltas (JSON) after the stored snapshot, scored by version */
    deltas: `${prefix}deltas`,
    /** announcements `{version, hash}` */
    channel: `${prefix}config`,
    /** hash: data plane id → report JSON */
    dataPlanes: `${prefix}data_planes`,
    /** sorted set: data plane id scored by last_seen, so expired rows can be found */
    dataPlanesSeen: `${prefix}data_planes:seen`,
  };
}

/** The url with its password masked, for logs and errors. */
export function redactRedisUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
