// The acme plugin against Debian's pebble ACME test server, in both topologies: `POST /acme` orders a certificate,
// pebble validates the HTTP-01 challenge on a data plane's proxy port (pebble-challtestsrv resolves every name to
// 127.0.0.1), the certificate is stored as a `certificates` entity with its SNI and served by SNI on every data
// plane; `PATCH /acme` renews certificates within `renew_threshold_days` (pebble's are valid five years: a threshold
// past that renews at once); a handshake for a covered name without a certificate has one ordered (Kong's
// `certificate` phase). Kong's admin messages for bad hosts come from spec/03-plugins/29-acme/05-api_spec.lua.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePorts, rawRequest, spawnProcess, type SpawnedProcess } from '@gatehouse/testkit';
import { CertificateFactory } from '../support/certificates';
import { createdThrough, jsonAdmin, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const HOST = 'secure.acme.test';
/** a covered name nobody orders: the first handshake for it has the control plane order one */
const ON_DEMAND = 'ondemand.acme.test';

/** the certificate a TLS listener presents for `servername` */
function presented(tlsUrl: string, servername: string): Promise<PeerCertificate> {
  const { hostname, port } = new URL(tlsUrl);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: hostname, port: Number(port), servername, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.on('error', reject);
  });
}

async function eventually<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await probe();
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
}

describe.each(TOPOLOGIES)('acme against pebble (%s)', (name) => {
  let topology: Topology;
  let pebble: SpawnedProcess;
  let dns: SpawnedProcess;
  /** pebble's listener certificate and CA, for its process and the control plane's trust */
  let dir: string | undefined;
  const admin = (method: string, path: string, body?: unknown) => jsonAdmin(topology.adminUrl, method, path, body);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-pebble-'));
    const certs = new CertificateFactory();
    const ca = certs.ca('Pebble listener CA');
    const listener = certs.signed(ca, ['localhost']);
    writeFileSync(join(dir, 'ca.pem'), ca.cert);
    writeFileSync(join(dir, 'listener.pem'), listener.cert);
    writeFileSync(join(dir, 'listener.key'), listener.key);
    certs.cleanup();
    // the control plane talks to pebble over HTTPS: it trusts pebble's listener through Node's extra CA file
    topology = await startTopology(name, { env: { NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') } });
    const [acmePort, managementPort, dnsPort, dnsManagementPort, unusedTlsPort] = await freePorts(5);
    dns = await spawnProcess('pebble-challtestsrv', ['-dns01', `127.0.0.1:${dnsPort}`, '-http01', '', '-https01', '', '-tlsalpn01', '', '-management', `127.0.0.1:${dnsManagementPort}`, '-defaultIPv4', '127.0.0.1', '-defaultIPv6', ''], {
      readyPattern: /Starting management server/,
      name: 'pebble-challtestsrv',
    });
    const config = {
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: join(dir, 'listener.pem'),
        privateKey: join(dir, 'listener.key'),
        // pebble validates HTTP-01 on the first data plane's proxy port
        httpPort: Number(new URL(topology.proxyUrl).port),
        tlsPort: unusedTlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
      },
    };
    writeFileSync(join(dir, 'pebble.json'), JSON.stringify(config));
    pebble = await spawnProcess('pebble', ['-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${dnsPort}`], {
      env: { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
      readyPattern: /Listening on/,
      name: 'pebble',
    });
    // Kong's dummy route and service, so challenge requests match a route
    await createdThrough(topology.adminUrl, '/services', { name: 'acme-dummy', url: 'http://127.0.0.1:65535' });
    await createdThrough(topology.adminUrl, '/services/acme-dummy/routes', { name: 'acme-dummy', paths: ['/.well-known/acme-challenge'] });
    await createdThrough(topology.adminUrl, '/plugins', {
      name: 'acme',
      config: { account_email: 'ops@acme.test', api_uri: `https://localhost:${acmePort}/dir`, domains: [HOST, ON_DEMAND], tos_accepted: true, cert_type: 'ecc', renew_threshold_days: 3650 },
    });
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    await pebble?.stop();
    await dns?.stop();
    await topology?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('the challenge path answers Kong\'s 404 for unknown tokens and passes for other hosts', async () => {
    const port = Number(new URL(topology.proxyUrl).port);
    const ask = (host: string) => rawRequest(port, { head: `GET /.well-known/acme-challenge/nothing-here HTTP/1.1\r\nhost: ${host}\r\nconnection: close` });
    const unknown = await ask(HOST);
    expect([unknown.status, unknown.body]).toEqual([404, 'Not found\n']);
    expect((await ask('other.test')).status).toBe(502);
  });

  it('POST /acme checks the host: missing, with a port, or not in config.domains', async () => {
    expect(await admin('POST', '/acme', {})).toEqual({ status: 400, body: { message: 'host must be provided and containing a single domain' } });
    expect(await admin('POST', '/acme', { host: `${HOST}:443` })).toEqual({ status: 400, body: { message: 'port is not allowed in host' } });
    expect(await admin('POST', '/acme', { host: 'elsewhere.test', test_http_challenge_flow: true })).toEqual({
      status: 400,
      body: { message: 'problem found running sanity check for elsewhere.test: host is not included in plugin config.domains' },
    });
    expect(await admin('POST', '/acme', { host: HOST, test_http_challenge_flow: true })).toEqual({ status: 200, body: { message: `sanity test for host ${HOST} passed` } });
  });

  it('POST /acme orders a certificate through the HTTP-01 challenge; every data plane serves it by SNI', async () => {
    const res = await admin('POST', '/acme', { host: HOST });
    expect(res).toEqual({ status: 201, body: { message: `certificate for host ${HOST} is created` } });
    const sni = await admin('GET', `/snis/${HOST}`);
    expect(sni.status).toBe(200);
    const certificate = await admin('GET', `/certificates/${sni.body.certificate.id}`);
    expect(certificate.body.tags).toEqual(['acme']);
    await topology.converge();
    for (const dp of topology.dataPlanes) {
      const served = await eventually('the data plane to serve the ordered certificate', () => presented(dp.proxyTlsUrl, HOST), (c) => /Pebble/.test(String(c.issuer?.CN)));
      expect(served.subjectaltname).toBe(`DNS:${HOST}`);
    }
  });

  it('a handshake for a covered name without a certificate gets the default one, and the control plane orders one', async () => {
    const first = await presented(topology.dataPlanes[0]!.proxyTlsUrl, ON_DEMAND);
    expect(first.issuer?.CN).not.toMatch(/Pebble/);
    for (const dp of topology.dataPlanes) {
      const served = await eventually('the certificate ordered on demand', () => presented(dp.proxyTlsUrl, ON_DEMAND), (c) => /Pebble/.test(String(c.issuer?.CN)), 60_000);
      expect(served.subjectaltname).toBe(`DNS:${ON_DEMAND}`);
    }
    const sni = await admin('GET', `/snis/${ON_DEMAND}`);
    expect(sni.status).toBe(200);
    expect((await admin('GET', `/certificates/${sni.body.certificate.id}`)).body.tags).toEqual(['acme']);
    // one certificate for the name, however many handshakes and data planes asked
    const all = await admin('GET', '/snis');
    expect(all.body.data.filter((s: { name: string }) => s.name === ON_DEMAND)).toHaveLength(1);
  });

  it('PATCH /acme renews a certificate within renew_threshold_days, and every data plane serves the new one', async () => {
    const before = await presented(topology.dataPlanes[0]!.proxyTlsUrl, HOST);
    const res = await admin('PATCH', '/acme');
    expect(res).toEqual({ status: 202, body: { message: 'Renewal process started successfully' } });
    for (const dp of topology.dataPlanes) {
      await eventually('the renewed certificate', () => presented(dp.proxyTlsUrl, HOST), (c) => /Pebble/.test(String(c.issuer?.CN)) && c.serialNumber !== before.serialNumber, 30_000);
    }
  });
});
