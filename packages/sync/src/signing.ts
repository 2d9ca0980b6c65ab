import { timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzipSync, gzip, gzipSync } from 'node:zlib';
import type { SignedDelta, SignedSnapshot, Snapshot, SnapshotDelta } from '@gatehouse/core';
import { gunzipBase64, hmacInSlices } from './text-in-slices';

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

/** hashed in slices: hashing a large payload whole would convert it into one native buffer of its size */
const hmac = hmacInSlices;

/** payload = base64(gzip(JSON(snapshot))), signature = hex HMAC-SHA256 of the payload under the cluster secret. */
export function signSnapshot(snapshot: Snapshot, secret: string): SignedSnapshot {
  requireSecret(secret);
  // level 1: several times faster than the default on large configurations, for a somewhat larger payload
  const payload = gzipSync(Buffer.from(JSON.stringify(snapshot), 'utf8'), { level: 1 }).toString('base64');
  const signed: SignedSnapshot = { version: snapshot.version, hash: snapshot.hash, payload, signature: hmac(payload, secret).toString('hex') };
  if (snapshot.epoch !== undefined) signed.epoch = snapshot.epoch;
  return signed;
}

/** Checks the envelope's signature (constant-time) before anything looks inside; throws SnapshotVerificationError. */
function checkSnapshotSignature(signed: SignedSnapshot, secret: string): void {
  requireSecret(secret);
  if (!signed || typeof signed !== 'object') throw new SnapshotVerificationError('snapshot rejected: not a signed snapshot object');
  if (typeof signed.payload !== 'string' || signed.payload.length === 0) throw new SnapshotVerificationError('snapshot rejected: payload missing');
  if (typeof signed.signature !== 'string' || signed.signature.length === 0) throw new SnapshotVerificationError('snapshot rejected: unsigned (signature missing)');
  if (!SIGNATURE_PATTERN.test(signed.signature)) throw new SnapshotVerificationError('snapshot rejected: signature is not 64 lowercase hex characters');

  const expected = hmac(signed.payload, secret);
  if (!timingSafeEqual(expected, Buffer.from(signed.signature, 'hex'))) {
    throw new SnapshotVerificationError('snapshot rejected: signature does not match (forged, tampered, or signed with another cluster secret)');
  }
}

/** Parses a decoded payload and checks that the envelope's version, hash and epoch are the payload's. */
function checkSnapshotPayload(json: string, signed: SignedSnapshot): Snapshot {
  let snapshot: Snapshot;
  try {
    snapshot = JSON.parse(json) as Snapshot;
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

/**
 * Checks the signature (constant-time) before looking inside, then decodes the payload and checks that the
 * envelope's version and hash are the payload's. Throws SnapshotVerificationError on any mismatch.
 */
export function verifySnapshot(signed: SignedSnapshot, secret: string): Snapshot {
  checkSnapshotSignature(signed, secret);
  let json: string;
  try {
    json = gunzipSync(Buffer.from(signed.payload, 'base64')).toString('utf8');
  } catch (error) {
    throw new SnapshotVerificationError(`snapshot rejected: payload cannot be decoded (${(error as Error).message})`);
  }
  return checkSnapshotPayload(json, signed);
}

/**
 * `verifySnapshot` for large snapshots: the payload is decoded and decompressed a slice at a time, in the thread pool,
 * so loading it leaves no large native buffer behind (see text-in-slices).
 */
export async function verifySnapshotInSlices(signed: SignedSnapshot, secret: string): Promise<Snapshot> {
  checkSnapshotSignature(signed, secret);
  let json: string;
  try {
    json = await gunzipBase64(signed.payload);
  } catch (error) {
    throw new SnapshotVerificationError(`snapshot rejected: payload cannot be decoded (${(error as Error).message})`);
  }
  return checkSnapshotPayload(json, signed);
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

/** payload = base64(gzip(JSON(delta))), signed as snapshots are; the envelope repeats from, version, hash and epoch. */
export function signDelta(delta: SnapshotDelta, secret: string): SignedDelta {
  requireSecret(secret);
  const payload = gzipSync(Buffer.from(JSON.stringify(delta), 'utf8'), { level: 1 }).toString('base64');
  const signed: SignedDelta = {
    kind: 'delta',
    from: delta.from,
    version: delta.version,
    hash: delta.hash,
    payload,
    signature: hmac(payload, secret).toString('hex'),
  };
  if (delta.epoch !== undefined) signed.epoch = delta.epoch;
  return signed;
}

/** Checks a signed delta as `verifySnapshot` checks a snapshot; a snapshot's payload is never taken for a delta. */
export function verifyDelta(signed: SignedDelta, secret: string): SnapshotDelta {
  requireSecret(secret);
  if (!signed || typeof signed !== 'object' || signed.kind !== 'delta') throw new SnapshotVerificationError('delta rejected: not a signed delta object');
  if (typeof signed.payload !== 'string' || signed.payload.length === 0) throw new SnapshotVerificationError('delta rejected: payload missing');
  if (typeof signed.signature !== 'string' || !SIGNATURE_PATTERN.test(signed.signature)) throw new SnapshotVerificationError('delta rejected: unsigned or malformed signature');
  const expected = hmac(signed.payload, secret);
  if (!timingSafeEqual(expected, Buffer.from(signed.signature, 'hex'))) {
    throw new SnapshotVerificationError('delta rejected: signature does not match (forged, tampered, or signed with another cluster secret)');
  }
  let delta: SnapshotDelta;
  try {
    delta = JSON.parse(gunzipSync(Buffer.from(signed.payload, 'base64')).toString('utf8')) as SnapshotDelta;
  } catch (error) {
    throw new SnapshotVerificationError(`delta rejected: payload cannot be decoded (${(error as Error).message})`);
  }
  if (!delta || typeof delta !== 'object' || delta.format !== 'delta' || !delta.changes || typeof delta.changes !== 'object') {
    throw new SnapshotVerificationError('delta rejected: payload is not a delta');
  }
  if (delta.version !== signed.version || delta.from !== signed.from || delta.hash !== signed.hash || (delta.epoch ?? null) !== (signed.epoch ?? null)) {
    throw new SnapshotVerificationError('delta rejected: envelope and payload disagree');
  }
  if (!Number.isSafeInteger(delta.from) || !Number.isSafeInteger(delta.version) || delta.from >= delta.version) {
    throw new SnapshotVerificationError(`delta rejected: versions ${delta.from}→${delta.version} do not go forward`);
  }
  return delta;
}

/** Parses the JSON form of a signed delta (as stored in Redis, announced and cached), checking its shape only. */
export function parseSignedDelta(value: unknown): SignedDelta | null {
  const v = (typeof value === 'string' ? safeParse(value) : value) as Partial<SignedDelta> | null;
  if (!v || typeof v !== 'object' || v.kind !== 'delta' || typeof v.version !== 'number' || typeof v.from !== 'number') return null;
  if (typeof v.hash !== 'string' || typeof v.payload !== 'string' || typeof v.signature !== 'string') return null;
  const signed: SignedDelta = { kind: 'delta', from: v.from, version: v.version, hash: v.hash, payload: v.payload, signature: v.signature };
  if (typeof v.epoch === 'string') signed.epoch = v.epoch;
  return signed;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const gzipAsync = promisify(gzip);

/**
 * `signSnapshot` with the compression off the event loop: the JSON is made at once (the snapshot may change after this
 * returns), then compressed in the thread pool. For large configurations stored in the background.
 */
export async function signSnapshotAsync(snapshot: Snapshot, secret: string): Promise<SignedSnapshot> {
  requireSecret(secret);
  const json = Buffer.from(JSON.stringify(snapshot), 'utf8');
  const payload = (await gzipAsync(json, { level: 1 })).toString('base64');
  const signed: SignedSnapshot = { version: snapshot.version, hash: snapshot.hash, payload, signature: hmac(payload, secret).toString('hex') };
  if (snapshot.epoch !== undefined) signed.epoch = snapshot.epoch;
  return signed;
}

/** Whether `signed.payload` carries a valid signature, without decoding it (a cheap check of a large snapshot). */
export function hasValidSignature(signed: Pick<SignedSnapshot, 'payload' | 'signature'>, secret: string): boolean {
  requireSecret(secret);
  if (typeof signed.payload !== 'string' || typeof signed.signature !== 'string' || !SIGNATURE_PATTERN.test(signed.signature)) return false;
  return timingSafeEqual(hmac(signed.payload, secret), Buffer.from(signed.signature, 'hex'));
}
