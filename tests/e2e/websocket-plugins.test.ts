// WebSocket upgrades run the access phase before they are proxied (decision 35, Kong's behaviour): key-auth,
// rate-limiting and ip-restriction answer the handshake as they answer a request, and an accepted handshake reaches
// the upstream with the consumer's headers. Both topologies, the testkit's WebSocket echo upstream.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp } from './support/helpers';
import { createdThrough, startTopology, TOPOLOGIES, type Topology } from './support/topology';

/** Opens a WebSocket: the first message (the echo upstream's report of the handshake), or the refusal's status. */
function handshake(url: string, headers: Record<string, string> = {}): Promise<{ status: number; report: Record<string, unknown> | null }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0, report: null });
      socket.terminate();
    });
    socket.once('message', (data) => {
      resolve({ status: 101, report: JSON.parse(data.toString()) as Record<string, unknown> });
      socket.close();
    });
    socket.once('error', (err) => reject(err));
  });
}

describe.each(TOPOLOGIES)('WebSocket handshakes through the plugins (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  const ws = (path: string) => `${topology.proxyUrl.replace('http', 'ws')}${path}`;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name);
    const admin = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);
    await admin('/services', { name: 'ws', url: upstream.url });
    await admin('/services/ws/routes', { name: 'keyed', paths: ['/keyed'] });
    await admin('/routes/keyed/plugins', { name: 'key-auth' });
    await admin('/consumers', { username: 'ws-user' });
    await admin('/consumers/ws-user/key-auth', { key: 'ws-secret' });
    await admin('/services/ws/routes', { name: 'limited', paths: ['/limited'] });
    await admin('/routes/limited/plugins', { name: 'rate-limiting', config: { minute: 2, policy: 'local' } });
    await admin('/services/ws/routes', { name: 'walled', paths: ['/walled'] });
    await admin('/routes/walled/plugins', { name: 'ip-restriction', config: { deny: ['127.0.0.1'] } });
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
    );
  });

  it('runs key-auth on the handshake: refused without a key, the consumer upstream with one', async () => {
    expect((await handshake(ws('/keyed/chat'))).status).toBe(403);
    expect((await handshake(ws('/keyed/chat'), { apikey: 'wrong' })).status).toBe(401);
    const accepted = await handshake(ws('/keyed/chat'), { apikey: 'ws-secret' });
    expect(accepted.status).toBe(101);
    expect(accepted.report).toMatchObject({ headers: { upgrade: 'websocket', 'x-consumer-username': 'ws-user' } });
  });

  it('counts handshakes in rate-limiting: 429 past the limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await handshake(ws('/limited/chat'))).status);
    expect(statuses).toEqual([101, 101, 429]);
  });

  it('refuses the handshake of a denied address with ip-restriction', async () => {
    expect((await handshake(ws('/walled/chat'))).status).toBe(403);
  });
});
