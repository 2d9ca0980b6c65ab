import type { PeerCertificate } from 'node:tls';
import { describe, expect, it } from '@jest/globals';
import { upstreamTls } from './upstream-tls';

/** a peer chain leaf → intermediate → root, as Node hands it to checkServerIdentity */
function chain(): PeerCertificate {
  const root = { subject: { CN: 'root' }, fingerprint256: 'R' } as unknown as PeerCertificate & { issuerCertificate?: unknown };
  root.issuerCertificate = root;
  const intermediate = { subject: { CN: 'inter' }, fingerprint256: 'I', issuerCertificate: root };
  return { subject: { CN: 'up.test' }, subjectaltname: 'DNS:up.test', fingerprint256: 'L', issuerCertificate: intermediate } as unknown as PeerCertificate;
}

describe('upstreamTls', () => {
  it('limits the chain to tls_verify_depth intermediates (OpenSSL\'s depth: levels 0 … depth+1)', () => {
    const strict = upstreamTls({ host: 'up.test', verify: true, verifyDepth: 0, ca: null, clientCert: null });
    expect(strict.options.checkServerIdentity!('up.test', chain())?.message).toMatch(/certificate chain too long/);
    const enough = upstreamTls({ host: 'up.test', verify: true, verifyDepth: 1, ca: null, clientCert: null });
    expect(enough.options.checkServerIdentity!('up.test', chain())).toBeUndefined();
    expect(enough.options.checkServerIdentity!('other.test', chain())?.message).toMatch(/other.test/);
  });

  it('sends SNI for host names only, and keys pools by every TLS setting', () => {
    expect(upstreamTls({ host: '10.0.0.1', verify: false, verifyDepth: null, ca: null, clientCert: null }).options.servername).toBeUndefined();
    const a = upstreamTls({ host: 'up.test', verify: true, verifyDepth: null, ca: ['CA1'], clientCert: null });
    const b = upstreamTls({ host: 'up.test', verify: true, verifyDepth: null, ca: ['CA2'], clientCert: null });
    expect(a.options).toMatchObject({ servername: 'up.test', rejectUnauthorized: true, ca: ['CA1'] });
    expect(a.key).not.toBe(b.key);
  });
});
