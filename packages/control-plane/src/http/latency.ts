import type { RequestHandler } from 'express';

/** `X-Kong-Admin-Latency`: milliseconds spent before the response head was written, on every admin response. */
export function adminLatency(): RequestHandler {
  return (_req, res, next) => {
    const started = process.hrtime.bigint();
    const writeHead = res.writeHead;
    res.writeHead = function (this: typeof res, ...args: Parameters<typeof res.writeHead>) {
      if (!res.headersSent) res.setHeader('X-Kong-Admin-Latency', String(Number((process.hrtime.bigint() - started) / 1_000_000n)));
      return writeHead.apply(this, args);
    } as typeof res.writeHead;
    next();
  };
}
