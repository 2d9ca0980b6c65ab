import type { PluginResources, PluginRuntime } from '../contract';

export interface RuntimeState<S extends PluginResources> {
  /** the plugin's `init`: opens the state for a node's runtime; closing the result closes it */
  init(runtime: PluginRuntime): PluginResources;
  /** the state `init` opened for this runtime; a runtime no node opened (a unit test's) gets one on first use */
  of(runtime: PluginRuntime): S;
}

/**
 * What a plugin keeps per data-plane node: `open` builds it for one runtime (the node's), the plugin's hooks find it
 * again from `ctx.runtime`, and the node closes it when it stops. Nothing outlives the node that opened it.
 */
export function runtimeState<S extends PluginResources>(open: (runtime: PluginRuntime) => S): RuntimeState<S> {
  const states = new WeakMap<PluginRuntime, S>();
  const openFor = (runtime: PluginRuntime): S => {
    const state = open(runtime);
    states.set(runtime, state);
    return state;
  };
  return {
    init(runtime) {
      const state = openFor(runtime);
      return {
        close: async () => {
          if (states.get(runtime) === state) states.delete(runtime);
          await state.close();
        },
      };
    },
    of: (runtime) => states.get(runtime) ?? openFor(runtime),
  };
}
