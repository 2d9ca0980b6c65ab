import type { Snapshot } from '@gatehouse/core';
import { compile, readPemPair, selfSignedDefault, type CompiledConfig } from '@gatehouse/data-plane';
import type { Logger } from './logger';
import type { Settings } from './settings';

/**
 * Compiles a verified snapshot for serving and logs what of it could not be loaded (TLS material, vault references);
 * `onRefused` is told when it does not compile at all (the error is rethrown: the serving config stays).
 */
export function compileForServing(snapshot: Snapshot, log: Logger, onRefused: () => void): CompiledConfig {
  let compiled: CompiledConfig;
  try {
    compiled = compile(snapshot);
  } catch (err) {
    onRefused();
    throw err;
  }
  for (const p of compiled.tls.problems) log.warn('TLS configuration not loaded', { entity: p.entity, id: p.id, problem: p.message });
  for (const w of compiled.warnings) if (w.message.includes('vault')) log.warn('plugin secret not resolved', { plugin_id: w.plugin_id, problem: w.message });
  return compiled;
}

/** The proxy's default TLS certificate: the configured pair, else the data directory's self-signed one (null: no TLS listener). */
export async function defaultProxyCertificate(settings: Settings): Promise<ReturnType<typeof readPemPair> | undefined> {
  if (!settings.proxyTlsListen) return undefined;
  return settings.proxyTlsCert && settings.proxyTlsKey ? readPemPair(settings.proxyTlsCert, settings.proxyTlsKey) : selfSignedDefault(settings.dataDir);
}
