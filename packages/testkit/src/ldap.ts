import { execFile } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports';
import { spawnProcess, type SpawnedProcess } from './processes';

const run = promisify(execFile);

export interface LdapUser {
  /** the value of the naming attribute (`uid` unless `attribute` says otherwise) */
  name: string;
  password: string;
}

export interface LdapServerOptions {
  users: LdapUser[];
  /** the naming attribute of the users' entries (default `uid`) */
  attribute?: 'uid' | 'cn';
  /** also serve LDAPS and StartTLS with a self-signed certificate for 127.0.0.1 (needs `openssl`) */
  tls?: boolean;
  timeoutMs?: number;
}

export interface LdapServerHandle {
  /** `ldap://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** the LDAPS port when started with `tls` */
  ldapsPort: number | null;
  /** the self-signed certificate (PEM) when started with `tls` */
  certificate: string | null;
  host: string;
  /** where the users live, e.g. `ou=people,dc=example,dc=org` */
  baseDn: string;
  attribute: string;
  rootDn: string;
  rootPassword: string;
  readonly pid: number;
  isRunning(): boolean;
  /** stops slapd by its PID and removes its directory; idempotent */
  stop(): Promise<void>;
}

const SUFFIX = 'dc=example,dc=org';
const PEOPLE = `ou=people,${SUFFIX}`;
const ROOT_DN = `cn=admin,${SUFFIX}`;
const SCHEMA_DIR = '/etc/ldap/schema';
const MODULE_DIRS = ['/usr/lib/ldap', '/usr/lib64/openldap', '/usr/lib/openldap', '/usr/local/libexec/openldap'];
const SBIN_DIRS = ['/usr/sbin', '/usr/local/sbin', '/usr/bin', '/usr/local/bin'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** slapd and slapadd usually live in sbin, which is not always on a test runner's PATH. */
function findTool(name: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':').filter(Boolean), ...SBIN_DIRS]) {
    const candidate = join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return null;
}

function notInstalled(what: string): Error {
  return new Error(
    `${what} is not installed: the LDAP tests run a real OpenLDAP server. Install it with ` +
      '`DEBIAN_FRONTEND=noninteractive apt-get install -y slapd ldap-utils openssl` (after apt-get update).',
  );
}

/** An LDIF value that needs base64 (leading space/colon/<, trailing space, non-ASCII or line breaks). */
function ldifLine(name: string, value: string): string {
  return /^[ :<]|[^\x20-\x7e]| $/.test(value) ? `${name}:: ${Buffer.from(value, 'utf8').toString('base64')}` : `${name}: ${value}`;
}

/** RFC 4514 escaping of one attribute value inside a DN. */
function escapeDnValue(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/^[ #]/, (c) => `\\${c}`)
    .replace(/ $/, '\\ ')
    .replace(/\0/g, '\\00');
}

function usersLdif(users: LdapUser[], attribute: string): string {
  const entries = [
    [`dn: ${SUFFIX}`, 'objectClass: dcObject', 'objectClass: organization', 'dc: example', 'o: Example'],
    [`dn: ${PEOPLE}`, 'objectClass: organizationalUnit', 'ou: people'],
    ...users.map((user) => [
      ldifLine('dn', `${attribute}=${escapeDnValue(user.name)},${PEOPLE}`),
      'objectClass: inetOrgPerson',
      ldifLine('uid', user.name),
      ldifLine('cn', user.name),
      ldifLine('sn', user.name),
      ldifLine('userPassword', user.password),
    ]),
  ];
  return `${entries.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}

function slapdConf(dir: string, moduleDir: string | null, rootPassword: string, tls: boolean): string {
  return [
    `include ${SCHEMA_DIR}/core.schema`,
    `include ${SCHEMA_DIR}/cosine.schema`,
    `include ${SCHEMA_DIR}/inetorgperson.schema`,
    ...(moduleDir ? [`modulepath ${moduleDir}`, 'moduleload back_mdb'] : []),
    `pidfile ${join(dir, 'slapd.pid')}`,
    `argsfile ${join(dir, 'slapd.args')}`,
    ...(tls ? [`TLSCertificateFile ${join(dir, 'cert.pem')}`, `TLSCertificateKeyFile ${join(dir, 'key.pem')}`] : []),
    'database mdb',
    'maxsize 16777216',
    `suffix "${SUFFIX}"`,
    `rootdn "${ROOT_DN}"`,
    `rootpw ${rootPassword}`,
    `directory ${join(dir, 'data')}`,
    'access to attrs=userPassword by anonymous auth by self write by * none',
    'access to * by * read',
    '',
  ].join('\n');
}

/** Polls until something accepts TCP connections on the port, or the process is gone. */
async function waitForPort(port: number, server: SpawnedProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (!server.isRunning()) throw new Error(`slapd exited before listening on ${port}:\n${server.output()}`);
    if (Date.now() > deadline) throw new Error(`slapd did not listen on ${port} within ${timeoutMs} ms:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function selfSignedCertificate(dir: string): Promise<string> {
  const openssl = findTool('openssl');
  if (!openssl) throw notInstalled('openssl');
  await run(openssl, [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
  ]);
  return readFileSync(join(dir, 'cert.pem'), 'utf8');
}

/**
 * Starts a throwaway OpenLDAP server (slapd, mdb backend) on a free port of 127.0.0.1, with `dc=example,dc=org`
 * holding the given users under `ou=people` (inetOrgPerson, plain-text userPassword). slapd runs in the foreground
 * as a child of this process and is stopped by its PID. Throws a clear error when slapd is not installed.
 */
export async function startLdapServer(options: LdapServerOptions): Promise<LdapServerHandle> {
  const slapd = findTool('slapd');
  const slapadd = findTool('slapadd');
  if (!slapd || !slapadd) throw notInstalled('slapd');
  try {
    accessSync(join(SCHEMA_DIR, 'inetorgperson.schema'), constants.R_OK);
  } catch {
    throw notInstalled(`the OpenLDAP schemas (${SCHEMA_DIR})`);
  }
  const attribute = options.attribute ?? 'uid';
  const tls = options.tls ?? false;
  const timeoutMs = options.timeoutMs ?? 15000;
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-'));
  let server: SpawnedProcess | null = null;
  const cleanup = async () => {
    if (server) {
      await server.stop(3000);
      server = null;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    mkdirSync(join(dir, 'data'));
    const certificate = tls ? await selfSignedCertificate(dir) : null;
    const rootPassword = `root-${Math.random().toString(36).slice(2)}`;
    const moduleDir = MODULE_DIRS.find((d) => readable(join(d, 'back_mdb.so')) || readable(join(d, 'back_mdb.la'))) ?? null;
    const conf = join(dir, 'slapd.conf');
    writeFileSync(conf, slapdConf(dir, moduleDir, rootPassword, tls));
    writeFileSync(join(dir, 'users.ldif'), usersLdif(options.users, attribute));
    try {
      await run(slapadd, ['-f', conf, '-l', join(dir, 'users.ldif')]);
    } catch (err) {
      const detail = err as { stderr?: string; message: string };
      throw new Error(`slapadd failed: ${detail.stderr || detail.message}`);
    }
    const port = await freePort();
    const ldapsPort = tls ? await freePort() : null;
    const urls = [`ldap://127.0.0.1:${port}/`, ...(ldapsPort ? [`ldaps://127.0.0.1:${ldapsPort}/`] : [])];
    server = await spawnProcess(slapd, ['-h', urls.join(' '), '-f', conf, '-d', '0'], { name: `slapd :${port}` });
    await waitForPort(port, server, timeoutMs);
    if (ldapsPort) await waitForPort(ldapsPort, server, timeoutMs);
    const running = server;
    return {
      url: `ldap://127.0.0.1:${port}`,
      port,
      ldapsPort,
      certificate,
      host: '127.0.0.1',
      baseDn: PEOPLE,
      attribute,
      rootDn: ROOT_DN,
      rootPassword,
      get pid() {
        return server?.pid ?? -1;
      },
      isRunning: () => server !== null && running.isRunning(),
      stop: cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

function readable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}
