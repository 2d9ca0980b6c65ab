// Shared pieces of the data plane's integration tests: a data plane over a snapshot, and a plain HTTP client.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { Snapshot } from '@gatehouse/core';
import { compile, ConfigHolder, createDataPlaneServer, type DataPlaneServer, type ForwarderKind } from '../src';

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: any;
}

export interface SendOptions {
  method?: string;
  /** header values; arrays send the header once per value */
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

/** One request over Node's client, so tests choose every header byte (repeated headers, spoofed identity headers). */
export function send(port: number, path: string, options: SendOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface RunningDataPlane {
  dp: DataPlaneServer;
  holder: ConfigHolder;
  port: number;
  send(path: string, options?: SendOptions): Promise<Reply>;
  load(snapshot: Snapshot): void;
  close(): Promise<void>;
}

export const quietLog = { error: () => undefined, warn: () => undefined };

export async function startDataPlane(snapshot: Snapshot | null, forwarder?: ForwarderKind): Promise<RunningDataPlane> {
  const holder = new ConfigHolder(snapshot ? compile(snapshot) : undefined);
  const dp = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: 0 }, forwarder, log: quietLog });
  return {
    dp,
    holder,
    port: dp.port,
    send: (path, options) => send(dp.port, path, options),
    load: (next) => void holder.swap(compile(next)),
    close: () => dp.close(),
  };
}

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
