import { serializeSession } from '../shared/session-serializer';
import { definePlugin, type PluginLogger } from '../contract';
import { AppendLog } from '../shared/append-log';
import { customFieldValues } from '../shared/custom-fields';
import { serializeExchange } from '../shared/log-serializer';
import { runtimeState } from '../shared/runtime-state';
import { fileLogConfigSchema, type FileLogConfig } from './schema';

/** One writer per file (and reopen mode) on a data-plane node, shared by every configuration naming it. */
class FileLogWriters {
  private readonly writers = new Map<string, AppendLog>();

  constructor(private readonly log: PluginLogger | undefined) {}

  writerFor(config: FileLogConfig): AppendLog {
    const key = `${config.reopen ? 'r' : 'k'}|${config.path}`;
    let writer = this.writers.get(key);
    if (writer === undefined) {
      const log = this.log;
      writer = new AppendLog(config.path, { reopenEachBatch: config.reopen, onError: (err) => log?.error('file-log: cannot write', { path: config.path, error: err.message }) });
      this.writers.set(key, writer);
    }
    return writer;
  }

  /** writes what is buffered and closes every file */
  async close(): Promise<void> {
    const all = [...this.writers.values()];
    this.writers.clear();
    await Promise.all(all.map((w) => w.close()));
  }
}

const fileLogWriters = runtimeState((runtime) => new FileLogWriters(runtime.log));

/**
 * Kong's file-log: one JSON line per request (Kong's log serializer shape) appended to `path`. Writes are buffered
 * and asynchronous, never on the request path. With `reopen` the file is opened for each batch and closed after, so
 * a rotated file is let go at once; without it the file stays open.
 */
export const fileLog = definePlugin<FileLogConfig, unknown>({
  name: 'file-log',
  priority: 9,
  version: '3.9.0',
  configSchema: fileLogConfigSchema,
  auth: false,
  noConsumer: false,
  init: fileLogWriters.init,
  log: (ctx, config, summary) => {
    fileLogWriters.of(ctx.runtime).writerFor(config).write(JSON.stringify(serializeExchange(summary, customFieldValues(ctx, config.custom_fields_by_lua, summary, 'file-log'))));
  },
  streamLog: (ctx, config, session) => {
    fileLogWriters.of(ctx.runtime).writerFor(config).write(JSON.stringify(serializeSession(session)));
  },
});
