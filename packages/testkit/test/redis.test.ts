import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { deleteRedisPrefix, freePort, requirePostgres, requireRedis, SHARED_REDIS_URL, startRedisServer, uniqueRedisPrefix } from '../src';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('throwaway redis-server', () => {
  it('starts on a free port, stops by PID, and restarts empty on the same port', async () => {
    const server = await startRedisServer();
    try {
      const firstPid = server.pid;
      expect(isAlive(firstPid)).toBe(true);
      const client = new Redis(server.url, { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
      client.on('error', () => {});
      await client.set('k', 'v');

      await server.stop();
      expect(server.isRunning()).toBe(false);
      expect(isAlive(firstPid)).toBe(false);
      await expect(requireRedis(server.url)).rejects.toThrow(/unreachable/);

      await server.restart();
      expect(server.pid).not.toBe(firstPid);
      await requireRedis(server.url);
      expect(await client.get('k')).toBeNull();
      client.disconnect();
    } finally {
      await server.stop();
    }
  }, 20000);
});

describe('service checks', () => {
  it('requireRedis passes for the shared Redis and names the URL (without password) when unreachable', async () => {
    await requireRedis(SHARED_REDIS_URL);
    const port = await freePort();
    await expect(requireRedis(`redis://user:hunter2@127.0.0.1:${port}`)).rejects.toThrow(`redis://user:***@127.0.0.1:${port}`);
  });

  it('requirePostgres passes for the shared Postgres and fails for a closed port', async () => {
    await requirePostgres();
    const port = await freePort();
    await expect(requirePostgres(`postgres://postgres@127.0.0.1:${port}/postgres`)).rejects.toThrow(/Postgres is required/);
  });

  it('deleteRedisPrefix removes only the keys under the prefix', async () => {
    const prefix = uniqueRedisPrefix('testkit');
    const other = uniqueRedisPrefix('testkit-other');
    const client = new Redis(SHARED_REDIS_URL);
    await client.set(`${prefix}a`, '1');
    await client.set(`${prefix}b`, '2');
    await client.set(`${other}a`, '3');
    expect(await deleteRedisPrefix(SHARED_REDIS_URL, prefix)).toBe(2);
    expect(await client.exists(`${prefix}a`, `${prefix}b`)).toBe(0);
    expect(await client.get(`${other}a`)).toBe('3');
    await client.del(`${other}a`);
    client.disconnect();
  });
});
