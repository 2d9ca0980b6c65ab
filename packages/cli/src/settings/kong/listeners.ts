import { formatListenEntry, parseListenList, type ListenEntry } from '../listen-syntax';

export type Note = (text: string) => void;

const describe = (entries: ListenEntry[]) => entries.map(formatListenEntry).join(', ');

/**
 * Kong's `proxy_listen`: the first entry without `ssl` is the plain listener, the first with `ssl` the TLS one (none:
 * the TLS listener is off, as Kong opens none); further entries are noted, Gatehouse opens one of each.
 */
export function proxyListeners(value: string, note: Note): Record<string, string> {
  const entries = parseListenList(value, 'proxy_listen');
  if (entries === null) {
    note("'off' keeps no proxy listener in Kong; Gatehouse keeps its own defaults (run `gatehouse control-plane` for a node without a proxy)");
    return {};
  }
  const plain = entries.filter((e) => !e.flags.ssl);
  const tls = entries.filter((e) => e.flags.ssl);
  const out: Record<string, string> = { GATEHOUSE_PROXY_TLS_LISTEN: tls[0] ? formatListenEntry({ ...tls[0], flags: { ...tls[0].flags, ssl: false } }) : 'off' };
  if (plain[0]) out.GATEHOUSE_PROXY_LISTEN = formatListenEntry(plain[0]);
  const extra = [...plain.slice(1), ...tls.slice(1)];
  if (extra.length > 0) note(`one plain and one TLS proxy listener are opened; not opened: ${describe(extra)}`);
  return out;
}

/**
 * A listener of which Gatehouse opens one entry (`admin_listen`, `status_listen`): the first plain one, else (where
 * `tlsAllowed`) the first with `ssl`; `off` passes through where allowed.
 */
export function singleListener(name: string, target: string, offAllowed: boolean, tlsAllowed = false): (value: string, note: Note) => Record<string, string> {
  return (value, note) => {
    const entries = parseListenList(value, name);
    if (entries === null) {
      if (offAllowed) return { [target]: 'off' };
      note(`'off' is not applied: the ${name.replace('_listen', '')} API always listens on nodes that serve it`);
      return {};
    }
    const plain = entries.filter((e) => !e.flags.ssl);
    const chosen = plain[0] ?? (tlsAllowed ? entries[0] : undefined);
    const rest = entries.filter((e) => e !== chosen);
    if (rest.length > 0) note(`one listener is opened; not opened: ${describe(rest)}${!tlsAllowed && rest.some((e) => e.flags.ssl) ? ' (no TLS on this listener)' : ''}`);
    return chosen ? { [target]: formatListenEntry(chosen) } : {};
  };
}
