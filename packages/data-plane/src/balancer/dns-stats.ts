/**
 * The DNS statistics of the process, as Kong's DNS client keeps them for `/status/dns`: per `name|TYPE` (`TYPE` being
 * `SRV`, `A`, `AAAA` or `A/AAAA` for the system's lookup), `runs` (names resolved), `query` (questions sent),
 * `query_succ`, `query_fail:<reason>` and `query_last_time` (ms of the last question).
 */
export type DnsStatEntry = Record<string, number>;

const stats = new Map<string, DnsStatEntry>();

function entry(key: string): DnsStatEntry {
  let found = stats.get(key);
  if (found === undefined) {
    found = {};
    stats.set(key, found);
  }
  return found;
}

export function countDns(name: string, type: string, counter: string): void {
  const e = entry(`${name}|${type}`);
  e[counter] = (e[counter] ?? 0) + 1;
}

export function setDns(name: string, type: string, field: string, value: number): void {
  entry(`${name}|${type}`)[field] = value;
}

/** A copy of the statistics, keyed `name|TYPE`. */
export function dnsStatistics(): Record<string, DnsStatEntry> {
  return Object.fromEntries([...stats].map(([k, v]) => [k, { ...v }]));
}
