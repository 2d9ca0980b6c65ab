import { describe, expect, it } from '@jest/globals';
import { definePlugin, type PluginRuntime } from './contract';
import { openPlugins } from './open-plugins';
import { runtimeState } from './shared/runtime-state';
import { z } from 'zod';

function pluginWithState(name: string, events: string[]) {
  const state = runtimeState((runtime: PluginRuntime) => {
    events.push(`open ${name} ${String(runtime.redisPrefix)}`);
    return { close: () => void events.push(`close ${name}`) };
  });
  return { state, plugin: definePlugin({ name, priority: 1, version: '1', configSchema: z.object({}), auth: false, noConsumer: false, init: state.init }) };
}

describe('plugin lifecycle', () => {
  it('opens each plugin once per runtime, hands its hooks that state, and closes in reverse order', async () => {
    const events: string[] = [];
    const a = pluginWithState('a', events);
    const b = pluginWithState('b', events);
    const runtime: PluginRuntime = { redisPrefix: 'node-1:' };
    const opened = await openPlugins(runtime, [a.plugin, b.plugin]);
    expect(events).toEqual(['open a node-1:', 'open b node-1:']);
    expect(a.state.of(runtime)).toBe(a.state.of(runtime));
    expect(runtime.queues).toBeDefined();
    const other: PluginRuntime = { redisPrefix: 'node-2:' };
    expect(a.state.of(other)).not.toBe(a.state.of(runtime));
    await opened.close();
    expect(events).toEqual(['open a node-1:', 'open b node-1:', 'open a node-2:', 'close b', 'close a']);
    expect(runtime.queues?.enqueue({ name: 'q', logTag: 't', owner: 'o', config: { max_batch_size: 1, max_coalescing_delay: 0, max_entries: 1, max_bytes: null, max_retry_time: 0, initial_retry_delay: 1, max_retry_delay: 1, concurrency_limit: 1 }, handler: async () => {} }, 1)).toBe(false);
  });

  it('logs a plugin that fails to close and closes the others', async () => {
    const errors: string[] = [];
    const events: string[] = [];
    const good = pluginWithState('good', events);
    const bad = definePlugin({ name: 'bad', priority: 1, version: '1', configSchema: z.object({}), auth: false, noConsumer: false, init: () => ({ close: () => Promise.reject(new Error('stuck')) }) });
    const opened = await openPlugins({ log: { error: (m, d) => void errors.push(`${m} ${String(d?.plugin)} ${String(d?.error)}`) } }, [good.plugin, bad]);
    await opened.close();
    expect(errors).toEqual(['a plugin failed to close bad stuck']);
    expect(events).toContain('close good');
  });
});
