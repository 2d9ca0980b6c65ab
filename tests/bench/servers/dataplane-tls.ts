// A Gatehouse data plane with its plain listener and its TLS listener (HTTP/1.1 and HTTP/2), one route, no plugins:
// the same data plane serves the plain and the HTTPS figures. Prints `LISTENING <plain> TLS <tls>`.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compile, ConfigHolder, createDataPlaneServer, selfSignedDefault } from '@gatehouse/data-plane';
import { makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

const service = makeService({ name: 'bench', url: process.env.UPSTREAM_URL! });
const route = makeRoute({ paths: ['/'], service: { id: service.id } });
const holder = new ConfigHolder();
holder.swap(compile(makeSnapshot({ services: [service], routes: [route] })));
const defaultCertificate = await selfSignedDefault(process.env.CERT_DIR ?? mkdtempSync(join(tmpdir(), 'gatehouse-bench-tls-')));
const server = await createDataPlaneServer({
  holder,
  listen: { host: '127.0.0.1', port: 0 },
  tlsListen: { host: '127.0.0.1', port: 0 },
  defaultCertificate,
});
process.stdout.write(`LISTENING ${server.port} TLS ${server.tlsPort}\n`);
