import type { PluginLogger, PluginRuntime } from '../contract';
import { type QueueLogger } from './queue';
import { PluginQueues } from './plugin-queues';

/** Queue log lines through a plugin logger (JSON lines on stderr when the runtime has none). */
export function queueLogger(log: PluginLogger | undefined): QueueLogger {
  const write = (level: string) => (message: string) => {
    if (log === undefined) process.stderr.write(`${JSON.stringify({ level, message })}\n`);
    else if (level === 'error') log.error(message);
    else (log.warn ?? log.error)(message);
  };
  return { error: write('error'), warn: write('warn'), info: write('info') };
}

/** The node's plugin queues (`runtime.queues`, set by `openPlugins`); a runtime no node opened gets them on first use. */
export function queuesFor(runtime: PluginRuntime): PluginQueues {
  runtime.queues ??= new PluginQueues(queueLogger(runtime.log));
  return runtime.queues;
}
