/**
 * Memoises what a plugin derives from its config (prepared refusals, sets, compiled plans). A compiled snapshot keeps
 * each config object for its lifetime, so keying by object identity builds once per config per snapshot, and the
 * entries go away with the snapshot.
 */
export function perConfig<Config extends object, Derived>(build: (config: Config) => Derived): (config: Config) => Derived {
  const cache = new WeakMap<Config, Derived>();
  return (config) => {
    let derived = cache.get(config);
    if (derived === undefined) {
      derived = build(config);
      cache.set(config, derived);
    }
    return derived;
  };
}
