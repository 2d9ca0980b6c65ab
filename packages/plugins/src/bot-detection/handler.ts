import { compileLinearRegex, type LinearRegex } from '@gatehouse/core';
import type { PluginContext, PluginResponse } from '../contract';
import { perConfig } from '../shared/per-config';
import { BUILT_IN_BOT_RULES } from './rules';
import type { BotDetectionConfig } from './schema';

const FORBIDDEN: PluginResponse = Object.freeze({ status: 403, body: Object.freeze({ message: 'Forbidden' }) });
const SEVERAL_AGENTS: PluginResponse = Object.freeze({ status: 400, body: Object.freeze({ message: 'Only one User-Agent header allowed' }) });

/** how many user agents a configuration remembers the verdict of; the memory starts over when full */
const VERDICT_CACHE_SIZE = 10_000;
/** longer user agents are judged every time, so the memory stays bounded (10,000 × 512 characters) */
const CACHED_AGENT_LENGTH = 512;

/** Several patterns as one alternation: one linear-time pass over the user agent instead of one per pattern. */
function anyOf(patterns: readonly string[]): LinearRegex | null {
  if (patterns.length === 0) return null;
  return compileLinearRegex(patterns.map((p) => `(?:${p})`).join('|'));
}

const builtInBots = anyOf(BUILT_IN_BOT_RULES)!;

interface Matchers {
  allow: LinearRegex | null;
  deny: LinearRegex | null;
  /** user agent → refused */
  verdicts: Map<string, boolean>;
}

const matchersOf = perConfig((config: BotDetectionConfig): Matchers => ({ allow: anyOf(config.allow), deny: anyOf(config.deny), verdicts: new Map() }));

/** Kong's order: an allowed agent passes; otherwise a denied one or a known bot is refused. */
export function isRefused(matchers: Pick<Matchers, 'allow' | 'deny'>, userAgent: string): boolean {
  const agent = userAgent.trim();
  if (matchers.allow?.test(agent)) return false;
  if (matchers.deny?.test(agent)) return true;
  return builtInBots.test(agent);
}

function userAgentCount(ctx: PluginContext): number {
  const raw = ctx.req.rawHeaders;
  if (raw === undefined) return ctx.req.headers['user-agent'] === undefined ? 0 : 1;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'user-agent') count++;
  return count;
}

/** Refuses bots by their User-Agent with Kong's 403; requests without one pass; several answer 400. */
export function botDetectionAccess(ctx: PluginContext, config: BotDetectionConfig): PluginResponse | void {
  const header = ctx.req.headers['user-agent'];
  if (Array.isArray(header) || userAgentCount(ctx) > 1) return SEVERAL_AGENTS;
  if (header === undefined) return;
  const matchers = matchersOf(config);
  if (header.length > CACHED_AGENT_LENGTH) return isRefused(matchers, header) ? FORBIDDEN : undefined;
  let refused = matchers.verdicts.get(header);
  if (refused === undefined) {
    refused = isRefused(matchers, header);
    if (matchers.verdicts.size >= VERDICT_CACHE_SIZE) matchers.verdicts.clear();
    matchers.verdicts.set(header, refused);
  }
  if (refused) return FORBIDDEN;
}
