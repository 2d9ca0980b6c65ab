import { databaseSettings, DATABASE_NAMES } from './database';
import { INAPPLICABLE_REASONS, KONG_TO_GATEHOUSE } from './mapping';
import { isKongSettingName } from './names';
import { kongEnvironment, readKongConf, type KongValues } from './sources';

export { parseKongConf } from './sources';

/** A Kong setting that was not applied, or applied in part, and why: logged once by name. */
export interface KongNotice {
  name: string;
  from: string;
  reason: string;
}

export interface KongSettings {
  /** Gatehouse variables the Kong settings give; the environment's own GATEHOUSE_* (and DATABASE_URL, …) win over them */
  env: Record<string, string>;
  notices: KongNotice[];
  /** how many Kong settings were read */
  read: number;
}

/** Kong's order: the file, then KONG_* over it. */
export function gatherKongValues(env: NodeJS.ProcessEnv, confPath: string | null): KongValues {
  const values: KongValues = confPath ? readKongConf(confPath) : new Map();
  for (const [name, v] of kongEnvironment(env)) values.set(name, v);
  return values;
}

/** Converts Kong settings through the one table; a bad value throws, naming the setting and where it came from. */
export function convertKongValues(values: KongValues): KongSettings {
  const env: Record<string, string> = {};
  const notices: KongNotice[] = [];
  const database = new Set<string>(DATABASE_NAMES);
  try {
    Object.assign(env, databaseSettings(values));
  } catch (err) {
    throw new Error(`${(err as Error).message} (from ${values.get('database')?.from ?? 'pg_* settings'})`);
  }
  for (const [name, { value, from }] of values) {
    // an empty value is an unset one, as in Kong
    if (database.has(name) || value === '') continue;
    const convert = KONG_TO_GATEHOUSE[name];
    if (convert) {
      try {
        Object.assign(env, convert(value, values, (reason) => notices.push({ name, from, reason })));
      } catch (err) {
        throw new Error(`${(err as Error).message} (from ${from})`);
      }
      continue;
    }
    if (!isKongSettingName(name)) {
      notices.push({ name, from, reason: 'not a Kong 3.9 setting' });
      continue;
    }
    const reason = INAPPLICABLE_REASONS.find(([pattern]) => pattern.test(name))?.[1] ?? 'no Gatehouse equivalent';
    notices.push({ name, from, reason: `not applied: ${reason}` });
  }
  return { env, notices, read: values.size };
}

/**
 * Reads kong.conf (when given) and KONG_* from `env`, and returns `env` completed with the Gatehouse variables they
 * give: a variable `env` already has wins.
 */
export function applyKongSettings(env: NodeJS.ProcessEnv, confPath: string | null): { env: NodeJS.ProcessEnv; notices: KongNotice[]; read: number } {
  const kong = convertKongValues(gatherKongValues(env, confPath));
  const merged: NodeJS.ProcessEnv = { ...env };
  for (const [key, value] of Object.entries(kong.env)) if (merged[key] === undefined) merged[key] = value;
  return { env: merged, notices: kong.notices, read: kong.read };
}
