// `gatehouse config dump|validate|diff|apply|parse|db_import|db_export`: declarative configuration against an admin API.
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { bundledPlugins } from '@gatehouse/plugins';
import { flattenDocument, offlineDocumentKinds, parseDocumentText, renderDiff, validateDocument, type ConfigDiff, type FlattenedError } from '@gatehouse/control-plane';
import { routerFlavorOf } from './settings';
import { dbExportVerb, dbImportVerb, parseVerb, type AdminCalls } from './config-kong-verbs';

export interface ConfigCommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** whether stderr is a terminal (a progress bar redraws in place there) */
  interactive: boolean;
}

interface Options {
  adminUrl: string;
  token?: string;
  output?: string;
  format?: 'yaml' | 'json';
  selectTags: string[];
  dryRun: boolean;
  progress: boolean;
  positional: string[];
}

export const CONFIG_USAGE = `Usage: gatehouse config <command> [options]

Commands:
  dump [-o FILE]          write the whole configuration (YAML unless FILE ends in .json or --format json)
  validate FILE           check a document offline (no server): format, schemas, references, duplicates
  diff FILE               what applying FILE would create, change and delete; exit 1 when it would change anything
  apply FILE [--dry-run]  replace the configuration with FILE in one transaction (--dry-run: show the diff only)
  parse FILE              Kong's \`kong config parse\`: check FILE offline (exit 1 with what is wrong)
  db_import FILE          Kong's \`kong config db_import\`: add or replace FILE's entities, keeping the rest
  db_export [FILE]        Kong's \`kong config db_export\`: write the configuration to FILE (default ./kong.yml), never over an existing file

Options:
  --admin-url URL         admin API (default $GATEHOUSE_ADMIN_URL or http://127.0.0.1:8001)
  --token TOKEN           sent as Kong-Admin-Token (default $GATEHOUSE_ADMIN_TOKEN)
  --select-tag TAG        only entities carrying TAG (repeatable); the rest is left alone
  --format yaml|json      dump format
  --no-progress           no progress bar while uploading
`;

class UsageError extends Error {}

function parseOptions(args: string[], env: NodeJS.ProcessEnv): Options {
  const opts: Options = {
    adminUrl: env.GATEHOUSE_ADMIN_URL ?? 'http://127.0.0.1:8001',
    token: env.GATEHOUSE_ADMIN_TOKEN || undefined,
    selectTags: [],
    dryRun: false,
    progress: true,
    positional: [],
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = () => {
      const v = args[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value`);
      return v;
    };
    if (arg === '--admin-url') opts.adminUrl = value();
    else if (arg === '--token') opts.token = value();
    else if (arg === '-o' || arg === '--output') opts.output = value();
    else if (arg === '--select-tag') opts.selectTags.push(...value().split(',').filter(Boolean));
    else if (arg === '--format') {
      const f = value();
      if (f !== 'yaml' && f !== 'json') throw new UsageError('--format is yaml or json');
      opts.format = f;
    } else if (arg === '--dry-run') opts.dryRun = true;
    else if (arg === '--no-progress') opts.progress = false;
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
    else opts.positional.push(arg);
  }
  return opts;
}

interface Reply {
  status: number;
  body: string;
}

/** One admin request; an upload reports its progress (bytes sent of total). */
function send(opts: Options, method: string, path: string, body?: Buffer, contentType?: string, onProgress?: (sent: number, total: number) => void): Promise<Reply> {
  const url = new URL(path, opts.adminUrl.endsWith('/') ? opts.adminUrl : `${opts.adminUrl}/`);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.token) headers['kong-admin-token'] = opts.token;
  if (body) {
    headers['content-type'] = contentType ?? 'application/json';
    headers['content-length'] = String(body.length);
  }
  const make = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = make(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', (err) => reject(new Error(`cannot reach the admin API at ${opts.adminUrl}: ${err.message}`)));
    if (!body) return void req.end();
    const CHUNK = 256 * 1024;
    let sent = 0;
    const pump = () => {
      while (sent < body.length) {
        const end = Math.min(sent + CHUNK, body.length);
        const more = req.write(body.subarray(sent, end));
        sent = end;
        onProgress?.(sent, body.length);
        if (!more) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

function query(opts: Options, extra: Record<string, string>): string {
  const params = new URLSearchParams(extra);
  if (opts.selectTags.length) params.set('select_tags', opts.selectTags.join(','));
  const text = params.toString();
  return text ? `?${text}` : '';
}

function failure(reply: Reply): Error {
  let message = reply.body;
  try {
    const parsed = JSON.parse(reply.body) as { message?: string; flattened_errors?: FlattenedError[] };
    if (parsed.flattened_errors?.length) return new Error(renderErrors(parsed.flattened_errors));
    if (parsed.message) message = parsed.message;
  } catch {
    // not JSON: show it as it is
  }
  return new Error(`the admin API answered ${reply.status}: ${message}`);
}

export function renderErrors(errors: FlattenedError[]): string {
  const lines = [`the document is invalid (${errors.length} ${errors.length === 1 ? 'entity' : 'entities'}):`];
  for (const e of errors) {
    const who = `${e.entity_type}${e.entity_name ? ` '${e.entity_name}'` : ''}${e.entity_id ? ` (${e.entity_id})` : ''}`;
    for (const item of e.errors) lines.push(`  ${who}: ${item.field ? `${item.field}: ` : ''}${item.message}`);
  }
  return lines.join('\n');
}

function progressBar(io: ConfigCommandIo, enabled: boolean): ((sent: number, total: number) => void) | undefined {
  if (!enabled) return undefined;
  let last = -1;
  return (sent, total) => {
    const pct = Math.floor((sent / total) * 100);
    if (pct === last) return;
    last = pct;
    const width = 30;
    const filled = Math.round((pct / 100) * width);
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    const bar = `[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${String(pct).padStart(3)}% ${mb(sent)}/${mb(total)} MiB`;
    if (io.interactive) io.stderr(`\r${bar}${pct === 100 ? '\n' : ''}`);
    else if (pct % 25 === 0) io.stderr(`${bar}\n`);
  };
}

function readDocument(file: string): { text: string; doc: Record<string, unknown> } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return { text, doc: parseDocumentText(text) };
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
}

/** the document's body for the admin API: JSON as it is, anything else (YAML) with its own content type */
function upload(text: string, file: string): { body: Buffer; type: string } {
  return { body: Buffer.from(text, 'utf8'), type: /\.json$/i.test(file) ? 'application/json' : 'application/yaml' };
}

async function diffAgainstServer(opts: Options, file: string, io: ConfigCommandIo): Promise<ConfigDiff> {
  const { text } = readDocument(file);
  const { body, type } = upload(text, file);
  const reply = await send(opts, 'POST', `config${query(opts, { dry_run: '1', flatten_errors: '1' })}`, body, type, progressBar(io, opts.progress && body.length > 4 * 1024 * 1024));
  if (reply.status !== 200) throw failure(reply);
  return JSON.parse(reply.body) as ConfigDiff;
}

/** the admin calls of Kong's verbs (config-kong-verbs.ts) */
function adminCalls(opts: Options, io: ConfigCommandIo): AdminCalls {
  return {
    get: (path) => send(opts, 'GET', path),
    postConfig: (body) => send(opts, 'POST', 'config?flatten_errors=1', body, 'application/json', progressBar(io, opts.progress)),
    failure,
  };
}

const changes = (d: ConfigDiff) => d.created.length + d.changed.length + d.deleted.length;

/** Runs one `gatehouse config …` command; returns the exit code (0 ok, 1 failed or has changes for diff, 2 usage). */
export async function runConfigCommand(args: string[], io: ConfigCommandIo): Promise<number> {
  const [sub, ...rest] = args;
  let opts: Options;
  try {
    opts = parseOptions(rest, io.env);
    if (!sub || sub === 'help' || sub === '--help') {
      io.stdout(CONFIG_USAGE);
      return sub ? 0 : 2;
    }
    const file = opts.positional[0];
    switch (sub) {
      case 'dump': {
        const format = opts.format ?? (opts.output && /\.json$/i.test(opts.output) ? 'json' : 'yaml');
        const reply = await send(opts, 'GET', `config${query(opts, format === 'yaml' ? { format: 'yaml' } : {})}`);
        if (reply.status !== 200) throw failure(reply);
        const text = format === 'json' ? `${JSON.stringify(JSON.parse(reply.body), null, 2)}\n` : reply.body;
        if (opts.output) {
          writeFileSync(opts.output, text);
          io.stderr(`wrote ${opts.output}\n`);
        } else io.stdout(text);
        return 0;
      }
      case 'validate': {
        if (!file) throw new UsageError('validate needs a FILE');
        const { doc } = readDocument(file);
        const errors = validateDocument(flattenDocument(doc, offlineDocumentKinds(bundledPlugins, { routerFlavor: routerFlavorOf(io.env) })));
        if (errors.length) {
          io.stderr(`${renderErrors(errors)}\n`);
          return 1;
        }
        io.stdout(`${file}: valid\n`);
        return 0;
      }
      case 'diff': {
        if (!file) throw new UsageError('diff needs a FILE');
        const diff = await diffAgainstServer(opts, file, io);
        io.stdout(`${renderDiff(diff)}\n`);
        return changes(diff) > 0 ? 1 : 0;
      }
      case 'apply': {
        if (!file) throw new UsageError('apply needs a FILE');
        if (opts.dryRun) {
          io.stdout(`${renderDiff(await diffAgainstServer(opts, file, io))}\n(dry run: nothing was written)\n`);
          return 0;
        }
        const { text } = readDocument(file);
        const { body, type } = upload(text, file);
        const started = Date.now();
        const reply = await send(opts, 'POST', `config${query(opts, { flatten_errors: '1', check_hash: '1' })}`, body, type, progressBar(io, opts.progress));
        if (reply.status === 304) {
          io.stdout('no changes: the configuration already matches the document\n');
          return 0;
        }
        if (reply.status !== 201) throw failure(reply);
        const applied = JSON.parse(reply.body) as Record<string, unknown[]>;
        const counts = Object.entries(applied).map(([family, list]) => `${list.length} ${family}`);
        io.stdout(`applied in ${((Date.now() - started) / 1000).toFixed(1)} s: ${counts.join(', ') || 'an empty configuration'}\n`);
        return 0;
      }
      case 'parse':
      case 'db_import': {
        if (!file) throw new UsageError('expected a declarative configuration file; see `gatehouse config help`');
        const verbIo = { stdout: io.stdout, render: renderErrors, routerFlavor: routerFlavorOf(io.env) };
        if (sub === 'parse') {
          parseVerb(readDocument(file).doc, verbIo);
          io.stdout('parse successful\n');
        } else await dbImportVerb(readDocument(file).doc, adminCalls(opts, io), verbIo);
        return 0;
      }
      case 'db_export':
        await dbExportVerb(file, adminCalls(opts, io), { stdout: io.stdout, render: renderErrors });
        return 0;
      default:
        throw new UsageError(`unknown config command '${sub}'`);
    }
  } catch (err) {
    io.stderr(`gatehouse config: ${(err as Error).message}\n`);
    if (err instanceof UsageError) {
      io.stderr(CONFIG_USAGE);
      return 2;
    }
    return 1;
  }
}
