// Kong's `kong config` verbs on `gatehouse config`: parse (offline), db_import (merge into the control plane's
// configuration) and db_export (write it to a file that does not exist yet).
import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { bundledPlugins } from '@gatehouse/plugins';
import type { RouterFlavor } from '@gatehouse/core';
import { flattenDocument, offlineDocumentKinds, toDocumentEntity, validateDocument, type FlatDocument, type FlattenedError } from '@gatehouse/control-plane';

export interface AdminCalls {
  /** GET on the admin API: status and body text */
  get(path: string): Promise<{ status: number; body: string }>;
  /** POST /config of a JSON document with `?flatten_errors=1`, with the upload's progress bar */
  postConfig(body: Buffer): Promise<{ status: number; body: string }>;
  failure(reply: { status: number; body: string }): Error;
}

export interface VerbIo {
  stdout: (text: string) => void;
  render: (errors: FlattenedError[]) => string;
  /** Kong's `router_flavor` the document is checked under (route `expression` and `priority`) */
  routerFlavor?: RouterFlavor;
}

/** A file that does not parse or validate: Kong's `Failed parsing:` error. */
export class ParseFailure extends Error {}

/** Kong's `kong config parse`: the document checked offline, flattened (ids derived, references resolved). */
export function parseVerb(doc: Record<string, unknown>, io: VerbIo): FlatDocument {
  const flat = flattenDocument(doc, offlineDocumentKinds(bundledPlugins, { routerFlavor: io.routerFlavor }));
  const errors = validateDocument(flat);
  if (errors.length) throw new ParseFailure(`Failed parsing:\n${io.render(errors)}`);
  return flat;
}

/**
 * The control plane's configuration with the file's entities added or replaced by id (Kong's db_import upserts and
 * leaves everything else in place); the file's `_transform` carries over.
 */
export function mergedDocument(current: Record<string, unknown>, flat: FlatDocument, transform: boolean): Record<string, unknown> {
  const merged: Record<string, unknown> = { _format_version: '3.0', _transform: transform };
  for (const kind of flat.kinds) {
    const byId = new Map<string, unknown>();
    const have = current[kind.def.name];
    if (Array.isArray(have)) for (const e of have as Array<Record<string, unknown>>) byId.set(String(e.id), e);
    for (const doc of flat.entities.get(kind.def.name) ?? []) byId.set(String(doc.body.id), toDocumentEntity(kind, doc.body));
    if (byId.size) merged[kind.def.name] = [...byId.values()];
  }
  return merged;
}

/** Kong's `kong config db_import FILE`: parse, then upsert the file's entities into the running configuration. */
export async function dbImportVerb(doc: Record<string, unknown>, admin: AdminCalls, io: VerbIo): Promise<void> {
  const transform = doc._transform !== false;
  const flat = parseVerb(doc, io);
  io.stdout('parse successful, beginning import\n');
  const reply = await admin.get('config');
  if (reply.status !== 200) throw admin.failure(reply);
  const current = JSON.parse(reply.body) as Record<string, unknown>;
  const posted = await admin.postConfig(Buffer.from(JSON.stringify(mergedDocument(current, flat, transform)), 'utf8'));
  if (posted.status !== 201) throw new Error(`Failed importing:\n${admin.failure(posted).message}`);
  io.stdout('import successful\n');
}

/** Kong's `kong config db_export [FILE]` (default ./kong.yml): never overwrites a file. */
export async function dbExportVerb(file: string | undefined, admin: AdminCalls, io: VerbIo): Promise<void> {
  const target = resolve(file ?? 'kong.yml');
  if (existsSync(target)) throw new Error(`${target} already exists. Will not overwrite it.`);
  const reply = await admin.get('config');
  if (reply.status !== 200) throw admin.failure(reply);
  const { _format_version: version, ...rest } = JSON.parse(reply.body) as Record<string, unknown>;
  // what is stored is already transformed (hashed passwords): an import of this file keeps it as it is
  const document = { _format_version: version, _transform: false, ...rest };
  writeFileSync(target, /\.json$/i.test(target) ? `${JSON.stringify(document, null, 2)}\n` : toYaml(document, { lineWidth: 0 }), { flag: 'wx' });
  io.stdout(`exported to ${target}\n`);
}
