import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server listening on its address, and how to stop it (open keep-alive connections are closed too). */
export interface Listening {
  server: Server;
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Starts `server` on host:port (port 0: a free one), rejecting when the address cannot be bound. */
export async function listenOn(server: Server, host: string, port: number): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    server,
    host: address.address,
    port: address.port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
