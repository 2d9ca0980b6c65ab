import { Redis } from 'ioredis';
import pg from 'pg';

/**
 * Integration tests call these first: an unreachable service is a failure with a clear message, never a skip
 * (with CI=true a missing Postgres or Redis must fail the run).
 */
export async function requireRedis(url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 3000 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    const answer = await redis.ping();
    if (answer !== 'PONG') throw new Error(`unexpected PING answer ${answer}`);
  } catch (error) {
    throw new Error(`Redis is required at ${redactUrl(url)} but is unreachable: ${(error as Error).message}`);
  } finally {
    redis.disconnect();
  }
}

export async function requirePostgres(url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new Error(`Postgres is required at ${redactUrl(url)} but is unreachable: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => {});
  }
}

function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
