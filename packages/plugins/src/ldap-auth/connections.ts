import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { Client, ResultCodeError } from 'ldapts';

/** One LDAP server as a plugin configuration names it. */
export interface LdapServer {
  host: string;
  port: number;
  ldaps: boolean;
  startTls: boolean;
  /** check the server's certificate (LDAPS and StartTLS) */
  verifyHost: boolean;
  /** connect and operation timeout, ms; 0 = none */
  timeout: number;
  /** how long an idle connection is kept for the next bind, ms; 0 = closed after each bind */
  keepalive: number;
}

/**
 * Simple binds against an LDAP server. Resolves true when the DN and password bind, false when the server refuses
 * them (any LDAP result code); rejects when the server cannot be reached or does not answer in time.
 */
export interface LdapBinder {
  bind(server: LdapServer, dn: string, password: string): Promise<boolean>;
}

function tlsOptionsFor(server: LdapServer): ConnectionOptions {
  return {
    host: server.host,
    servername: isIP(server.host) === 0 ? server.host : undefined,
    rejectUnauthorized: server.verifyHost,
  };
}

function urlOf(server: LdapServer): string {
  const host = isIP(server.host) === 6 ? `[${server.host}]` : server.host;
  return `${server.ldaps ? 'ldaps' : 'ldap'}://${host}:${server.port}`;
}

function keyOf(server: LdapServer): string {
  return `${urlOf(server)}|${server.startTls ? 'starttls' : 'plain'}|${server.verifyHost ? 'verify' : 'noverify'}|${server.timeout}`;
}

type AnyConnect = (...args: unknown[]) => Socket;

/**
 * One LDAP client and the sockets it opened. The sockets come through ldapts' own connection hooks, so an idle
 * connection can be unref'd: a kept connection never holds a process open.
 */
class PooledConnection {
  readonly client: Client;
  private readonly sockets: Socket[] = [];
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(server: LdapServer) {
    const track = (socket: Socket): Socket => {
      this.sockets.push(socket);
      return socket;
    };
    this.client = new Client({
      url: urlOf(server),
      timeout: server.timeout,
      connectTimeout: server.timeout,
      // for ldap:// any tlsOptions would turn the connection into TLS; StartTLS gets its options when it upgrades
      tlsOptions: server.ldaps ? tlsOptionsFor(server) : undefined,
      createConnection: ((...args: unknown[]) => track((netConnect as AnyConnect)(...args))) as typeof netConnect,
      createSecureConnection: ((...args: unknown[]) => track((tlsConnect as AnyConnect)(...args))) as typeof tlsConnect,
    });
  }

  get usable(): boolean {
    return this.client.isConnected;
  }

  enterIdle(keepalive: number, expire: () => void): void {
    for (const socket of this.sockets) socket.unref();
    this.idleTimer = setTimeout(expire, keepalive);
    this.idleTimer.unref();
  }

  leaveIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    for (const socket of this.sockets) socket.ref();
  }

  destroy(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const sockets = this.sockets.splice(0);
    // unbind says goodbye and closes the socket; the sockets are destroyed after it in case it could not
    this.client
      .unbind()
      .catch(() => undefined)
      .finally(() => {
        for (const socket of sockets) socket.destroy();
      });
  }
}

/**
 * Binds over kept connections, one pool per server configuration (Kong's `keepalive`: an idle connection is kept that
 * many ms). A connection serves one bind at a time, since a bind changes the connection's identity; concurrent binds
 * open more connections, and at most `maxIdlePerServer` of them are kept. A connection that failed is dropped.
 * A StartTLS connection is upgraded once, when opened; one that lost its socket is never reused (a silent
 * reconnect would be in the clear).
 */
export class LdapConnections implements LdapBinder {
  private readonly idle = new Map<string, PooledConnection[]>();
  private closed = false;

  constructor(private readonly maxIdlePerServer = 16) {}

  async bind(server: LdapServer, dn: string, password: string): Promise<boolean> {
    const connection = await this.acquire(server);
    let bound: boolean;
    try {
      await connection.client.bind(dn, password);
      bound = true;
    } catch (err) {
      if (!(err instanceof ResultCodeError)) {
        connection.destroy();
        throw err;
      }
      bound = false; // the server answered: these credentials do not bind
    }
    this.release(server, connection);
    return bound;
  }

  /** idle connections kept for a server configuration (for tests and status) */
  idleCount(server: LdapServer): number {
    return this.idle.get(keyOf(server))?.length ?? 0;
  }

  /** Closes every kept connection; later binds open and close their own. */
  close(): void {
    this.closed = true;
    for (const list of this.idle.values()) for (const connection of list) connection.destroy();
    this.idle.clear();
  }

  private async acquire(server: LdapServer): Promise<PooledConnection> {
    const list = this.idle.get(keyOf(server));
    while (list !== undefined && list.length > 0) {
      const kept = list.pop()!;
      kept.leaveIdle();
      if (kept.usable) return kept;
      kept.destroy();
    }
    const connection = new PooledConnection(server);
    if (server.startTls) {
      try {
        await connection.client.startTLS(tlsOptionsFor(server));
      } catch (err) {
        connection.destroy();
        throw err;
      }
    }
    return connection;
  }

  private release(server: LdapServer, connection: PooledConnection): void {
    if (this.closed || server.keepalive <= 0 || !connection.usable) return connection.destroy();
    const key = keyOf(server);
    let list = this.idle.get(key);
    if (list === undefined) this.idle.set(key, (list = []));
    if (list.length >= this.maxIdlePerServer) return connection.destroy();
    list.push(connection);
    const kept = list;
    connection.enterIdle(server.keepalive, () => {
      const at = kept.indexOf(connection);
      if (at >= 0) kept.splice(at, 1);
      connection.destroy();
    });
  }
}
