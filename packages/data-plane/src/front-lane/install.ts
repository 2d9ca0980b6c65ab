import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionTimeouts } from '../connection-timeouts';
import { LaneConnection, type LaneHost } from './lane-connection';
import type { LaneRequest } from './lane-request';
import type { LaneResponse } from './lane-response';

/** the data plane's request handler, as node:http calls it */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** forwarders that write through the part of ServerResponse the lane's response has (http-proxy pipes streams) */
const LANE_FORWARDERS = new Set(['http1', 'undici']);

/**
 * Whether the plain listener runs the front lane: on unless the option (GATEHOUSE_FRONT_LANE) turns it off, and only
 * with a forwarder the lane's response fits. TLS listeners and h2c keep node:http alone.
 */
export function frontLaneWanted(option: boolean | undefined, forwarderName: string): boolean {
  return LANE_FORWARDERS.has(forwarderName) && option !== false;
}

/**
 * The front lane on a node:http listener: the listener's sockets are read by the lane first, which serves simple
 * requests itself (see LaneConnection) and hands any other connection to node:http at a request boundary. Replaces
 * node:http's own `connection` listener (the server's other listeners still run for every connection); the server's
 * closeIdleConnections/closeAllConnections also close the lane's connections.
 */
export function installFrontLane(server: Server, handler: RequestHandler, timeouts: ConnectionTimeouts): void {
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  const nodeListener = listeners[0];
  if (nodeListener === undefined) return;
  server.removeListener('connection', nodeListener);
  const connections = new Set<LaneConnection>();
  let closing = false;
  const host: LaneHost = {
    serve(req: LaneRequest, res: LaneResponse) {
      // the lane's request and response carry the part of node:http's the handler reads
      const node = { req, res } as unknown as { req: IncomingMessage; res: ServerResponse };
      handler(node.req, node.res);
    },
    handOver: (socket) => nodeListener.call(server, socket),
    forget: (connection) => void connections.delete(connection),
    keepAliveSeconds: Math.floor(timeouts.keepAlive / 1000),
    get closing() {
      return closing;
    },
    maxHeaderSize: (server as Server & { maxHeaderSize?: number }).maxHeaderSize ?? maxHeaderSize,
  };
  server.prependListener('connection', (socket: Socket) => {
    connections.add(new LaneConnection(socket, host));
  });
  const timer = setInterval(() => {
    const now = Date.now();
    for (const connection of connections) connection.check(now, timeouts.clientHeader, timeouts.keepAlive);
  }, timeouts.checkEvery);
  timer.unref();
  const closeIdle = server.closeIdleConnections.bind(server);
  const closeAll = server.closeAllConnections.bind(server);
  server.closeIdleConnections = () => {
    closing = true;
    closeIdle();
    for (const connection of connections) connection.closeIdle();
  };
  server.closeAllConnections = () => {
    closeAll();
    for (const connection of connections) connection.destroy();
  };
  server.once('close', () => clearInterval(timer));
}
