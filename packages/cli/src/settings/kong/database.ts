import type { KongValues } from './sources';

/** The Kong names the database conversion reads. */
export const DATABASE_NAMES = ['database', 'pg_host', 'pg_port', 'pg_user', 'pg_password', 'pg_database', 'pg_schema', 'pg_ssl', 'pg_ssl_verify'] as const;

function on(value: string | undefined, name: string): boolean {
  if (value === undefined) return false;
  const v = value.toLowerCase();
  if (v === 'on' || v === 'true') return true;
  if (v === 'off' || v === 'false') return false;
  throw new Error(`${name} must be on or off, got '${value}'`);
}

/**
 * Kong's `database` and `pg_*` (Kong's defaults where unset: 127.0.0.1:5432, user and database `kong`): `postgres`
 * (the default as soon as any `pg_*` is given) becomes DATABASE_URL and GATEHOUSE_DATABASE=postgres, `off` becomes
 * GATEHOUSE_DATABASE=off. `pg_ssl` asks for TLS (`pg_ssl_verify` also verifies the server's certificate), `pg_schema`
 * sets the search path.
 */
export function databaseSettings(kong: KongValues): Record<string, string> {
  const get = (name: string) => kong.get(name)?.value || undefined;
  const anyPg = DATABASE_NAMES.some((n) => n !== 'database' && get(n) !== undefined);
  const database = get('database') ?? (anyPg ? 'postgres' : undefined);
  if (database === undefined) return {};
  if (database === 'off') return { GATEHOUSE_DATABASE: 'off' };
  if (database !== 'postgres') throw new Error(`database has an invalid value: '${database}' (postgres, off)`);
  const port = get('pg_port') ?? '5432';
  if (!/^\d+$/.test(port) || Number(port) > 65535) throw new Error(`pg_port must be a port number, got '${port}'`);
  const user = encodeURIComponent(get('pg_user') ?? 'kong');
  const password = get('pg_password');
  const host = get('pg_host') ?? '127.0.0.1';
  const url = new URL(`postgres://${user}${password ? `:${encodeURIComponent(password)}` : ''}@${host.includes(':') ? `[${host}]` : host}:${port}/`);
  url.pathname = `/${encodeURIComponent(get('pg_database') ?? 'kong')}`;
  if (on(get('pg_ssl'), 'pg_ssl')) url.searchParams.set('sslmode', on(get('pg_ssl_verify'), 'pg_ssl_verify') ? 'verify-full' : 'no-verify');
  const schema = get('pg_schema');
  if (schema) url.searchParams.set('options', `-c search_path=${schema}`);
  return { GATEHOUSE_DATABASE: 'postgres', DATABASE_URL: url.toString() };
}
