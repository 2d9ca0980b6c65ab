import { describe, expect, it } from '@jest/globals';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { gunzipBase64, hmacInSlices, readTextInSlices, SLICE_CHARS, slicesOf, writeTextInSlices } from './text-in-slices';

/** text of several slices with multi-byte characters and a surrogate pair exactly on slice boundaries */
function awkwardText(): string {
  const filler = 'a'.repeat(SLICE_CHARS - 1);
  return `${filler}😀${filler}é${filler.slice(1)}€${filler}😀 end`;
}

describe('text in slices', () => {
  it('slices never split a surrogate pair and join back to the text', () => {
    const text = awkwardText();
    const slices = [...slicesOf(text)];
    expect(slices.length).toBeGreaterThan(3);
    expect(slices.join('')).toBe(text);
    for (const slice of slices) {
      const last = slice.charCodeAt(slice.length - 1);
      expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
    }
  });

  it('hashes to the HMAC of the whole text', () => {
    for (const text of [awkwardText(), 'x'.repeat(3 * SLICE_CHARS + 17), '']) {
      expect(hmacInSlices(text, 'secret').toString('hex')).toBe(createHmac('sha256', 'secret').update(text, 'utf8').digest('hex'));
    }
  });

  it('decodes and decompresses a base64 gzip payload to its text', async () => {
    const text = awkwardText().repeat(3);
    const payload = gzipSync(Buffer.from(text, 'utf8'), { level: 1 }).toString('base64');
    expect(payload.length).toBeGreaterThan(SLICE_CHARS / 100);
    await expect(gunzipBase64(payload)).resolves.toBe(text);
    // a payload of many slices (random bytes do not compress)
    const noisy = randomBytes(4 * SLICE_CHARS).toString('latin1');
    const big = gzipSync(Buffer.from(noisy, 'utf8')).toString('base64');
    expect(big.length).toBeGreaterThan(3 * SLICE_CHARS);
    await expect(gunzipBase64(big)).resolves.toBe(noisy);
  });

  it('refuses a payload that is not gzip', async () => {
    await expect(gunzipBase64(Buffer.from('not gzip at all').toString('base64'))).rejects.toThrow();
    const truncated = gzipSync(Buffer.from(awkwardText())).toString('base64').slice(0, 400);
    await expect(gunzipBase64(truncated)).rejects.toThrow();
  });

  it('reads and writes files as the whole text would be', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-slices-'));
    try {
      const text = awkwardText();
      writeFileSync(join(dir, 'in.txt'), text, 'utf8');
      await expect(readTextInSlices(join(dir, 'in.txt'))).resolves.toBe(text);
      const handle = await open(join(dir, 'out.txt'), 'w');
      try {
        await writeTextInSlices(handle, text);
      } finally {
        await handle.close();
      }
      expect(readFileSync(join(dir, 'out.txt')).equals(Buffer.from(text, 'utf8'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
