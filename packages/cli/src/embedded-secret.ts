import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SECRET_FILE = 'cluster-secret';
const FORM = /^[0-9a-f]{64}$/;

/**
 * The snapshot-signing secret of `gatehouse start` without Redis, kept in the data directory (0600, beside the disk
 * cache it protects). A secret made anew at every start would make the cache written before a restart fail its
 * signature check, and the restarted process would serve nothing until its control plane had published again.
 */
export function embeddedClusterSecret(dataDir: string): string {
  const file = join(dataDir, SECRET_FILE);
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (FORM.test(kept)) return kept;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secret = randomBytes(32).toString('hex');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
