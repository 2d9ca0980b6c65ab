import { createHmac, timingSafeEqual } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { SignedSnapshot, Snapshot } from '@gatehouse/core';

/** Why a snapshot was refused: the data plane logs this and keeps serving its last good config. */
export class SnapshotVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotVerificationError';
  }
}

const SIGNATURE_PATTERN = /^[0-9a-f]{64}$/;

function requireSecret(secret: string): void {
  if (typeof secret !== 'string' || secret.length === 0) throw new Error('a non-empty cluster secret is required to sign or verify snapshots');
}

function hmac(payload: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(payload, 'utf8').digest();
}

/** payload = base64(gzip(JSON(snapshot))), signature = hex HMAC-SHA256 of the payload under the cluster secret. */
export function signSnapshot(snapshot: Snapshot, secret: string): SignedSnapshot {
  requireSecret(secret);
  const payload = gzipSync(Buffer.from(JSON.stringify(snapshot), 'utf8')).toString('base64');
  const signed: SignedSnapshot = { version: snapshot.version, hash: snapshot.hash, payload, signature: hmac(payload, secret).toString('hex') };
  if (snapshot.epoch !== undefined) signed.epoch = snapshot.epoch;
  return signed;
}

/**
 * Checks the signature (constant-time) before looking inside, then decodes the payload and checks that the
 * envelope's version and hash are the payload's. Throws SnapshotVerificationError on any mismatch.
 */
export function verifySnapshot(signed: SignedSnapshot, secret: string): Snapshot {
  requireSecret(secret);
  if (!signed || typeof signed !== 'object') throw new SnapshotVerificationError('snapshot rejected: not a signed snapshot object');
  if (typeof signed.payload !== 'string' || signed.payload.length === 0) throw new SnapshotVerificationError('snapshot rejected: payload missing');
  if (typeof signed.signature !== 'string' || signed.signature.length === 0) throw new SnapshotVerificationError('snapshot rejected: unsigned (signature missing)');
  if (!SIGNATURE_PATTERN.test(signed.signature)) throw new SnapshotVerificationError('snapshot rejected: signature is not 64 lowercase hex characters');

  const expected = hmac(signed.payload, secret);
  if (!timingSafeEqual(expected, Buffer.from(signed.signature, 'hex'))) {
    throw new SnapshotVerificationError('snapshot rejected: signature does not match (forged, tampered, or signed with another cluster secret)');
  }

  let snapshot: Snapshot;
  try {
    snapshot = JSON.parse(gunzipSync(Buffer.from(signed.payload, 'base64')).toString('utf8')) as Snapshot;
  } catch (error) {
    throw new SnapshotVerificationError(`snapshot rejected: payload cannot be decoded (${(error as Error).message})`);
  }
  if (!snapshot || typeof snapshot !== 'object' || snapshot.format !== 1) {
    throw new SnapshotVerificationError(`snapshot rejected: unknown format ${JSON.stringify((snapshot as { format?: unknown } | null)?.format)}`);
  }
  if (!Number.isSafeInteger(snapshot.version) || typeof snapshot.hash !== 'string' || !snapshot.config || typeof snapshot.config !== 'object') {
    throw new SnapshotVerificationError('snapshot rejected: payload lacks version, hash or config');
  }
  if (snapshot.version !== signed.version || snapshot.hash !== signed.hash) {
    throw new SnapshotVerificationError(
      `snapshot rejected: envelope says version ${signed.version} hash ${signed.hash}, payload has version ${snapshot.version} hash ${snapshot.hash}`,
    );
  }
  if ((snapshot.epoch ?? null) !== (signed.epoch ?? null)) {
    throw new SnapshotVerificationError(`snapshot rejected: envelope says epoch ${signed.epoch ?? 'none'}, payload has epoch ${snapshot.epoch ?? 'none'}`);
  }
  return snapshot;
}

/** Parses the JSON form of a signed snapshot (as stored in Redis and the disk cache), checking its shape only. */
export function parseSignedSnapshot(text: string): SignedSnapshot {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SnapshotVerificationError(`snapshot rejected: stored value is not JSON (${(error as Error).message})`);
  }
  const v = value as Partial<SignedSnapshot> | null;
  if (!v || typeof v !== 'object' || typeof v.version !== 'number' || typeof v.hash !== 'string' || typeof v.payload !== 'string') {
    throw new SnapshotVerificationError('snapshot rejected: stored value is not a signed snapshot');
  }
  const signed: SignedSnapshot = { version: v.version, hash: v.hash, payload: v.payload, signature: typeof v.signature === 'string' ? v.signature : '' };
  if (typeof v.epoch === 'string') signed.epoch = v.epoch;
  return signed;
}
