import { Agent, request } from 'undici';

export interface SenderTimeouts {
  connect_timeout: number;
  send_timeout: number;
  read_timeout: number;
}

/**
 * POSTs payloads to a tracing receiver over one keep-alive agent: `connect_timeout` bounds the connection,
 * `read_timeout` the wait for the answer and `send_timeout` the body (ms). `accept` says which statuses mean success.
 */
export class TracingHttpSender {
  private readonly agent: Agent;
  private readonly url: URL;

  constructor(
    endpoint: string,
    private readonly timeouts: SenderTimeouts,
    private readonly headers: Record<string, string>,
    private readonly accept: (status: number) => boolean,
  ) {
    this.url = new URL(endpoint);
    this.agent = new Agent({ connectTimeout: timeouts.connect_timeout || undefined, keepAliveTimeout: 60_000 });
  }

  async send(body: Uint8Array | string): Promise<void> {
    const res = await request(this.url, {
      method: 'POST',
      headers: this.headers,
      body,
      dispatcher: this.agent,
      headersTimeout: this.timeouts.read_timeout || undefined,
      bodyTimeout: Math.max(this.timeouts.read_timeout, this.timeouts.send_timeout) || undefined,
    });
    const text = await res.body.text();
    if (!this.accept(res.statusCode)) throw new Error(`response error: ${res.statusCode}, body: ${text.slice(0, 200)}`);
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
