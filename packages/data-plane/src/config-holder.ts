import { buildSnapshot, emptyConfig, EMPTY_CONFIG_HASH } from '@gatehouse/core';
import { compile } from './compile/compile';
import type { CompiledConfig } from './compile/types';

/** What a data plane serves before any snapshot arrived: no routes (404 for everything), not ready. */
export function placeholderConfig(): CompiledConfig {
  const compiled = compile(buildSnapshot(0, emptyConfig(), 0));
  return { ...compiled, loaded: false, hash: EMPTY_CONFIG_HASH };
}

/**
 * The one reference to the configuration being served. A request reads `current` once when it starts and keeps that
 * object to its end, so `swap` is atomic for everything in flight: old requests finish on the old config, new ones
 * see the new one.
 */
export class ConfigHolder {
  private compiled: CompiledConfig;
  private readonly listeners = new Set<(next: CompiledConfig, previous: CompiledConfig) => void>();

  constructor(initial?: CompiledConfig) {
    this.compiled = initial ?? placeholderConfig();
  }

  get current(): CompiledConfig {
    return this.compiled;
  }

  /** true once a real snapshot has been swapped in */
  get loaded(): boolean {
    return this.compiled.loaded;
  }

  /** Replaces the served configuration; returns the previous one. */
  swap(next: CompiledConfig): CompiledConfig {
    const previous = this.compiled;
    this.compiled = next;
    for (const listener of this.listeners) listener(next, previous);
    return previous;
  }

  /** Called after every swap (status reporting, cache writing). Returns an unsubscribe function. */
  onSwap(listener: (next: CompiledConfig, previous: CompiledConfig) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
