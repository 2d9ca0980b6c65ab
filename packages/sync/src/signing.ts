import { timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzipSync, gzip, gzipSync } from 'node:zlib';
import type { SignedDelta, SignedSnapshot, Snapshot, SnapshotDelta } from '@gatehouse/core';
import { openSealed, openSealedWhole, SEAL_CIPHER, sealCompressed, snapshotKeysOf, type SnapshotKeys } from './sealing';
import { gunzipBase64, gunzipSlices, hmacInSlices } from './text-in-slices';
import { gzipJsonInSlices } from './json-gzip-in-slices';

/** The cluster secret, or the keys derived from it once (what long-lived objects pass). */
export type SnapshotSecret = string | SnapshotKeys;

export interface VerifyOptions {
  /**
   * take a payload signed but not sealed, as control planes before sealing published them (data planes do, for one
   * release, so they can be upgraded before the control plane); refused otherwise
   */
  acceptUnsealed?: boolean;
}

/** whether a signed snapshot or delta carries a sealed (encrypted) payload */
export function isSealed(signed: { cipher?: string }): boolean {
  return signed.cipher === SEAL_CIPHER;
}

/** the envelope's cipher must be one this release knows, and an unsealed payload must be welcome */
function checkCipher(signed: { cipher?: unknown }, what: 'snapshot' | 'delta', options: VerifyOptions): void {
  if (signed.cipher === undefined) {
    if (!options.acceptUnsealed) throw new SnapshotVerificationError(`${what} rejected: its payload is not sealed (published by a control plane of an earlier release)`);
    return;
  }
  if (signed.cipher !== SEAL_CIPHER) throw new SnapshotVerificationError(`${what} rejected: unknown cipher ${JSON.stringify(signed.cipher)}`);
}

/** the compressed JSON of a verified payload, sealed or not */
function compressedOf(payload: string, signed: { cipher?: string }, keys: SnapshotKeys): Buffer {
  return isSealed(signed) ? openSealedWhole(payload, keys) : Buffer.from(payload, 'base64');
}

/** gzip at level 1 (several times faster than the default on large configurations, for a somewhat larger payload), then sealed */
function sealJson(json: string, keys: SnapshotKeys): string {
  return sealCompressed(gzipSync(Buffer.from(json, 'utf8'), { level: 1 }), keys);
}

/** Why a snapshot was refused: the data plane logs this and keeps serving its last good config. */
export class SnapshotVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotVerificationError';
  }
}

const SIGNATURE_PATTERN = /^[0-9a-f]{64}$/;

/** hashed in slices: hashing a large payload whole would convert it into one native buffer of its size */
const hmac = (payload: string, keys: SnapshotKeys): Buffer => hmacInSlices(payload, keys.signing);

/** the envelope of a sealed snapshot payload */
function snapshotEnvelope(snapshot: Snapshot, payload: string, keys: SnapshotKeys): SignedSnapshot {
  // the fields in the order parseSignedSnapshot gives them, so a stored snapshot and one read back print alike
  const signed: SignedSnapshot = { version: snapshot.version, hash: snapshot.hash, payload, signature: hmac(payload, keys).toString('hex') };
  if (snapshot.epoch !== undefined) signed.epoch = snapshot.epoch;
  signed.cipher = SEAL_CIPHER;
  return signed;
}

/**
 * Seals, then signs: payload = base64(iv ‖ AES-256-GCM(gzip(JSON(snapshot))) ‖ tag) under the sealing key,
 * signature = hex HMAC-SHA256 of the payload under the cluster secret.
 */
export function signSnapshot(snapshot: Snapshot, secret: SnapshotSecret): SignedSnapshot {
  const keys = snapshotKeysOf(secret);
  return snapshotEnvelope(snapshot, sealJson(JSON.stringify(snapshot), keys), keys);
}

/** Checks the envelope's signature (constant-time) before anything looks inside; throws SnapshotVerificationError. */
function checkSnapshotSignature(signed: SignedSnapshot, keys: SnapshotKeys, options: VerifyOptions): void {
  if (!signed || typeof signed !== 'object') throw new SnapshotVerificationError('snapshot rejected: not a signed snapshot object');
  if (typeof signed.payload !== 'string' || signed.payload.length === 0) throw new SnapshotVerificationError('snapshot rejected: payload missing');
  if (typeof signed.signature !== 'string' || signed.signature.length === 0) throw new SnapshotVerificationError('snapshot rejected: unsigned (signature missing)');
  if (!SIGNATURE_PATTERN.test(signed.signature)) throw new SnapshotVerificationError('snapshot rejected: signature is not 64 lowercase hex characters');

  const expected = hmac(signed.payload, keys);
  if (!timingSafeEqual(expected, Buffer.from(signed.signature, 'hex'))) {
    throw new SnapshotVerificationError('snapshot rejected: signature does not match (forged, tampered, or signed with another cluster secret)');
  }
  checkCipher(signed, 'snapshot', options);
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
export function verifySnapshot(signed: SignedSnapshot, secret: SnapshotSecret, options: VerifyOptions = {}): Snapshot {
  const keys = snapshotKeysOf(secret);
  checkSnapshotSignature(signed, keys, options);
  let json: string;
  try {
    json = gunzipSync(compressedOf(signed.payload, signed, keys)).toString('utf8');
  } catch (error) {
    throw new SnapshotVerificationError(`snapshot rejected: payload cannot be decoded (${(error as Error).message})`);
  }
  return checkSnapshotPayload(json, signed);
}

/**
 * `verifySnapshot` for large snapshots: the payload is decoded and decompressed a slice at a time, in the thread pool,
 * so loading it leaves no large native buffer behind (see text-in-slices).
 */
export async function verifySnapshotInSlices(signed: SignedSnapshot, secret: SnapshotSecret, options: VerifyOptions = {}): Promise<Snapshot> {
  const keys = snapshotKeysOf(secret);
  checkSnapshotSignature(signed, keys, options);
  let json: string;
  try {
    json = isSealed(signed) ? await gunzipSlices(openSealed(signed.payload, keys)) : await gunzipBase64(signed.payload);
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
  if (typeof v.cipher === 'string') signed.cipher = v.cipher;
  return signed;
}

/** sealed and signed as snapshots are; the envelope repeats from, version, hash and epoch. */
export function signDelta(delta: SnapshotDelta, secret: SnapshotSecret): SignedDelta {
  const keys = snapshotKeysOf(secret);
  return deltaEnvelope(delta, sealJson(JSON.stringify(delta), keys), keys);
}

/** `signDelta` with the JSON made and compressed in slices (json-gzip-in-slices.ts); the delta must not change meanwhile */
export async function signDeltaInSlices(delta: SnapshotDelta, secret: SnapshotSecret): Promise<SignedDelta> {
  const keys = snapshotKeysOf(secret);
  return deltaEnvelope(delta, sealCompressed(await gzipJsonInSlices(delta), keys), keys);
}

function deltaEnvelope(delta: SnapshotDelta, payload: string, keys: SnapshotKeys): SignedDelta {
  const signed: SignedDelta = {
    kind: 'delta',
    from: delta.from,
    version: delta.version,
    hash: delta.hash,
    payload,
    signature: hmac(payload, keys).toString('hex'),
  };
  if (delta.epoch !== undefined) signed.epoch = delta.epoch;
  signed.cipher = SEAL_CIPHER;
  return signed;
}

/** Checks a signed delta as `verifySnapshot` checks a snapshot; a snapshot's payload is never taken for a delta. */
export function verifyDelta(signed: SignedDelta, secret: SnapshotSecret, options: VerifyOptions = {}): SnapshotDelta {
  const keys = snapshotKeysOf(secret);
  if (!signed || typeof signed !== 'object' || signed.kind !== 'delta') throw new SnapshotVerificationError('delta rejected: not a signed delta object');
  if (typeof signed.payload !== 'string' || signed.payload.length === 0) throw new SnapshotVerificationError('delta rejected: payload missing');
  if (typeof signed.signature !== 'string' || !SIGNATURE_PATTERN.test(signed.signature)) throw new SnapshotVerificationError('delta rejected: unsigned or malformed signature');
  const expected = hmac(signed.payload, keys);
  if (!timingSafeEqual(expected, Buffer.from(signed.signature, 'hex'))) {
    throw new SnapshotVerificationError('delta rejected: signature does not match (forged, tampered, or signed with another cluster secret)');
  }
  checkCipher(signed, 'delta', options);
  let delta: SnapshotDelta;
  try {
    delta = JSON.parse(gunzipSync(compressedOf(signed.payload, signed, keys)).toString('utf8')) as SnapshotDelta;
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
  if (typeof v.cipher === 'string') signed.cipher = v.cipher;
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
export async function signSnapshotAsync(snapshot: Snapshot, secret: SnapshotSecret): Promise<SignedSnapshot> {
  const keys = snapshotKeysOf(secret);
  const json = Buffer.from(JSON.stringify(snapshot), 'utf8');
  return snapshotEnvelope(snapshot, sealCompressed(await gzipAsync(json, { level: 1 }), keys), keys);
}

/**
 * `signSnapshot` with the JSON made and compressed in slices (json-gzip-in-slices.ts): for a snapshot that nothing
 * changes until the promise settles (one built from the database for this publication).
 */
export async function signSnapshotInSlices(snapshot: Snapshot, secret: SnapshotSecret): Promise<SignedSnapshot> {
  const keys = snapshotKeysOf(secret);
  return snapshotEnvelope(snapshot, sealCompressed(await gzipJsonInSlices(snapshot), keys), keys);
}

/** Whether `signed.payload` carries a valid signature, without decoding it (a cheap check of a large snapshot). */
export function hasValidSignature(signed: Pick<SignedSnapshot, 'payload' | 'signature'>, secret: SnapshotSecret): boolean {
  const keys = snapshotKeysOf(secret);
  if (typeof signed.payload !== 'string' || typeof signed.signature !== 'string' || !SIGNATURE_PATTERN.test(signed.signature)) return false;
  return timingSafeEqual(hmac(signed.payload, keys), Buffer.from(signed.signature, 'hex'));
}
