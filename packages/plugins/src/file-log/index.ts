import { definePlugin } from '../contract';
import { AppendLog } from '../shared/append-log';
import { customFieldValues } from '../shared/custom-fields';
import { serializeExchange } from '../shared/log-serializer';
import { fileLogConfigSchema, type FileLogConfig } from './schema';

/** One writer per file (and reopen mode) in the process, shared by every configuration naming it. */
const writers = new Map<string, AppendLog>();

export function fileLogWriter(config: FileLogConfig, onError?: (err: Error) => void): AppendLog {
  const key = `${config.reopen ? 'r' : 'k'}|${config.path}`;
  let writer = writers.get(key);
  if (writer === undefined) {
    writer = new AppendLog(config.path, { reopenEachBatch: config.reopen, onError });
    writers.set(key, writer);
  }
  return writer;
}

/** Closes every file-log file (process shutdown, tests). */
export async function closeFileLogs(): Promise<void> {
  const all = [...writers.values()];
  writers.clear();
  await Promise.all(all.map((w) => w.close()));
}

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
  log: (ctx, config, summary) => {
    const log = ctx.runtime.log;
    fileLogWriter(config, (err) => log?.error('file-log: cannot write', { path: config.path, error: err.message })).write(JSON.stringify(serializeExchange(summary, customFieldValues(ctx, config.custom_fields_by_lua, summary, 'file-log'))));
  },
});
