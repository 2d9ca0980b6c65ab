// Certificates made in the test with the openssl CLI: a CA, leaf certificates it signs (server or client), and
// self-signed ones. Everything lives in a temporary directory and is returned as PEM text.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Pem {
  cert: string;
  key: string;
}

export type KeyKind = 'ec' | 'rsa';

function keyArgs(kind: KeyKind): string[] {
  return kind === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'] : ['-newkey', 'rsa:2048'];
}

export class CertificateFactory {
  private readonly dir = mkdtempSync(join(tmpdir(), 'gatehouse-certs-'));
  private n = 0;

  private file(name: string): string {
    return join(this.dir, `${this.n}-${name}`);
  }

  private openssl(args: string[]): void {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  }

  /** a CA certificate (basicConstraints CA:TRUE); `days` may be negative-free only: expired ones use `expiredCa` */
  ca(name = 'Gatehouse Test CA', kind: KeyKind = 'ec'): Pem {
    this.n++;
    const key = this.file('ca.key');
    const cert = this.file('ca.crt');
    this.openssl(['req', '-x509', ...keyArgs(kind), '-nodes', '-keyout', key, '-out', cert, '-subj', `/CN=${name}`, '-days', '30',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
  }

  /** a self-signed leaf certificate (not a CA) for the given DNS names */
  selfSigned(names: string[], kind: KeyKind = 'ec'): Pem {
    this.n++;
    const key = this.file('self.key');
    const cert = this.file('self.crt');
    this.openssl(['req', '-x509', ...keyArgs(kind), '-nodes', '-keyout', key, '-out', cert, '-subj', `/CN=${names[0]}`, '-days', '30',
      '-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`, '-addext', 'basicConstraints=critical,CA:FALSE']);
    return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
  }

  /** a leaf certificate signed by `ca`, for servers (DNS/IP names) or clients */
  signed(ca: Pem, names: string[], usage: 'server' | 'client' = 'server', kind: KeyKind = 'ec'): Pem {
    this.n++;
    const key = this.file('leaf.key');
    const csr = this.file('leaf.csr');
    const cert = this.file('leaf.crt');
    const caCert = this.file('issuer.crt');
    const caKey = this.file('issuer.key');
    const ext = this.file('leaf.ext');
    writeFileSync(caCert, ca.cert);
    writeFileSync(caKey, ca.key);
    const alt = names.map((n) => (/^[\d.]+$/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
    writeFileSync(ext, `basicConstraints=critical,CA:FALSE\nsubjectAltName=${alt}\nextendedKeyUsage=${usage === 'server' ? 'serverAuth' : 'clientAuth'}\n`);
    this.openssl(['req', ...keyArgs(kind), '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${names[0]}`]);
    this.openssl(['x509', '-req', '-in', csr, '-CA', caCert, '-CAkey', caKey, '-CAcreateserial', '-out', cert, '-days', '30', '-extfile', ext]);
    return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
  }

  /** a CA certificate whose validity ended in the past (openssl's CLI cannot backdate, selfsigned can) */
  async expiredCa(): Promise<Pem> {
    const require = createRequire(join(process.cwd(), 'packages/data-plane/package.json'));
    const { generate } = require('selfsigned') as {
      generate(attrs: Array<{ name: string; value: string }>, options: Record<string, unknown>): Promise<{ cert: string; private: string }>;
    };
    const made = await generate([{ name: 'commonName', value: 'Expired CA' }], {
      keyType: 'ec',
      curve: 'P-256',
      notBeforeDate: new Date('2001-01-01T00:00:00Z'),
      notAfterDate: new Date('2002-01-01T00:00:00Z'),
      extensions: [{ name: 'basicConstraints', cA: true, critical: true }],
    });
    return { cert: made.cert, key: made.private };
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
