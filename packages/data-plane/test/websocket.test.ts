import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { startDataPlane, type RunningDataPlane } from './harness';

/** Opens a WebSocket; resolves with the first message (the upstream's description of the upgrade request). */
function open(url: string, headers: Record<string, string> = {}): Promise<{ ws: WebSocket; first: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('message', (data) => resolve({ ws, first: JSON.parse(data.toString()) }));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => reject(Object.assign(new Error(`status ${res.statusCode}`), { status: res.statusCode, body: Buffer.concat(chunks).toString() })));
    });
    ws.once('error', reject);
  });
}

function nextMessage(ws: WebSocket): Promise<string> {
  return new Promise((resolve) => ws.once('message', (data) => resolve(data.toString())));
}

describe('WebSocket upgrades through the proxy', () => {
  let echo: EchoUpstream;
  let gw: RunningDataPlane;
  const alice = makeConsumer({ username: 'alice' });

  beforeAll(async () => {
    echo = await startEchoUpstream();
    const service = makeService({ name: 'ws', url: `${echo.url}/socket` });
    const open = makeRoute({ name: 'open', paths: ['/ws'], service: { id: service.id } });
    const secured = makeRoute({ name: 'secured', paths: ['/secure-ws'], service: { id: service.id } });
    gw = await startDataPlane(
      makeSnapshot({
        services: [service],
        routes: [open, secured],
        consumers: [alice],
        plugins: [makePlugin({ name: 'key-auth', route: { id: secured.id }, config: {} })],
        credentials: { keyauth_credentials: [makeCredential(alice, { key: 'ws-key' })] },
      }),
    );
  });

  afterAll(async () => {
    await gw.close();
    await echo.close();
  });

  it('carries the upgrade to the upstream path and echoes frames both ways', async () => {
    const { ws, first } = await open(`ws://127.0.0.1:${gw.port}/ws/chat?room=1`, { 'x-consumer-id': 'spoofed' });
    expect(first.path).toBe('/socket/chat');
    expect(first.query).toEqual({ room: '1' });
    expect(first.headers.upgrade).toBe('websocket');
    expect(first.headers['x-consumer-id']).toBeUndefined();
    expect(first.headers['x-forwarded-prefix']).toBe('/ws');
    ws.send('hello');
    expect(await nextMessage(ws)).toBe('hello');
    ws.close();
  });

  it('runs the plugins first: identity headers on success, the refusal on failure', async () => {
    const { ws, first } = await open(`ws://127.0.0.1:${gw.port}/secure-ws?apikey=ws-key`);
    expect(first.headers['x-consumer-id']).toBe(alice.id);
    expect(first.headers['x-consumer-username']).toBe('alice');
    ws.close();
    await expect(open(`ws://127.0.0.1:${gw.port}/secure-ws`)).rejects.toMatchObject({ status: 403, body: '{"message":"No API key found in headers or querystring"}' });
  });

  it('answers 404 on an upgrade that matches no route', async () => {
    await expect(open(`ws://127.0.0.1:${gw.port}/none`)).rejects.toMatchObject({ status: 404 });
  });
});
