#!/usr/bin/env node
// The `gatehouse` command: start | control-plane | data-plane | help.
import { randomUUID } from 'node:crypto';
import { loadCustomPlugins, setUntrustedLua } from '@gatehouse/plugins';
import { adminUrlOf } from './admin-listener';
import { runConfigCommand } from './config-command';
import { adoptUpstreamCaBundle } from './data-plane-options';
import { confPathOf, noticeLine, runCheckCommand, startRole } from './settings/kong/cli';
import { applyKongSettings, type KongNotice } from './settings/kong';
import { createLogger, type Logger } from './logger';
import { createNodeMetrics } from './node-metrics';
import { adminExposureWarning } from './safe-defaults';
import { readSettings, SETTINGS_DOC, type Role, type Settings } from './settings';
import { forkedProxyWorker, startNode, type StartedNode } from './start-node';
import { GATEHOUSE_VERSION } from './version';

const ROLES: Record<string, Role> = { start: 'all', 'control-plane': 'control_plane', 'data-plane': 'data_plane' };

function usage(): string {
  const rows = SETTINGS_DOC.map((s) => `  ${s.name.padEnd(26)} ${s.meaning} [${s.default}]`).join('\n');
  return `gatehouse ${GATEHOUSE_VERSION}

Usage: gatehouse <command>

Commands:
  start           control plane and data plane in one process (embedded database and bus unless configured)
  control-plane   the admin API over Postgres, publishing snapshots to Redis
  data-plane      a proxy fed by snapshots from Redis; no database access
  config          dump | validate | diff | apply a declarative configuration (gatehouse config help)
  check <conf>    validate a kong.conf (with the KONG_* and GATEHOUSE_* environment over it)
  help            this text

Options of start, control-plane and data-plane:
  -c, --conf <path>   read Kong's settings from a kong.conf file (also GATEHOUSE_CONF); KONG_* variables are read
                      too; GATEHOUSE_* variables win over both

Environment:
${rows}
`;
}

/** Applies kong.conf and KONG_* to process.env (variables already set win); returns what was not applied, to log once. */
function adoptKongSettings(args: string[]): KongNotice[] {
  const kong = applyKongSettings(process.env, confPathOf(args, process.env));
  for (const [key, value] of Object.entries(kong.env)) if (process.env[key] === undefined) process.env[key] = value;
  return kong.notices;
}

const show = (l: { host: string; port: number }) => `http://${l.host.includes(':') ? `[${l.host}]` : l.host}:${l.port}`;

/** `config`, `check` and `help`: commands that run and end; false for a command that starts a node. */
async function runOneShotCommand(command: string): Promise<boolean> {
  if (command === 'config') {
    process.exitCode = await runConfigCommand(process.argv.slice(3), {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
      env: process.env,
      interactive: process.stderr.isTTY === true,
    });
    return true;
  }
  if (command === 'check') {
    process.exitCode = runCheckCommand(process.argv.slice(3), { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t), env: process.env });
    return true;
  }
  if (ROLES[command]) return false;
  process.stdout.write(usage());
  process.exitCode = command === 'help' || command === '--help' || command === '-h' ? 0 : 2;
  return true;
}

/** SIGINT and SIGTERM stop the node (forced after 10 s); SIGUSR1 reopens the access log. */
function onSignals(close: () => Promise<void>, reopenLog: () => void): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    process.stdout.write(`\n${signal}: stopping gatehouse…\n`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    try {
      await close();
    } finally {
      process.stdout.write('stopped\n');
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // log rotation: the access log file is opened again on its next write
  process.on('SIGUSR1', reopenLog);
}

/** The settings of the node this process runs, with one node id for the process (the data plane reports it, kong_node_info carries it). */
function nodeSettings(command: string): { settings: Settings & { dataPlaneId: string }; role: Role; kongNotices: KongNotice[] } {
  // Kong's names (kong.conf, KONG_*) complete the environment, here so that proxy workers inherit the result
  const kongNotices = adoptKongSettings(process.argv.slice(3));
  const role = command === 'start' ? startRole(process.env) : ROLES[command]!;
  const read = readSettings(process.env, role);
  adoptUpstreamCaBundle(read);
  setUntrustedLua(read.untrustedLua);
  return { settings: { ...read, dataPlaneId: read.dataPlaneId ?? randomUUID() }, role, kongNotices };
}

/** The proxy's lines once everything listens. */
function announceProxy(proxy: NonNullable<StartedNode['dataPlane']>, settings: Settings): void {
  const workers = proxy.workers ? ` (${settings.workers} workers)` : '';
  process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: proxy listening on ${show({ host: proxy.listening.host, port: proxy.listening.port })}${workers}\n`);
  if (proxy.listening.tlsPort !== null) process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: proxy TLS listening on ${show({ host: settings.proxyTlsListen!.host, port: proxy.listening.tlsPort }).replace(/^http:/, 'https:')}\n`);
  if (proxy.status) process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: status API listening on ${show({ host: settings.statusListen!.host, port: proxy.status.port })}\n`);
}

/** The node's lines once everything listens: the admin API (and status listener) first, then the proxy's, then the bus. */
function announceNode(started: StartedNode, settings: Settings, log: Logger): void {
  const { declarative, controlPlane: cp, dataPlane: proxy } = started;
  if (declarative?.admin) {
    const exposure = adminExposureWarning(settings);
    if (exposure) log.warn(exposure);
    process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: admin API listening on ${adminUrlOf(settings, declarative.admin)} (database: off${settings.declarativeConfig ? `, ${settings.declarativeConfig}` : ''})\n`);
  }
  if (cp) {
    const exposure = adminExposureWarning(settings);
    if (exposure) log.warn(exposure);
    if (cp.status) process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: status API listening on ${show({ host: cp.status.host, port: cp.status.port })}\n`);
    process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: admin API listening on ${adminUrlOf(settings, cp.admin)} (database: ${cp.database.kind}${settings.databaseUrl ? '' : `, in ${settings.dataDir}`})\n`);
  }
  if (proxy) announceProxy(proxy, settings);
  process.stdout.write(`gatehouse ${GATEHOUSE_VERSION}: ${settings.redisUrl ? 'snapshots over Redis' : 'in-process snapshot bus'}; Ctrl-C stops\n`);
}

async function run(command: string): Promise<void> {
  if (await runOneShotCommand(command)) return;
  // custom plugins (Kong's `plugins` setting) join the catalogue before either plane reads it
  await loadCustomPlugins(process.env.GATEHOUSE_PLUGINS, process.cwd());
  const worker = forkedProxyWorker(process.env);
  if (worker) return worker;
  const { settings, role, kongNotices } = nodeSettings(command);
  const metrics = createNodeMetrics(settings.dataPlaneId, GATEHOUSE_VERSION);
  const log = createLogger(settings.logLevel, role);
  for (const notice of kongNotices) log.warn(noticeLine(notice), { setting: notice.name });
  const node = startNode(role, settings, { log, metrics, env: process.env });
  onSignals(node.close, node.reopenLog);
  announceNode(await node.ready, settings, log);
}

run(process.argv[2] ?? 'help').catch((err: unknown) => {
  process.stderr.write(`gatehouse: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
