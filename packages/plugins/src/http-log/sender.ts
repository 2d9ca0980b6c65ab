import { Agent, request } from 'undici';
import type { HttpLogConfig } from './schema';

/** One keep-alive agent: `timeout` bounds the connect, `keepalive` is how long an idle connection is kept. */
export function httpLogAgent(config: HttpLogConfig): Agent {
  return new Agent({ keepAliveTimeout: Math.max(config.keepalive, 1), connectTimeout: config.timeout || undefined });
}

/**
 * Posts one payload to `http_endpoint`: `timeout` bounds the send and the wait for the answer. Credentials in the URL
 * become a Basic `Authorization` header, as Kong does. Anything but a 2xx answer is a failure (retried by the queue).
 */
export async function postPayload(agent: Agent, config: HttpLogConfig, payload: string): Promise<void> {
  const url = new URL(config.http_endpoint);
  const headers: Record<string, string> = { 'content-type': config.content_type, ...(config.headers ?? {}) };
  if (url.username !== '' || url.password !== '') {
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  const res = await request(url, {
    method: config.method,
    headers: { ...headers, 'content-length': String(Buffer.byteLength(payload)) },
    body: payload,
    dispatcher: agent,
    headersTimeout: config.timeout || undefined,
    bodyTimeout: config.timeout || undefined,
  });
  await res.body.dump();
  if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`${url.origin} answered ${res.statusCode}`);
}
