import { parseTracingInstrumentations, type TracingSettings } from '@gatehouse/plugins';
import { ROUTER_FLAVORS, type RouterFlavor } from '@gatehouse/core';
import { usableCores } from '../cpu-count';
import { parseListenEntry, parseListenList, type ListenFlags } from './listen-syntax';

/** The parsers of single settings: listeners, durations, enumerations, labels, headers, tracing. */

export interface Listen {
  host: string;
  port: number;
  /** Kong's listener flags written after the address (`reuseport`, `backlog=N`, …); absent when none */
  flags?: ListenFlags;
}

/** `host:port`, optionally followed by Kong's listener flags (`0.0.0.0:8000 reuseport backlog=16384`). */
export function parseListen(value: string, name: string): Listen {
  const { host, port, flags } = parseListenEntry(value, name);
  return value.trim().includes(' ') ? { host, port, flags } : { host, port };
}

/** One of `allowed`; unset or empty is `fallback`. */
export function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], fallback: T, name: string): T {
  if (value === undefined || value === '') return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got '${value}'`);
  return value as T;
}

/** GATEHOUSE_ROUTER_FLAVOR (Kong's `router_flavor`); default `traditional_compatible`. */
export function routerFlavorOf(env: NodeJS.ProcessEnv): RouterFlavor {
  return oneOf(env.GATEHOUSE_ROUTER_FLAVOR, ROUTER_FLAVORS, 'traditional_compatible', 'GATEHOUSE_ROUTER_FLAVOR');
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** A duration in nginx's syntax (`500ms`, `60s`, `2m`, `1h`; a plain number is seconds), in ms; more than zero. */
export function parseDuration(value: string, name: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(value.trim());
  const ms = m ? Number(m[1]) * DURATION_UNITS[m[2] ?? 's']! : NaN;
  if (!Number.isSafeInteger(ms) || ms <= 0 || ms > 2_147_483_647) throw new Error(`${name} must be a duration such as 60s, 500ms or 2m, got '${value}'`);
  return ms;
}

/** GATEHOUSE_WORKERS: a whole number from 1 to 256; unset or empty → one per usable core (a container's CPU quota counts). */
export function parseWorkers(value: string | undefined, cores: () => number = usableCores): number {
  if (value === undefined || value.trim() === '') return cores();
  const n = Number(value.trim());
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`GATEHOUSE_WORKERS must be a whole number from 1 to 256, got '${value}'`);
  return n;
}

/** One stream listener (Kong's `stream_listen` entry): its address, TLS termination, UDP and the PROXY protocol. */
export interface StreamListen {
  host: string;
  port: number;
  ssl: boolean;
  udp: boolean;
  proxyProtocol: boolean;
}

/** GATEHOUSE_STREAM_LISTEN in Kong's syntax; unset, empty or `off` is none. */
export function streamListenOf(value: string | undefined): StreamListen[] {
  if (value === undefined || value.trim() === '') return [];
  return (parseListenList(value, 'GATEHOUSE_STREAM_LISTEN') ?? []).map(({ host, port, flags }) => {
    if (flags.udp && flags.proxyProtocol) throw new Error(`GATEHOUSE_STREAM_LISTEN: proxy_protocol is for TCP listeners, not with udp (${host}:${port})`);
    return { host, port, ssl: flags.ssl, udp: flags.udp, proxyProtocol: flags.proxyProtocol };
  });
}

/** GATEHOUSE_PROXY_LISTEN in Kong's syntax: its first entry (with its flags), and whether it carries `http2`. */
export function proxyListenOf(value: string): { proxyListen: Listen; proxyHttp2: boolean } {
  const proxyListen = parseListen(value, 'GATEHOUSE_PROXY_LISTEN');
  return { proxyListen, proxyHttp2: proxyListen.flags?.http2 === true };
}

/** GATEHOUSE_CLUSTER_DP_LABELS (Kong's cluster_dp_labels): `name:value` pairs, comma-separated, Kong's character rules. */
export function parseDataPlaneLabels(value: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of (value ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = pair.indexOf(':');
    const name = pair.slice(0, at);
    const text = pair.slice(at + 1);
    const valid = /^[a-zA-Z0-9]([a-zA-Z0-9._:-]{0,61}[a-zA-Z0-9])?$/;
    if (at <= 0 || !valid.test(name) || !valid.test(text) || name.startsWith('kong')) throw new Error(`GATEHOUSE_CLUSTER_DP_LABELS: invalid label '${pair}' (name:value, letters, digits, '.', '-', '_', ':', names not starting with 'kong')`);
    labels[name] = text;
  }
  return labels;
}

/**
 * GATEHOUSE_REAL_IP_HEADER: a header name, or `proxy_protocol` (the client the PROXY header names), which needs a
 * proxy listener with the `proxy_protocol` flag, as Kong requires.
 */
export function parseRealIpHeader(value: string | undefined, proxyListens: readonly (Listen | null)[] | null = []): string | null {
  if (value === undefined || value.trim() === '') return null;
  const name = value.trim();
  if (name === 'proxy_protocol') {
    // a control plane opens no proxy listener: nothing to check
    if (proxyListens !== null && !proxyListens.some((l) => l?.flags?.proxyProtocol === true)) throw new Error('GATEHOUSE_REAL_IP_HEADER=proxy_protocol needs the proxy_protocol flag on GATEHOUSE_PROXY_LISTEN or GATEHOUSE_PROXY_TLS_LISTEN');
    return name;
  }
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) throw new Error(`GATEHOUSE_REAL_IP_HEADER must be a header name, got '${value}'`);
  return name;
}

/** GATEHOUSE_TRACING_INSTRUMENTATIONS and GATEHOUSE_TRACING_SAMPLING_RATE, refused with Kong's messages. */
export function readTracing(env: NodeJS.ProcessEnv): TracingSettings {
  const instrumentations = parseTracingInstrumentations(env.GATEHOUSE_TRACING_INSTRUMENTATIONS ?? 'off');
  const raw = env.GATEHOUSE_TRACING_SAMPLING_RATE;
  const samplingRate = raw === undefined || raw.trim() === '' ? 0.01 : Number(raw);
  if (!Number.isFinite(samplingRate) || samplingRate < 0 || samplingRate > 1) throw new Error('tracing_sampling_rate must be between 0 and 1');
  return { instrumentations, samplingRate };
}
