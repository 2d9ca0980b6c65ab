import { describe, expect, it } from '@jest/globals';
import { createServer } from 'node:net';
import { connect } from 'node:tls';
import type { Route } from '@gatehouse/core';
import { makeExpressionRoute, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { compile } from '../compile/compile';
import { clientHelloServerName, looksLikeTls } from './client-hello';
import { compileStreamRoutes, matchStream, type StreamConnection } from './stream-routes';

const service = makeService({ name: 'svc', url: 'tcp://127.0.0.1:9000' });
const route = (name: string, fields: Record<string, unknown>) => makeRoute({ name, service: { id: service.id }, ...fields });
const routesOf = (routes: Route[]) => compileStreamRoutes(compile(makeSnapshot({ services: [service], routes })));
const conn = (fields: Partial<StreamConnection>): StreamConnection => ({ protocol: 'tcp', srcIp: '10.0.0.1', srcPort: 40000, dstIp: '10.1.0.1', dstPort: 5555, sni: '', ...fields });

describe('stream routes', () => {
  it("ranks as Kong: snis or sources+destinations first, then an exact IP above a port above a CIDR", () => {
    const routes = routesOf([
      route('cidr', { protocols: ['tcp'], sources: [{ ip: '10.0.0.0/8' }] }),
      route('port', { protocols: ['tcp'], sources: [{ port: 40000 }] }),
      route('ip', { protocols: ['tcp'], sources: [{ ip: '10.0.0.1' }] }),
      route('both', { protocols: ['tcp'], sources: [{ ip: '10.0.0.0/8' }], destinations: [{ port: 5555 }] }),
    ]);
    const name = (c: StreamConnection) => matchStream(routes, c)?.route.name;
    expect(name(conn({}))).toBe('both');
    expect(name(conn({ dstPort: 1 }))).toBe('ip');
    expect(name(conn({ dstPort: 1, srcIp: '10.0.0.2' }))).toBe('port');
    expect(name(conn({ dstPort: 1, srcIp: '10.0.0.2', srcPort: 1 }))).toBe('cidr');
    expect(name(conn({ srcIp: '192.168.0.1', dstPort: 1, srcPort: 1 }))).toBeUndefined();
  });

  it('matches the protocol, and snis only on TLS connections', () => {
    const routes = routesOf([
      route('tls', { protocols: ['tls'], snis: ['db.test', '*.wild.test'] }),
      route('pass', { protocols: ['tls_passthrough'], snis: ['pass.test'] }),
      route('udp', { protocols: ['udp'], destinations: [{ port: 53 }] }),
      route('http', { protocols: ['http'], paths: ['/'] }),
    ]);
    const name = (c: StreamConnection) => matchStream(routes, c)?.route.name;
    expect(name(conn({ protocol: 'tls', sni: 'db.test' }))).toBe('tls');
    expect(name(conn({ protocol: 'tls', sni: 'x.wild.test' }))).toBe('tls');
    expect(name(conn({ protocol: 'tls', sni: 'other.test' }))).toBeUndefined();
    expect(name(conn({ protocol: 'tls_passthrough', sni: 'pass.test' }))).toBe('pass');
    expect(name(conn({ protocol: 'udp', dstPort: 53 }))).toBe('udp');
    expect(name(conn({ protocol: 'tcp', dstPort: 53 }))).toBeUndefined();
  });

  it('reads the SNI of a real ClientHello', async () => {
    const hello = await new Promise<Buffer>((resolve) => {
      const server = createServer((socket) => {
        socket.once('data', (chunk: Buffer) => {
          resolve(chunk);
          socket.destroy();
          server.close();
        });
      }).listen(0, '127.0.0.1');
      server.on('listening', () => {
        const address = server.address();
        const port = typeof address === 'object' && address ? address.port : 0;
        connect({ host: '127.0.0.1', port, servername: 'Pass.Example.Test' }).on('error', () => {});
      });
    });
    expect(looksLikeTls(hello)).toBe(true);
    expect(clientHelloServerName(hello)).toBe('pass.example.test');
    expect(looksLikeTls(Buffer.from('GET / HTTP/1.1\r\n'))).toBe(false);
  });
});

describe('stream expression routes (router_flavor = expressions)', () => {
  const expr = (name: string, protocols: string[], expression: string, priority = 0) =>
    makeExpressionRoute({ name, service: { id: service.id }, protocols, expression, priority });

  it('rank before traditional routes, by priority, and read net.* and tls.sni', () => {
    const routes = routesOf([
      route('trad', { protocols: ['tcp', 'tls'], sources: [{ ip: '10.0.0.1' }], destinations: [{ port: 5555 }] }),
      expr('cidr', ['tcp', 'tls'], 'net.src.ip in 10.0.0.0/8 && net.dst.port == 5555', 1),
      expr('sni', ['tcp', 'tls'], 'tls.sni =^ ".db.test" && net.protocol == "tls"', 5),
      expr('udp', ['udp'], 'net.protocol == "udp" && net.dst.port == 53'),
    ]);
    const name = (c: StreamConnection) => matchStream(routes, c)?.route.name;
    expect(name(conn({}))).toBe('cidr');
    expect(name(conn({ protocol: 'tls', sni: 'a.db.test' }))).toBe('sni');
    expect(name(conn({ protocol: 'tls', sni: 'other.test' }))).toBe('cidr');
    expect(name(conn({ srcIp: '192.168.1.1' }))).toBeUndefined();
    expect(name(conn({ srcIp: '10.0.0.1', dstPort: 5555, srcPort: 1 }))).toBe('cidr');
    expect(name(conn({ protocol: 'udp', dstPort: 53 }))).toBe('udp');
  });
});
