import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTrustedCaBundle } from '../trusted-cas';
import { TracingHttpSender } from './http-sender';

const ROOT = fileURLToPath(new URL('../../../../..', import.meta.url));
const SENDER = fileURLToPath(new URL('./http-sender.ts', import.meta.url));
const TIMEOUTS = { connect_timeout: 5000, send_timeout: 5000, read_timeout: 5000 };

// An HTTPS receiver with a self-signed certificate for localhost and 127.0.0.1: the exporters verify the receiver's
// certificate against the trusted CAs (the system's, and NODE_EXTRA_CA_CERTS), as undici's client did before them.
describe('TracingHttpSender over TLS', () => {
  let dir: string;
  let certFile: string;
  let server: Server;
  const bodies: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-sender-tls-'));
    certFile = join(dir, 'cert.pem');
    const keyFile = join(dir, 'key.pem');
    const config = join(dir, 'san.cnf');
    writeFileSync(config, '[req]\ndistinguished_name=dn\n[dn]\n[san]\nsubjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=critical,CA:TRUE\n');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-subj', '/CN=localhost', '-days', '2', '-config', config, '-extensions', 'san'], { stdio: 'ignore' });
    server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(`${req.headers.host} ${Buffer.concat(chunks).toString()}`);
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const port = () => (server.address() as AddressInfo).port;

  it('refuses a receiver whose certificate no trusted CA signed, by name and by address', async () => {
    for (const host of ['localhost', '127.0.0.1']) {
      const sender = new TracingHttpSender(`https://${host}:${port()}/v1`, TIMEOUTS, {}, (s) => s === 200);
      await expect(sender.send('refused')).rejects.toThrow('self-signed certificate');
      await sender.close();
    }
    expect(bodies).toEqual([]);
  });

  it('posts to a receiver whose certificate a trusted CA signed, by name (SNI) and by address (none)', async () => {
    const script = `
      const { TracingHttpSender } = await import(${JSON.stringify(SENDER)});
      for (const host of ['localhost', '127.0.0.1']) {
        const sender = new TracingHttpSender('https://' + host + ':${port()}/v1', ${JSON.stringify(TIMEOUTS)}, {}, (s) => s === 200);
        await sender.send('spans for ' + host);
        await sender.close();
      }
      process.stdout.write('sent');`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { ...process.env, NODE_EXTRA_CA_CERTS: certFile },
    });
    expect(stdout).toBe('sent');
    expect(bodies).toEqual([`localhost:${port()} spans for localhost`, `127.0.0.1:${port()} spans for 127.0.0.1`]);
  });

  it("posts to a receiver whose CA the process trusts (GATEHOUSE_UPSTREAM_CA_BUNDLE, Kong's lua_ssl_trusted_certificate), and refuses it once the setting is the system's again", async () => {
    setTrustedCaBundle([readFileSync(certFile, 'utf8')]);
    try {
      const sender = new TracingHttpSender(`https://localhost:${port()}/v1`, TIMEOUTS, {}, (s) => s === 200);
      await sender.send('trusted by the setting');
      await sender.close();
    } finally {
      setTrustedCaBundle(null);
    }
    expect(bodies.at(-1)).toBe(`localhost:${port()} trusted by the setting`);
    const again = new TracingHttpSender(`https://localhost:${port()}/v1`, TIMEOUTS, {}, (s) => s === 200);
    await expect(again.send('refused again')).rejects.toThrow('self-signed certificate');
    await again.close();
  });
});
