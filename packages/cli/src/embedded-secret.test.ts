import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedClusterSecret } from './embedded-secret';

describe('embedded cluster secret', () => {
  it('is made once, kept 0600 in the data directory, and the same at the next start', () => {
    const root = mkdtempSync(join(tmpdir(), 'gh-secret-'));
    try {
      const dataDir = join(root, 'data');
      const first = embeddedClusterSecret(dataDir);
      expect(first).toMatch(/^[0-9a-f]{64}$/);
      expect(statSync(join(dataDir, 'cluster-secret')).mode & 0o777).toBe(0o600);
      expect(embeddedClusterSecret(dataDir)).toBe(first);
      // another data directory, another secret
      expect(embeddedClusterSecret(join(root, 'other'))).not.toBe(first);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('replaces a file that does not hold a secret of its form', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-secret-'));
    try {
      writeFileSync(join(dataDir, 'cluster-secret'), 'short\n');
      const secret = embeddedClusterSecret(dataDir);
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      expect(readFileSync(join(dataDir, 'cluster-secret'), 'utf8').trim()).toBe(secret);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
