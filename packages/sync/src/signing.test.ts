import { describe, expect, it } from '@jest/globals';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createHmac } from 'node:crypto';
import type { SnapshotDelta } from '@gatehouse/core';
import { signUnsealed, versionedSnapshot as makeSnapshot } from '@gatehouse/testkit';
import { parseSignedDelta, parseSignedSnapshot, signDelta, signSnapshot, SnapshotVerificationError, verifyDelta, verifySnapshot, verifySnapshotInSlices } from './signing';

const SECRET = 'cluster-secret-for-tests-0123456789abcdef';
const sign = (payload: string, secret = SECRET) => createHmac('sha256', secret).update(payload).digest('hex');

describe('snapshot signing', () => {
  it('round-trips: verify returns the signed snapshot', () => {
    const snapshot = makeSnapshot(7);
    const signed = signSnapshot(snapshot, SECRET);
    expect(signed.version).toBe(7);
    expect(signed.hash).toBe(snapshot.hash);
    expect(signed.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(verifySnapshot(signed, SECRET)).toEqual(snapshot);
  });

  it('verifying a slice at a time gives the same snapshot and refuses what verifySnapshot refuses', async () => {
    const snapshot = makeSnapshot(9);
    // a payload of several slices
    snapshot.config.consumers = Array.from({ length: 12000 }, (_, i) => ({ id: `c-${i}-${'x'.repeat(40)}`, username: `user-${i}é`, custom_id: null, tags: null, created_at: i, updated_at: i }));
    const signed = signSnapshot(snapshot, SECRET);
    expect(signed.payload.length).toBeGreaterThan(64 * 1024);
    await expect(verifySnapshotInSlices(signed, SECRET)).resolves.toEqual(verifySnapshot(signed, SECRET));
    await expect(verifySnapshotInSlices({ ...signed, signature: sign(signed.payload, 'another-secret') }, SECRET)).rejects.toThrow(/signature does not match/);
    const notGzip = Buffer.from('{"format":1}').toString('base64');
    await expect(verifySnapshotInSlices({ ...signed, payload: notGzip, signature: sign(notGzip) }, SECRET)).rejects.toThrow(/payload cannot be decoded/);
    const { cipher: _drop, ...unsealed } = signed;
    await expect(verifySnapshotInSlices({ ...unsealed, payload: notGzip, signature: sign(notGzip) }, SECRET, { acceptUnsealed: true })).rejects.toThrow(/payload cannot be decoded/);
    const other = signSnapshot(makeSnapshot(10), SECRET);
    await expect(verifySnapshotInSlices({ ...other, version: 9 }, SECRET)).rejects.toThrow(/envelope says version 9/);
  });

  it('seals the payload: neither its text nor its bytes nor a gunzip of them shows what the snapshot holds', () => {
    const secretText = 'my-key-auth-key-0123456789';
    const signed = signSnapshot(makeSnapshot(1, secretText), SECRET);
    expect(signed.cipher).toBe('aes-256-gcm');
    const bytes = Buffer.from(signed.payload, 'base64');
    expect(bytes[0] === 0x1f && bytes[1] === 0x8b).toBe(false);
    expect(JSON.stringify(signed)).not.toContain(secretText);
    expect(bytes.toString('latin1')).not.toContain(secretText);
    expect(() => gunzipSync(bytes)).toThrow();
    // a new iv every time: the same snapshot never seals to the same payload
    expect(signSnapshot(makeSnapshot(1, secretText), SECRET).payload).not.toBe(signed.payload);
    expect(verifySnapshot(signed, SECRET).config.services[0]!.name).toBe(secretText);
  });

  it('refuses a sealed payload altered and signed again (the cipher tag), or opened under another secret', async () => {
    const snapshot = makeSnapshot(9);
    snapshot.config.consumers = Array.from({ length: 12000 }, (_, i) => ({ id: `c-${i}`, username: `user-${i}`, custom_id: null, tags: null, created_at: i, updated_at: i }));
    const signed = signSnapshot(snapshot, SECRET);
    const bytes = Buffer.from(signed.payload, 'base64');
    bytes[Math.floor(bytes.length / 2)]! ^= 1;
    const altered = bytes.toString('base64');
    await expect(verifySnapshotInSlices({ ...signed, payload: altered, signature: sign(altered) }, SECRET)).rejects.toThrow(/cannot be decoded/);
    expect(() => verifySnapshot({ ...signed, payload: altered, signature: sign(altered) }, SECRET)).toThrow(/cannot be decoded/);
    // signed with this secret, sealed under another one's key
    const other = 'someone-elses-secret-0123456789abcdef';
    const foreign = signSnapshot(makeSnapshot(3), other);
    await expect(verifySnapshotInSlices({ ...foreign, signature: sign(foreign.payload) }, SECRET)).rejects.toThrow(/cannot be decoded/);
    const { cipher: _drop, ...stripped } = signSnapshot(makeSnapshot(4), SECRET);
    expect(() => verifySnapshot(stripped, SECRET, { acceptUnsealed: true })).toThrow(/cannot be decoded/);
    expect(() => verifySnapshot({ ...signed, cipher: 'rot13' }, SECRET)).toThrow(/unknown cipher/);
  });

  it('takes the unsealed format of the earlier release only when asked to', async () => {
    const snapshot = makeSnapshot(5, 'old-format');
    const old = signUnsealed(snapshot, SECRET);
    expect(() => verifySnapshot(old, SECRET)).toThrow(/not sealed/);
    expect(verifySnapshot(old, SECRET, { acceptUnsealed: true })).toEqual(snapshot);
    await expect(verifySnapshotInSlices(old, SECRET, { acceptUnsealed: true })).resolves.toEqual(snapshot);
    expect(() => verifySnapshot(signUnsealed(snapshot, 'someone-elses-secret-0123456789abcdef'), SECRET, { acceptUnsealed: true })).toThrow(/signature does not match/);
    const delta: SnapshotDelta = { format: 'delta', from: 5, version: 6, created_at: 1, hash: 'h'.repeat(32), hashes: {} as SnapshotDelta['hashes'], changes: {} };
    const oldDelta = parseSignedDelta(signUnsealed(delta, SECRET, { from: 5 }))!;
    expect(() => verifyDelta(oldDelta, SECRET)).toThrow(/not sealed/);
    expect(verifyDelta(oldDelta, SECRET, { acceptUnsealed: true })).toEqual(delta);
    const sealed = signDelta(delta, SECRET);
    expect(sealed.cipher).toBe('aes-256-gcm');
    expect(verifyDelta(parseSignedDelta(JSON.stringify(sealed))!, SECRET)).toEqual(delta);
  });

  it('rejects an unsigned snapshot', () => {
    const signed = { ...signSnapshot(makeSnapshot(1), SECRET), signature: '' };
    expect(() => verifySnapshot(signed, SECRET)).toThrow(/unsigned/);
    const { signature: _drop, ...withoutField } = signSnapshot(makeSnapshot(1), SECRET);
    expect(() => verifySnapshot(withoutField as never, SECRET)).toThrow(SnapshotVerificationError);
  });

  it('rejects a snapshot signed with another secret', () => {
    const forged = signSnapshot(makeSnapshot(2), 'someone-elses-secret-0123456789abcdef');
    expect(() => verifySnapshot(forged, SECRET)).toThrow(/signature does not match/);
  });

  it('rejects a tampered payload under the original signature', () => {
    const signed = signSnapshot(makeSnapshot(3), SECRET);
    const evil = makeSnapshot(3, 'evil');
    const payload = gzipSync(Buffer.from(JSON.stringify({ ...evil, hash: signed.hash }))).toString('base64');
    expect(() => verifySnapshot({ ...signed, payload }, SECRET)).toThrow(/signature does not match/);
  });

  it('rejects a signature that is not hex of the right length', () => {
    const signed = signSnapshot(makeSnapshot(3), SECRET);
    expect(() => verifySnapshot({ ...signed, signature: signed.signature.slice(2) }, SECRET)).toThrow(/64 lowercase hex/);
    expect(() => verifySnapshot({ ...signed, signature: signed.signature.toUpperCase() }, SECRET)).toThrow(SnapshotVerificationError);
  });

  it('rejects an undecodable payload even when correctly signed', () => {
    const payload = Buffer.from('not gzip at all').toString('base64');
    expect(() => verifySnapshot({ version: 1, hash: 'x', payload, signature: sign(payload) }, SECRET, { acceptUnsealed: true })).toThrow(/cannot be decoded/);
    expect(() => verifySnapshot({ version: 1, hash: 'x', cipher: 'aes-256-gcm', payload, signature: sign(payload) }, SECRET)).toThrow(/cannot be decoded/);
  });

  it('rejects an envelope whose version or hash differs from the payload', () => {
    const signed = signSnapshot(makeSnapshot(4), SECRET);
    expect(() => verifySnapshot({ ...signed, version: 5 }, SECRET)).toThrow(/envelope says version 5/);
    expect(() => verifySnapshot({ ...signed, hash: '0'.repeat(32) }, SECRET)).toThrow(/envelope says/);
  });

  it('carries the epoch in the envelope and rejects an envelope whose epoch differs from the payload', () => {
    const snapshot = { ...makeSnapshot(4), epoch: '1760000000000-0123456789abcdef' };
    const signed = signSnapshot(snapshot, SECRET);
    expect(signed.epoch).toBe(snapshot.epoch);
    expect(verifySnapshot(signed, SECRET).epoch).toBe(snapshot.epoch);
    expect(parseSignedSnapshot(JSON.stringify(signed)).epoch).toBe(snapshot.epoch);
    expect(() => verifySnapshot({ ...signed, epoch: '1770000000000-0123456789abcdef' }, SECRET)).toThrow(/envelope says epoch/);
    const { epoch: _drop, ...withoutEpoch } = signed;
    expect(() => verifySnapshot(withoutEpoch, SECRET)).toThrow(/envelope says epoch none/);
  });

  it('rejects a signed payload of an unknown format', () => {
    const payload = gzipSync(Buffer.from(JSON.stringify({ format: 2, version: 1, hash: 'h', config: {} }))).toString('base64');
    expect(() => verifySnapshot({ version: 1, hash: 'h', payload, signature: sign(payload) }, SECRET, { acceptUnsealed: true })).toThrow(/unknown format/);
  });

  it('refuses to sign or verify without a secret', () => {
    expect(() => signSnapshot(makeSnapshot(1), '')).toThrow(/secret/);
    expect(() => verifySnapshot(signSnapshot(makeSnapshot(1), SECRET), '')).toThrow(/secret/);
  });

  it('parses the stored JSON form and rejects what is not a signed snapshot', () => {
    const signed = signSnapshot(makeSnapshot(9), SECRET);
    expect(parseSignedSnapshot(JSON.stringify(signed))).toEqual(signed);
    expect(() => parseSignedSnapshot('{nope')).toThrow(/not JSON/);
    expect(() => parseSignedSnapshot('{"version":1}')).toThrow(/not a signed snapshot/);
  });
});
