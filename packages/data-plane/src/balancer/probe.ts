import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { Address } from './balancer';
import { classifyStatus, type Observation } from './health';
import type { UpstreamSpec } from './spec';

/** Runs one active check against an address; resolves with what it observed (null: a status in neither list). */
export type Prober = (address: Address, spec: UpstreamSpec) => Promise<Observation | null>;

/** Kong's active check: a fresh connection, `GET http_path` with the configured headers, judged by its status lists. */
export const httpProbe: Prober = (address, spec) => {
  const active = spec.healthchecks.active;
  const timeoutMs = Math.max(1, active.timeout * 1000);
  if (active.type === 'tcp') return tcpProbe(address, timeoutMs);
  const secure = active.type === 'https' || active.type === 'grpcs';
  const target = address.target.spec;
  const headers: Record<string, string | string[]> = {};
  for (const [name, values] of Object.entries(active.headers ?? {})) headers[name] = values;
  const defaultPort = secure ? 443 : 80;
  headers.host ??= target.port === defaultPort ? target.host : `${target.kind === 'ipv6' ? `[${target.host}]` : target.host}:${target.port}`;
  headers['user-agent'] ??= 'gatehouse-healthcheck';
  return new Promise((resolve) => {
    let settled = false;
    const done = (o: Observation | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const options = {
      host: address.ip,
      port: address.port,
      method: 'GET',
      path: active.http_path,
      headers,
      agent: false as const,
      ...(secure ? { rejectUnauthorized: active.https_verify_certificate, servername: active.https_sni ?? (target.kind === 'name' ? target.host : undefined) } : {}),
    };
    const req = (secure ? httpsRequest : httpRequest)(options, (res) => {
      res.resume();
      done(classifyStatus(res.statusCode ?? 0, active.healthy.http_statuses, active.unhealthy.http_statuses));
      res.on('error', () => {});
    });
    const timer = setTimeout(() => {
      done('timeout');
      req.destroy();
    }, timeoutMs);
    req.on('error', () => done('tcp_failure'));
    req.end();
  });
};

function tcpProbe(address: Address, timeoutMs: number): Promise<Observation> {
  return new Promise((resolve) => {
    const socket = connect({ host: address.ip, port: address.port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('timeout');
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve('success');
    });
    socket.once('error', () => {
      clearTimeout(timer);
      resolve('tcp_failure');
    });
  });
}
