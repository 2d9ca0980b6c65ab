import type { PluginLogger, PluginRuntime } from '../contract';
import { PluginQueues, type QueueLogger } from './queue';

/** Queue log lines through a plugin logger (JSON lines on stderr when the runtime has none). */
export function queueLogger(log: PluginLogger | undefined): QueueLogger {
  const write = (level: string) => (message: string) => {
    if (log === undefined) process.stderr.write(`${JSON.stringify({ level, message })}\n`);
    else if (level === 'error') log.error(message);
    else (log.warn ?? log.error)(message);
  };
  return { error: write('error'), warn: write('warn'), info: write('info') };
}

let processQueues: PluginQueues | null = null;

/** The node's plugin queues (`runtime.queues`); a runtime without them (unit tests) shares one for the process. */
export function queuesFor(runtime: PluginRuntime): PluginQueues {
  if (runtime.queues !== undefined) return runtime.queues;
  processQueues ??= new PluginQueues(queueLogger(runtime.log));
  return processQueues;
}
