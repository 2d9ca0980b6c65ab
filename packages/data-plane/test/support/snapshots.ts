import { buildSnapshot, type Consumer, type Snapshot } from '@gatehouse/core';
import { versionedSnapshot as makeSnapshot } from '@gatehouse/testkit';

// the snapshot, polling and unsealed-format helpers the sync tests share live in testkit
export { signUnsealed, versionedSnapshot as makeSnapshot, waitFor } from '@gatehouse/testkit';

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
