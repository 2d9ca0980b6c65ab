import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { buildSnapshot, emptyConfig, type Service, type Snapshot } from '@gatehouse/core';

/** A snapshot whose one service is named after `label`, so different labels give different hashes. */
export function makeSnapshot(version: number, label = `config-${version}`): Snapshot {
  const config = emptyConfig();
  config.services = [{ id: `00000000-0000-4000-8000-${String(version).padStart(12, '0')}`, name: label } as unknown as Service];
  return buildSnapshot(version, config);
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

/** The format of control planes before sealing: payload = base64(gzip(JSON)), HMAC-SHA256 under the secret, no `cipher`. */
export function signUnsealed<T extends { version: number; hash: string; epoch?: string }>(value: T, secret: string, delta?: { from: number }): any {
  const payload = gzipSync(Buffer.from(JSON.stringify(value), 'utf8')).toString('base64');
  const signature = createHmac('sha256', secret).update(payload).digest('hex');
  const envelope: Record<string, unknown> = delta ? { kind: 'delta', from: delta.from } : {};
  Object.assign(envelope, { version: value.version, hash: value.hash, payload, signature });
  if (value.epoch !== undefined) envelope.epoch = value.epoch;
  return envelope;
}
