import { existsSync } from 'node:fs';
import { parseErrorDefaultType, parseGatewayHeaders, parseHeadersUpstream } from '@gatehouse/data-plane';
import { readSettings, type Role } from '../index';
import { applyKongSettings, type KongNotice } from './index';

/** `--conf <path>`, `--conf=<path>` or `-c <path>` among the arguments, else GATEHOUSE_CONF, else null. */
export function confPathOf(args: readonly string[], env: NodeJS.ProcessEnv): string | null {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.startsWith('--conf=')) return arg.slice(7);
    if (arg === '--conf' || arg === '-c') {
      const path = args[i + 1];
      if (path === undefined || path === '') throw new Error(`${arg} needs a file path`);
      return path;
    }
  }
  return env.GATEHOUSE_CONF || null;
}

const ROLE_NAMES: Record<string, Role> = { all: 'all', control_plane: 'control_plane', data_plane: 'data_plane' };

/** The role `gatehouse start` runs: GATEHOUSE_ROLE (or Kong's `role`) when set, else both planes. */
export function startRole(env: NodeJS.ProcessEnv): Role {
  const value = env.GATEHOUSE_ROLE;
  if (value === undefined || value === '') return 'all';
  const role = ROLE_NAMES[value];
  if (!role) throw new Error(`GATEHOUSE_ROLE must be one of all, control_plane, data_plane, got '${value}'`);
  return role;
}

export function noticeLine(n: KongNotice): string {
  return `Kong setting '${n.name}' (${n.from}): ${n.reason}`;
}

export interface CheckIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/**
 * `gatehouse check <conf>`: reads a kong.conf (with the KONG_* and GATEHOUSE_* environment over it, as a start would),
 * converts it and validates the resulting settings; lists what is not applied. Exit code 0 when valid, 1 otherwise.
 */
export function runCheckCommand(args: readonly string[], io: CheckIo): number {
  const path = args.find((a) => !a.startsWith('-'));
  if (!path) {
    io.stderr('Usage: gatehouse check <kong.conf>\n');
    return 2;
  }
  if (!existsSync(path)) {
    io.stderr(`Error: ${path} does not exist\n`);
    return 1;
  }
  try {
    const kong = applyKongSettings(io.env, path);
    for (const n of kong.notices) io.stderr(`${noticeLine(n)}\n`);
    const role = startRole(kong.env);
    const settings = readSettings(kong.env, role);
    // what the proxy reads at start, checked here too
    parseGatewayHeaders(settings.headers, 'gatehouse');
    parseHeadersUpstream(settings.headersUpstream);
    parseErrorDefaultType(settings.errorDefaultType ?? undefined);
  } catch (err) {
    io.stderr(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  io.stdout(`configuration at ${path} is valid\n`);
  return 0;
}
