import { PostConnection, StaleConnectionError } from './post-connection';

export interface SenderTimeouts {
  connect_timeout: number;
  send_timeout: number;
  read_timeout: number;
}

/** a header value that would end its line, or the head */
const LINE_BREAK = /[\r\n]/;

/**
 * POSTs payloads to a tracing receiver over keep-alive HTTP/1.1 connections (one request at a time on each; a send
 * while all are busy opens another): `connect_timeout` bounds the connection, and the larger of `read_timeout` and
 * `send_timeout` the silence while a request is under way (ms). `accept` says which statuses mean success. A request
 * that finds its idle connection closed by the receiver is sent again once on a new one. The request head is made
 * once; each request leaves in one write.
 */
export class TracingHttpSender {
  private readonly url: URL;
  /** the request head up to its `content-length` value */
  private readonly head: string;
  private readonly idle: PostConnection[] = [];
  private closing = false;

  constructor(
    endpoint: string,
    private readonly timeouts: SenderTimeouts,
    headers: Record<string, string>,
    private readonly accept: (status: number) => boolean,
  ) {
    this.url = new URL(endpoint);
    if (this.url.protocol !== 'http:' && this.url.protocol !== 'https:') throw new Error(`unsupported protocol ${this.url.protocol}`);
    const lines = [`POST ${this.url.pathname}${this.url.search} HTTP/1.1`];
    const names = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
    if (!names.has('host')) lines.push(`host: ${this.url.host}`);
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      if (lower === 'content-length' || lower === 'transfer-encoding' || lower === 'connection') continue;
      if (LINE_BREAK.test(name) || LINE_BREAK.test(String(value))) throw new Error(`invalid header ${JSON.stringify(name)}`);
      lines.push(`${name}: ${value}`);
    }
    this.head = `${lines.join('\r\n')}\r\ncontent-length: `;
  }

  async send(body: Uint8Array | string): Promise<void> {
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    const head = `${this.head}${length}\r\n\r\n`;
    const timeout = Math.max(this.timeouts.read_timeout, this.timeouts.send_timeout) || 0;
    let connection = this.idle.pop() ?? (await this.connect());
    let response;
    try {
      response = await connection.request(head, body, timeout);
    } catch (err) {
      if (!(err instanceof StaleConnectionError)) throw err;
      connection = await this.connect();
      response = await connection.request(head, body, timeout);
    }
    if (response.keepAlive && !this.closing) this.idle.push(connection);
    else this.drop(connection);
    if (!this.accept(response.status)) throw new Error(`response error: ${response.status}, body: ${response.body.toString('utf8', 0, 200)}`);
  }

  /** closes the idle connections; one still busy closes when its request ends */
  async close(): Promise<void> {
    this.closing = true;
    for (const connection of this.idle.splice(0)) this.drop(connection);
  }

  private async connect(): Promise<PostConnection> {
    return PostConnection.open(this.url, this.timeouts.connect_timeout, (gone) => this.drop(gone));
  }

  private drop(connection: PostConnection): void {
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    connection.destroy();
  }
}
