import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { buildSnapshot, emptyConfig, type Service, type SignedDelta, type SignedSnapshot, type Snapshot } from '@gatehouse/core';

/**
 * A snapshot of `version` whose one service is named after `label`, so different labels give different hashes; with
 * `epoch`, of that epoch. For tests of the snapshot protocol, where only versions, hashes and epochs matter.
 */
export function versionedSnapshot(version: number, label = `config-${version}`, epoch?: string): Snapshot {
  const config = emptyConfig();
  config.services = [{ id: `00000000-0000-4000-8000-${String(version).padStart(12, '0')}`, name: label } as unknown as Service];
  const snapshot = buildSnapshot(version, config);
  if (epoch !== undefined) snapshot.epoch = epoch;
  return snapshot;
}

/** Polls every 25 ms until `condition` holds; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The format of control planes before sealing: payload = base64(gzip(JSON)), HMAC-SHA256 under the secret, no `cipher`. */
export function signUnsealed(value: Versioned, secret: string): SignedSnapshot;
export function signUnsealed(value: Versioned, secret: string, delta: { from: number }): SignedDelta;
export function signUnsealed(value: Versioned, secret: string, delta?: { from: number }): SignedSnapshot | SignedDelta {
  const payload = gzipSync(Buffer.from(JSON.stringify(value), 'utf8')).toString('base64');
  const signature = createHmac('sha256', secret).update(payload).digest('hex');
  const signed: SignedSnapshot = { version: value.version, hash: value.hash, payload, signature };
  if (value.epoch !== undefined) signed.epoch = value.epoch;
  return delta ? { kind: 'delta', from: delta.from, ...signed } : signed;
}

/** what `signUnsealed` signs: a snapshot or a delta */
interface Versioned {
  version: number;
  hash: string;
  epoch?: string;
}
