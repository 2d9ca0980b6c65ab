import { Agent as HttpAgent, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Readable } from 'node:stream';
import httpProxy from 'http-proxy';
import type { UpstreamTarget } from '../compile/types';
import { stampProxiedResponse, type ExchangeTrace } from '../observe/exchange-trace';
import type { Forwarder, ForwardObserver } from './forwarder';
import { sendUpstreamFailure } from './responses';
import type { UpstreamRequest } from './upstream-request';

/** how long an idle upstream socket is kept (ms) */
const IDLE_SOCKET_TIMEOUT = 60_000;

interface TimedOptions extends httpProxy.ServerOptions {
  readTimeout: number;
}

/**
 * The same forwarding on `http-proxy` (Node's http client with keep-alive agents). Kept selectable so the benchmark
 * can measure both engines; undici is the default.
 */
export class HttpProxyForwarder implements Forwarder {
  readonly name = 'http-proxy';
  private readonly proxy = httpProxy.createProxyServer({ xfwd: false, prependPath: false });
  private readonly agents = new Map<string, HttpAgent>();
  /** plugin-set response headers of the requests in flight, by client response */
  private readonly responseHeaders = new WeakMap<ServerResponse, ReadonlyMap<string, string>>();
  /** request ids and timings of the requests in flight, by client response */
  private readonly traces = new WeakMap<ServerResponse, ExchangeTrace>();

  constructor() {
    // Node's client has no per-request read timeout: bound the wait for the upstream on its socket
    this.proxy.on('proxyReq', (proxyReq, _req, _res, options) => {
      const { readTimeout } = options as TimedOptions;
      proxyReq.setTimeout(readTimeout, () => proxyReq.destroy(Object.assign(new Error('upstream timed out'), { code: 'ETIMEDOUT' })));
    });
    // http-proxy copies proxyRes.headers to the client response right after this event: plugin headers replace the upstream's
    this.proxy.on('proxyRes', (proxyRes, _req, res) => {
      const extra = this.responseHeaders.get(res as ServerResponse);
      if (extra !== undefined) for (const [name, value] of extra) proxyRes.headers[name] = value;
      const trace = this.traces.get(res as ServerResponse);
      if (trace !== undefined) {
        const via = proxyRes.headers.via;
        delete proxyRes.headers.via;
        const added: string[] = [];
        trace.upstreamStatus = proxyRes.statusCode ?? null;
        stampProxiedResponse(added, trace, via === undefined ? null : String(via));
        for (let i = 0; i < added.length; i += 2) proxyRes.headers[added[i]!.toLowerCase()] = added[i + 1]!;
      }
    });
  }

  private agentFor(target: UpstreamTarget): HttpAgent {
    let agent = this.agents.get(target.poolKey);
    if (agent === undefined) {
      const settings = { keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT };
      agent = target.protocol === 'https' ? new HttpsAgent({ ...settings, rejectUnauthorized: target.tlsVerify, ...target.tls?.options }) : new HttpAgent(settings);
      this.agents.set(target.poolKey, agent);
    }
    return agent;
  }

  /** Response hooks (`upstream.onResponse`) need the undici forwarder; this engine relays responses as they come. */
  forward(req: IncomingMessage, res: ServerResponse, upstream: UpstreamRequest, observer: ForwardObserver | null = null): void {
    const { target } = upstream;
    let failed = false;
    // balanced requests: passive health and load from the response's end (no retries on this engine)
    if (observer !== null) {
      res.once('close', () => {
        if (failed) return;
        if (res.headersSent) observer.onResponse(res.statusCode);
        observer.onEnd();
      });
    }
    // http-proxy forwards req.url and req.headers: hand it the prepared ones
    req.url = upstream.path;
    req.method = upstream.method;
    req.headers = upstream.headers as IncomingMessage['headers'];
    if (upstream.responseHeaders !== null) this.responseHeaders.set(res, upstream.responseHeaders);
    if (upstream.trace) this.traces.set(res, upstream.trace);
    const options: TimedOptions = {
      target: { protocol: `${target.protocol}:`, host: target.host, port: String(target.port) },
      agent: this.agentFor(target),
      secure: target.tlsVerify,
      readTimeout: target.readTimeout,
      buffer: Buffer.isBuffer(upstream.body) ? Readable.from([upstream.body]) : upstream.body !== null && upstream.body !== req ? upstream.body : undefined,
    };
    this.proxy.web(req, res, options, (err) => {
      if (observer !== null && !res.headersSent) {
        failed = true;
        observer.onFailure(err, false);
      }
      sendUpstreamFailure(res, err, upstream.trace, upstream.responseHeaders);
    });
  }

  prune(active: ReadonlySet<string>): void {
    for (const [key, agent] of this.agents) {
      if (active.has(key)) continue;
      this.agents.delete(key);
      // idle sockets close now; sockets in use finish their request, then time out idle
      for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
    }
  }

  async close(): Promise<void> {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
    this.proxy.close();
  }
}
