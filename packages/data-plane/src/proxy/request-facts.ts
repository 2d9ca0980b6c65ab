import type { IncomingMessage } from 'node:http';
import type { RequestFacts } from '../compile/expression-match';

/** What expression routes read of a request beyond method, host, path and headers (`net.*`, `http.queries.*`). */
export function requestFacts(req: IncomingMessage, scheme: string, query: string): RequestFacts {
  const socket = req.socket;
  return {
    scheme,
    query,
    remoteAddress: socket.remoteAddress,
    remotePort: socket.remotePort,
    localAddress: socket.localAddress,
    localPort: socket.localPort,
  };
}
