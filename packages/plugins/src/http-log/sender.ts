import { Agent, request } from 'undici';
import type { HttpLogConfig } from './schema';

/**
 * Posts batches to `http_endpoint` over one keep-alive agent per configuration: `timeout` bounds connect, send and
 * the wait for the answer; `keepalive` is how long an idle connection is kept. Credentials in the URL become a Basic
 * `Authorization` header, as Kong does. Anything but a 2xx answer is a failure (retried by the queue).
 */
export class HttpLogSender {
  private readonly agent: Agent;
  private readonly url: URL;
  private readonly headers: Record<string, string>;

  constructor(private readonly config: HttpLogConfig) {
    this.url = new URL(config.http_endpoint);
    this.agent = new Agent({ keepAliveTimeout: Math.max(config.keepalive, 1), connectTimeout: config.timeout || undefined });
    this.headers = { 'content-type': config.content_type, ...(config.headers ?? {}) };
    if (this.url.username !== '' || this.url.password !== '') {
      const user = decodeURIComponent(this.url.username);
      const password = decodeURIComponent(this.url.password);
      this.headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      this.url.username = '';
      this.url.password = '';
    }
  }

  async send(payload: string): Promise<void> {
    const res = await request(this.url, {
      method: this.config.method,
      headers: { ...this.headers, 'content-length': String(Buffer.byteLength(payload)) },
      body: payload,
      dispatcher: this.agent,
      headersTimeout: this.config.timeout || undefined,
      bodyTimeout: this.config.timeout || undefined,
    });
    await res.body.dump();
    if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`${this.url.origin} answered ${res.statusCode}`);
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
