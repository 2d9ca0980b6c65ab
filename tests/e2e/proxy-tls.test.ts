// TLS on the data plane (decision 22), through real processes in both topologies: the HTTPS listener with
// certificates chosen by SNI (exact, *.suffix, prefix.*, default), hot replacement, HTTP/2, protocol redirects,
// upstream verification and mTLS, vault references resolved from the data plane's environment.
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer, request as httpsRequest, Agent as HttpsAgent, type Server as HttpsServer } from 'node:https';
import { connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { startEchoUpstream, startRedisServer, type EchoUpstream, type RedisServerHandle } from '@gatehouse/testkit';
import { CertificateFactory, type Pem } from '../support/certificates';
import { cleanUp, waitUntil } from './support/helpers';
import { proxied, startTopology, TOPOLOGIES, type DataPlaneHandle, type Topology } from './support/topology';

const certs = new CertificateFactory();
const REDIS_PASSWORD = 'tls-e2e-redis-password-0123456789';
let ca: Pem;
let otherCa: Pem;
let exact: Pem;
let exactNext: Pem;
let wildcard: Pem;
let prefix: Pem;
let vaulted: Pem;
let upstreamServer: Pem;
let clientCa: Pem;
let client: Pem;

beforeAll(() => {
  ca = certs.ca('Gatehouse E2E CA');
  otherCa = certs.ca('Unrelated CA');
  exact = certs.signed(ca, ['a.tls.test']);
  exactNext = certs.signed(ca, ['a.tls.test']);
  wildcard = certs.signed(ca, ['*.wild.test']);
  prefix = certs.signed(ca, ['prefix.test']);
  vaulted = certs.signed(ca, ['vault.tls.test']);
  upstreamServer = certs.signed(ca, ['127.0.0.1'], 'server');
  clientCa = certs.ca('Client CA');
  client = certs.signed(clientCa, ['gatehouse-client'], 'client');
});
afterAll(() => certs.cleanup());

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

/** the fingerprint of the certificate a TLS listener presents for `servername` (none: no SNI sent) */
function presented(dp: DataPlaneHandle, servername?: string): Promise<string> {
  const port = Number(new URL(dp.proxyTlsUrl).port);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve(cert.fingerprint256);
    });
    socket.on('error', reject);
  });
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  reused: boolean;
}

/** an HTTPS/1.1 request to a data plane with the given SNI and Host (a POST when `form` is given) */
function httpsGet(dp: DataPlaneHandle, path: string, host: string, agent?: HttpsAgent, form?: Record<string, string>): Promise<Answer> {
  const body = form ? new URLSearchParams(form).toString() : null;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${dp.proxyTlsUrl}${path}`,
      {
        method: body === null ? 'GET' : 'POST',
        servername: host,
        headers: body === null ? { host } : { host, 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) },
        rejectUnauthorized: false,
        agent: agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: any = text;
          try {
            body = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, reused: req.reusedSocket });
        });
      },
    );
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

/** an HTTPS upstream answering with what it received (and the client certificate's CN, when one was presented) */
async function startHttpsUpstream(pem: Pem, requireClientCa?: Pem): Promise<{ server: HttpsServer; port: number }> {
  const server = createHttpsServer(
    { cert: pem.cert, key: pem.key, ...(requireClientCa ? { requestCert: true, rejectUnauthorized: true, ca: [requireClientCa.cert] } : {}) },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url, headers: req.headers, client_cn: peer?.subject?.CN ?? null }));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe.each(TOPOLOGIES)('TLS on the proxy (%s)', (name) => {
  let topology: Topology;
  let echo: EchoUpstream;
  let verified: { server: HttpsServer; port: number };
  let mutual: { server: HttpsServer; port: number };
  let admin: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
  let exactCertId: string;
  let redis: RedisServerHandle;
  let limitedPluginId: string;

  beforeAll(async () => {
    echo = await startEchoUpstream();
    redis = await startRedisServer({ extraArgs: ['--requirepass', REDIS_PASSWORD] });
    verified = await startHttpsUpstream(upstreamServer);
    mutual = await startHttpsUpstream(upstreamServer, clientCa);
    topology = await startTopology(name, {
      // the vaulted certificate exists only in the data planes' environment
      dataPlaneEnv: { GH_E2E_VAULT_CERT: vaulted.cert, GHV_E2E_KEY: vaulted.key, GH_E2E_REDIS_PASS: REDIS_PASSWORD },
    });
    admin = async (method, path, body) => {
      const res = await fetch(`${topology.adminUrl}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 500) throw new Error(`${method} ${path} → ${res.status} ${text}`);
      return { status: res.status, body: text ? JSON.parse(text) : null };
    };
    const ok = async (method: string, path: string, body: unknown) => {
      const res = await admin(method, path, body);
      if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    exactCertId = (await ok('POST', '/certificates', { cert: exact.cert, key: exact.key, snis: ['a.tls.test'] })).id;
    await ok('POST', '/certificates', { cert: wildcard.cert, key: wildcard.key, snis: ['*.wild.test'] });
    await ok('POST', '/certificates', { cert: prefix.cert, key: prefix.key, snis: ['prefix.*'] });
    await ok('POST', '/vaults', { name: 'env', prefix: 'gh-vault', config: { prefix: 'GHV_' } });
    await ok('POST', '/certificates', { cert: '{vault://env/gh-e2e-vault-cert}', key: '{vault://gh-vault/e2e-key}', snis: ['vault.tls.test'] });
    const caId = (await ok('POST', '/ca_certificates', { cert: ca.cert })).id;
    const otherCaId = (await ok('POST', '/ca_certificates', { cert: otherCa.cert })).id;
    const clientCertId = (await ok('POST', '/certificates', { cert: client.cert, key: client.key })).id;

    const svc = await ok('POST', '/services', { name: 'echo', url: echo.url });
    await ok('POST', `/services/${svc.id}/routes`, { name: 'any', hosts: ['a.tls.test', 'x.wild.test', 'h2.tls.test'] });
    await ok('POST', `/services/${svc.id}/routes`, { name: 'secure-426', paths: ['/secure'], protocols: ['https'] });
    await ok('POST', `/services/${svc.id}/routes`, { name: 'secure-301', paths: ['/moved'], protocols: ['https'], https_redirect_status_code: 301 });

    const upstreamUrl = (port: number) => `https://127.0.0.1:${port}`;
    const trusted = await ok('POST', '/services', { name: 'verify-ok', url: upstreamUrl(verified.port), tls_verify: true, ca_certificates: [caId] });
    await ok('POST', `/services/${trusted.id}/routes`, { paths: ['/verify-ok'] });
    const wrongCa = await ok('POST', '/services', { name: 'verify-wrong-ca', url: upstreamUrl(verified.port), tls_verify: true, ca_certificates: [otherCaId] });
    await ok('POST', `/services/${wrongCa.id}/routes`, { paths: ['/verify-wrong-ca'] });
    const unverified = await ok('POST', '/services', { name: 'no-verify', url: upstreamUrl(verified.port) });
    await ok('POST', `/services/${unverified.id}/routes`, { paths: ['/no-verify'] });
    const mtls = await ok('POST', '/services', { name: 'mtls', url: upstreamUrl(mutual.port), client_certificate: { id: clientCertId } });
    await ok('POST', `/services/${mtls.id}/routes`, { paths: ['/mtls'] });
    const noClient = await ok('POST', '/services', { name: 'mtls-missing', url: upstreamUrl(mutual.port) });
    await ok('POST', `/services/${noClient.id}/routes`, { paths: ['/mtls-missing'] });
    const owner = await ok('POST', '/consumers', { username: 'oauth-owner' });
    await ok('POST', `/consumers/${owner.id}/oauth2`, { name: 'TLS App', client_id: 'tls-client', client_secret: 'tls-secret', redirect_uris: ['https://app.example/cb'] });
    const oauthService = await ok('POST', '/services', { name: 'oauth', url: echo.url });
    await ok('POST', `/services/${oauthService.id}/routes`, { paths: ['/oauth'] });
    await ok('POST', `/services/${oauthService.id}/plugins`, { name: 'oauth2', config: { enable_client_credentials: true } });
    const limited = await ok('POST', '/services', { name: 'limited', url: echo.url });
    await ok('POST', `/services/${limited.id}/routes`, { paths: ['/limited'] });
    limitedPluginId = (
      await ok('POST', `/services/${limited.id}/plugins`, {
        name: 'rate-limiting',
        config: { hour: 2, policy: 'redis', fault_tolerant: false, redis: { host: '127.0.0.1', port: redis.port, password: '{vault://env/gh-e2e-redis-pass}' } },
      })
    ).id;
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => echo?.close(),
      () => redis?.stop(),
      () => new Promise<void>((r) => verified?.server.close(() => r())),
      () => new Promise<void>((r) => mutual?.server.close(() => r())),
    );
  });

  it('serves the certificate by SNI on every data plane: exact name, *.suffix, prefix.*, else the default one', async () => {
    for (const dp of topology.dataPlanes) {
      const defaultPem = readFileSync(join(dp.dataDir, 'proxy-default-tls.pem'), 'utf8');
      const defaultFingerprint = fingerprint(defaultPem.slice(defaultPem.indexOf('-----BEGIN CERTIFICATE-----')));
      expect(await presented(dp, 'a.tls.test')).toBe(fingerprint(exact.cert));
      expect(await presented(dp, 'x.wild.test')).toBe(fingerprint(wildcard.cert));
      expect(await presented(dp, 'prefix.test')).toBe(fingerprint(prefix.cert));
      expect(await presented(dp, 'nobody.test')).toBe(defaultFingerprint);
      expect(await presented(dp, undefined)).toBe(defaultFingerprint);
      // `*.wild.test` covers one label only, as Kong's lookup does
      expect(await presented(dp, 'deep.x.wild.test')).toBe(defaultFingerprint);
    }
  });

  it('GET / lists the TLS proxy listener as Kong does (ssl, http2) with start; a control plane lists no proxy listener', async () => {
    const { configuration } = (await admin('GET', '/')).body;
    if (name === 'embedded') {
      const plainPort = Number(new URL(topology.dataPlanes[0]!.proxyUrl).port);
      const tlsPort = Number(new URL(topology.dataPlanes[0]!.proxyTlsUrl).port);
      expect(configuration.proxy_listen).toEqual([`127.0.0.1:${plainPort}`, `127.0.0.1:${tlsPort} http2 ssl`]);
      expect(configuration.proxy_listeners).toEqual([
        { ip: '127.0.0.1', port: plainPort, ssl: false, http2: false, proxy_protocol: false, deferred: false, bind: false, reuseport: false, backlog: null, listener: `127.0.0.1:${plainPort}` },
        { ip: '127.0.0.1', port: tlsPort, ssl: true, http2: true, proxy_protocol: false, deferred: false, bind: false, reuseport: false, backlog: null, listener: `127.0.0.1:${tlsPort} http2 ssl` },
      ]);
    } else {
      expect(configuration.role).toBe('control_plane');
      expect(configuration.proxy_listen).toEqual([]);
      expect(configuration.proxy_listeners).toEqual([]);
    }
  });

  it('proxies HTTPS/1.1 with the same routing and X-Forwarded-Proto: https', async () => {
    for (const dp of topology.dataPlanes) {
      const res = await httpsGet(dp, '/hello?x=1', 'a.tls.test');
      expect(res.status).toBe(200);
      expect(res.body.url).toBe('/hello?x=1');
      expect(res.body.headers['x-forwarded-proto']).toBe('https');
      expect(res.body.headers['x-forwarded-host']).toBe('a.tls.test');
    }
  });

  it('speaks HTTP/2 when the client negotiates h2 by ALPN', async () => {
    for (const dp of topology.dataPlanes) {
      const session = http2Connect(dp.proxyTlsUrl, { servername: 'h2.tls.test', rejectUnauthorized: false });
      try {
        const { status, body } = await new Promise<{ status: number; body: any }>((resolve, reject) => {
          const stream = session.request({ ':path': '/over-h2', ':authority': 'h2.tls.test', ':method': 'GET' });
          let status = 0;
          const chunks: Buffer[] = [];
          stream.on('response', (headers) => (status = Number(headers[':status'])));
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => resolve({ status, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
          stream.on('error', reject);
          stream.end();
        });
        expect(session.alpnProtocol).toBe('h2');
        expect(status).toBe(200);
        expect(body.url).toBe('/over-h2');
        expect(body.headers['x-forwarded-proto']).toBe('https');
        expect(body.headers.host).toBe(new URL(echo.url).host);
        expect(Object.keys(body.headers).some((h: string) => h.startsWith(':'))).toBe(false);
      } finally {
        session.close();
      }
    }
  });

  it('carries WebSocket upgrades over the TLS listener (wss) to the same route', async () => {
    const dp = topology.dataPlanes[0]!;
    const socket = new WebSocket(`${dp.proxyTlsUrl.replace('https', 'wss')}/over-wss`, { headers: { host: 'a.tls.test' }, rejectUnauthorized: false });
    try {
      const first = new Promise<string>((resolve, reject) => {
        socket.once('message', (data) => resolve(data.toString()));
        socket.once('error', reject);
      });
      const handshake = JSON.parse(await first);
      expect(handshake.path).toBe('/over-wss');
      expect(handshake.headers['x-forwarded-proto']).toBe('https');
      const echoed = new Promise<string>((resolve) => socket.once('message', (data) => resolve(data.toString())));
      socket.send('over tls');
      expect(await echoed).toBe('over tls');
    } finally {
      socket.close();
    }
  });

  it('answers plain HTTP on https-only routes with 426, or a redirect to the TLS port', async () => {
    const dp = topology.dataPlanes[0]!;
    const refused = await proxied(`${dp.proxyUrl}/secure/x`);
    expect(refused.status).toBe(426);
    expect(refused.body).toEqual({ message: 'Please use HTTPS protocol' });
    const moved = await fetch(`${dp.proxyUrl}/moved/x?y=2`, { redirect: 'manual' });
    expect(moved.status).toBe(301);
    expect(moved.headers.get('location')).toBe(`https://127.0.0.1:${new URL(dp.proxyTlsUrl).port}/moved/x?y=2`);
    const overTls = await httpsGet(dp, '/secure/x', 'a.tls.test');
    expect(overTls.status).toBe(200);
  });

  it('oauth2 issues tokens over the TLS listener with no trusted proxy, and refuses them over plain HTTP', async () => {
    const form = { grant_type: 'client_credentials', client_id: 'tls-client', client_secret: 'tls-secret' };
    for (const dp of topology.dataPlanes) {
      const issued = await httpsGet(dp, '/oauth/oauth2/token', 'oauth.tls.test', undefined, form);
      expect(issued.status).toBe(200);
      expect(issued.body).toEqual({ token_type: 'bearer', access_token: expect.stringMatching(/^[A-Za-z0-9]{32}$/), expires_in: 7200 });
      const plain = await proxied(`${dp.proxyUrl}/oauth/oauth2/token`, { method: 'POST', body: new URLSearchParams(form) });
      expect(plain.status).toBe(400);
      expect(plain.body).toEqual({ error: 'access_denied', error_description: 'You must use HTTPS' });
    }
  });

  it('verifies upstream certificates when tls_verify is set, against the service\'s ca_certificates', async () => {
    for (const dp of topology.dataPlanes) {
      const ok = await proxied(`${dp.proxyUrl}/verify-ok/a`);
      expect(ok.status).toBe(200);
      expect(ok.body.url).toBe('/a');
      const wrong = await proxied(`${dp.proxyUrl}/verify-wrong-ca/a`);
      expect(wrong.status).toBe(502);
      expect(wrong.body).toEqual({ message: 'An invalid response was received from the upstream server' });
      expect((await proxied(`${dp.proxyUrl}/no-verify/a`)).status).toBe(200);
    }
  });

  it('presents the service\'s client_certificate to an upstream that demands one (mTLS)', async () => {
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/mtls/b`);
      expect(res.status).toBe(200);
      expect(res.body.client_cn).toBe('gatehouse-client');
      expect((await proxied(`${dp.proxyUrl}/mtls-missing/b`)).status).toBe(502);
    }
  });

  it('resolves vault references in certificates from the data plane\'s environment; the database keeps the reference', async () => {
    for (const dp of topology.dataPlanes) expect(await presented(dp, 'vault.tls.test')).toBe(fingerprint(vaulted.cert));
    const listed = await admin('GET', '/certificates?size=100');
    const stored = listed.body.data.find((c: { snis: string[] }) => c.snis.includes('vault.tls.test'));
    expect(stored).toMatchObject({ cert: '{vault://env/gh-e2e-vault-cert}', key: '{vault://gh-vault/e2e-key}' });
  });

  it('resolves a vault reference in a plugin secret (rate-limiting redis.password) from the data plane\'s environment', async () => {
    // without the right password every request would fail (fault_tolerant is off): two pass, the third is limited
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await proxied(`${topology.dataPlanes[i % topology.dataPlanes.length]!.proxyUrl}/limited/x`)).status);
    expect(statuses).toEqual([200, 200, 429]);
    const stored = await admin('GET', `/plugins/${limitedPluginId}`);
    expect(stored.body.config.redis.password).toBe('{vault://env/gh-e2e-redis-pass}');
  });

  it('replaces a certificate without a restart: new handshakes get the new one, open connections keep working', async () => {
    const agents = topology.dataPlanes.map(() => new HttpsAgent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false, servername: 'a.tls.test' }));
    try {
      for (const [i, dp] of topology.dataPlanes.entries()) expect((await httpsGet(dp, '/before', 'a.tls.test', agents[i])).status).toBe(200);
      const patched = await admin('PATCH', `/certificates/${exactCertId}`, { cert: exactNext.cert, key: exactNext.key });
      expect(patched.status).toBe(200);
      await topology.converge();
      for (const [i, dp] of topology.dataPlanes.entries()) {
        await waitUntil('the new certificate is served', async () => (await presented(dp, 'a.tls.test')) === fingerprint(exactNext.cert));
        const again = await httpsGet(dp, '/after', 'a.tls.test', agents[i]);
        expect(again.status).toBe(200);
        expect(again.reused).toBe(true);
      }
    } finally {
      for (const agent of agents) agent.destroy();
    }
  });
});
