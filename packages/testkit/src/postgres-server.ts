import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports';
import { spawnProcess, type SpawnedProcess } from './processes';

export interface PostgresServerHandle {
  /** connection string of the `postgres` database on this server (user postgres, trust auth) */
  adminUrl: string;
  port: number;
  /** PID of the running postmaster (changes after `start()`) */
  readonly pid: number;
  isRunning(): boolean;
  /**
   * Stops this server by its PID: `fast` (SIGINT: sessions are terminated, 57P01) or `immediate` (SIGQUIT: the
   * server quits at once, like a crash). Data is kept.
   */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** starts it again on the same port and data directory */
  start(): Promise<void>;
  /** stops it and removes its data directory */
  destroy(): Promise<void>;
}

/** The newest Postgres server binaries installed the Debian way (`/usr/lib/postgresql/<major>/bin`). */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const major of majors) {
    const bin = join(root, major, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres'))) return bin;
  }
  throw new Error('a Postgres server of its own needs initdb and postgres under /usr/lib/postgresql/<major>/bin (Debian package postgresql)');
}

/** Postgres refuses to run as root: as root, run it as the `postgres` system user. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  if (userInfo().uid !== 0) return [command, args];
  return ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', command, ...args]];
}

function postgresUserIds(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

/**
 * A throwaway Postgres cluster of its own (initdb into a temporary directory, a free port, trust auth on
 * 127.0.0.1), for fault tests that stop and start the database. The shared server is never touched.
 */
export async function startPostgresServer(options: { port?: number; timeoutMs?: number } = {}): Promise<PostgresServerHandle> {
  const bin = postgresBinDir();
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'));
  const data = join(dir, 'data');
  if (userInfo().uid === 0) {
    const { uid, gid } = postgresUserIds();
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const [initCommand, initArgs] = asServerUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--no-instructions']);
  try {
    execFileSync(initCommand, initArgs, { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const e = error as { stderr?: Buffer; message: string };
    throw new Error(`initdb failed: ${e.stderr?.toString() || e.message}`);
  }
  const serverArgs = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=50'];
  const launch = () => {
    const [command, args] = asServerUser(join(bin, 'postgres'), serverArgs);
    return spawnProcess(command, args, {
      name: `postgres :${port}`,
      readyPattern: /ready to accept connections/,
      timeoutMs: options.timeoutMs ?? 30000,
    });
  };
  let server: SpawnedProcess | null = await launch();
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    const running = server;
    if (!running) return;
    server = null;
    if (running.isRunning()) {
      running.signal(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
      const stopped = await Promise.race([running.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10000))]);
      if (!stopped) await running.stop(1000);
    }
  };
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    get pid() {
      return server?.pid ?? -1;
    },
    isRunning: () => server?.isRunning() ?? false,
    stop,
    async start() {
      await stop();
      server = await launch();
    },
    async destroy() {
      await stop('immediate');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
