import { randomUUID } from 'node:crypto';
import type { RequestConnection } from '../contract';
import type { CorrelationIdConfig } from './schema';

/** One uuid per process for `uuid#counter`, then a counter: `<uuid>#<n>`, as Kong's per-worker generator. */
const processUuid = randomUUID();
let counter = 0;

/**
 * Kong's `tracker`: `server_addr-server_port-pid-connection-connection_requests-epoch.msec`, from the gateway's own
 * address and port on the client's connection, the process id, the connection's serial number in this process, the
 * requests it carried (this one included) and the time in seconds with milliseconds.
 */
export function trackerId(connection: RequestConnection | undefined, nowMs = Date.now()): string {
  const { localAddress, localPort, serial, requests } = connection ?? { localAddress: '0.0.0.0', localPort: 0, serial: 0, requests: 0 };
  return `${localAddress}-${localPort}-${process.pid}-${serial}-${requests}-${(nowMs / 1000).toFixed(3)}`;
}

/** A fresh correlation id from the configured generator. */
export function generateCorrelationId(generator: CorrelationIdConfig['generator'], connection?: RequestConnection): string {
  if (generator === 'uuid') return randomUUID();
  if (generator === 'uuid#counter') return `${processUuid}#${++counter}`;
  return trackerId(connection);
}
