import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { buildSnapshot, emptyConfig, type Consumer, type Service, type Snapshot } from '@gatehouse/core';

/** A snapshot whose one service is named after `label`, so different labels give different hashes. */
export function makeSnapshot(version: number, label = `config-${version}`, epoch?: string): Snapshot {
  const config = emptyConfig();
  config.services = [{ id: `00000000-0000-4000-8000-${String(version).padStart(12, '0')}`, name: label } as unknown as Service];
  const snapshot = buildSnapshot(version, config);
  if (epoch !== undefined) snapshot.epoch = epoch;
  return snapshot;
}

/** A snapshot the serving store refuses to load (its "compile" fails). */
export function makeUnloadableSnapshot(version: number): Snapshot {
  const snapshot = makeSnapshot(version, `unloadable-${version}`);
  snapshot.config.consumers = [{ id: 'c', username: 'unloadable' } as unknown as Consumer];
  return buildSnapshot(version, snapshot.config);
}

/** Stands in for the data plane's snapshot store: validate, "compile", swap. */
export class ServingStore {
  current: Snapshot | null = null;
  readonly appliedVersions: number[] = [];

  apply = (snapshot: Snapshot): void => {
    if (snapshot.config.consumers.some((c) => c.username === 'unloadable')) throw new Error('compile failed: unloadable consumer');
    this.current = snapshot;
    this.appliedVersions.push(snapshot.version);
  };

  currentVersion = (): number | null => this.current?.version ?? null;
}

/** Polls until `condition` holds; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Collects log lines so a test can assert that a rejection was reported. */
export class MemoryLogger {
  readonly lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  debug = (message: string, fields?: Record<string, unknown>) => void this.lines.push({ level: 'debug', message, fields });
  info = (message: string, fields?: Record<string, unknown>) => void this.lines.push({ level: 'info', message, fields });
  warn = (message: string, fields?: Record<string, unknown>) => void this.lines.push({ level: 'warn', message, fields });
  error = (message: string, fields?: Record<string, unknown>) => void this.lines.push({ level: 'error', message, fields });
  has(level: string, pattern: RegExp): boolean {
    return this.lines.some((l) => l.level === level && pattern.test(`${l.message} ${JSON.stringify(l.fields ?? {})}`));
  }
}

/** The format of control planes before sealing: payload = base64(gzip(JSON)), HMAC-SHA256 under the secret, no `cipher`. */
export function signUnsealed<T extends { version: number; hash: string; epoch?: string }>(value: T, secret: string, delta?: { from: number }): any {
  const payload = gzipSync(Buffer.from(JSON.stringify(value), 'utf8')).toString('base64');
  const signature = createHmac('sha256', secret).update(payload).digest('hex');
  const envelope: Record<string, unknown> = delta ? { kind: 'delta', from: delta.from } : {};
  Object.assign(envelope, { version: value.version, hash: value.hash, payload, signature });
  if (value.epoch !== undefined) envelope.epoch = value.epoch;
  return envelope;
}
