import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';

export interface PemPair {
  cert: string;
  key: string;
}

/** key and certificate in one file, so two processes starting together can never pair one's key with the other's */
export const DEFAULT_PAIR_FILE = 'proxy-default-tls.pem';

/** The operator's default certificate (GATEHOUSE_PROXY_TLS_CERT / _KEY files). */
export function readPemPair(certFile: string, keyFile: string): PemPair {
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

function writeOnce(file: string, text: string, mode: number): void {
  // written aside and linked into place: two processes starting together keep the first, nobody reads half a file
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, text, { mode });
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(tmp);
  }
}

/**
 * A self-signed certificate (EC P-256, CN=localhost, ten years) made once per data directory and reused on
 * every start, like Kong's default certificate.
 */
export async function selfSignedDefault(dataDir: string): Promise<PemPair> {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, DEFAULT_PAIR_FILE);
  if (!existsSync(file)) {
    const made = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      days: 3650,
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
    } as Parameters<typeof generate>[1]);
    writeOnce(file, `${made.private.trim()}\n${made.cert.trim()}\n`, 0o600);
  }
  const text = readFileSync(file, 'utf8');
  const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----/.exec(text)?.[0];
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(text)?.[0];
  if (!key || !cert) throw new Error(`${file} does not hold a private key and a certificate`);
  return { cert: `${cert}\n`, key: `${key}\n` };
}
