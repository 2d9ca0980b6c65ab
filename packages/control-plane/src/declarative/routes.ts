import type { Request, Response } from 'express';
import { stringify as toYaml } from 'yaml';
import { Errors, HttpError } from '@gatehouse/core';
import type { AdminContext } from '../http/context';
import { mediaType } from '../http/body';
import { shownTo } from '../http/private-material';
import { applyDocument, diffDocument, validateDocument } from './apply';
import { flattenDocument, parseDocumentText } from './document';
import { DeclarativeError } from './errors';
import { isEmptyDiff } from './diff';
import { documentKinds, exportDocument, hasTags, readAll, toDocumentEntity } from './export';
import type { EntityKind } from '../service/entity-kind';

/** The largest document `POST /config` reads (a 100,000-consumer configuration is some tens of MiB). */
export const MAX_DOCUMENT_BYTES = 512 * 1024 * 1024;

/** `POST /config` reads its own body: it may be YAML and is larger than any entity body. */
export function isConfigUpload(req: Request): boolean {
  return req.method === 'POST' && req.path.replace(/\/+$/, '') === '/config';
}

function flag(req: Request, name: string): boolean {
  const value = req.query[name];
  return value === '1' || value === 'true' || value === '';
}

function listParam(req: Request, name: string): string[] | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  const list = (Array.isArray(value) ? value.map(String) : [String(value)]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  return list.length ? list : undefined;
}

async function readText(req: Request): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_DOCUMENT_BYTES) throw new HttpError(413, 'Request size limit exceeded');
    chunks.push(chunk);
  }
  const buffer = Buffer.concat(chunks);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(buffer);
  if (text.includes('\u0000')) throw new HttpError(400, 'failed parsing declarative configuration: NUL byte in the document');
  return text;
}

const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']);

/**
 * The document of a `POST /config`: a JSON or YAML body that is the document itself, or Kong's form where the
 * document travels as a string in the `config` field (JSON body or form-urlencoded).
 */
async function documentOf(req: Request): Promise<Record<string, unknown>> {
  const type = mediaType(req);
  const text = await readText(req);
  if (text.trim() === '') throw new HttpError(400, 'expected a declarative configuration');
  if (type === 'application/x-www-form-urlencoded') {
    const config = new URLSearchParams(text).get('config');
    if (config === null) throw new HttpError(400, 'expected a declarative configuration');
    return parseDocumentText(config);
  }
  if (type !== null && type !== 'application/json' && !YAML_TYPES.has(type) && type !== 'text/plain') throw Errors.unsupportedMediaType();
  const doc = parseDocumentText(text);
  if (typeof doc.config === 'string' && doc._format_version === undefined) return parseDocumentText(doc.config);
  return doc;
}

function send(req: Request, res: Response, status: number, body: unknown): void {
  if (req.query.format === 'yaml') {
    res.status(status).type('application/yaml').send(toYaml(body, { lineWidth: 0 }));
  } else {
    res.status(status).json(body);
  }
}

/**
 * Declarative configuration on the admin API:
 *   GET  /config   the whole configuration as a Kong 3.0 document (`?format=yaml`, `?select_tags=a,b`)
 *   POST /config   replaces it with a document in one transaction (`?flatten_errors=1`, `?check_hash=1` → 304 when
 *                  nothing would change, `?dry_run=1` → the diff without writing, `?select_tags=a,b` → only the
 *                  entities carrying those tags are replaced; the document's entities get them)
 */
export function mountDeclarativeRoutes(ctx: AdminContext): void {
  const { entities, resources } = ctx;
  /** with select tags, the entities a document leaves alone (it may reference them) */
  const outsideTags = async (kinds: EntityKind[], tags: string[]) => {
    const all = await readAll(entities, kinds, entities.store.db);
    return new Map([...all].map(([name, list]) => [name, list.filter((e) => !hasTags(e, tags))]));
  };
  resources.add('/config', {
    get: async (req, res) => {
      // private material only to callers that may write it (decision 18): here, those that may POST /config
      const { document } = await exportDocument(entities, { selectTags: listParam(req, 'select_tags'), redact: (kind, e) => shownTo(res, kind, e) });
      send(req, res, 200, document);
    },
    post: async (req, res) => {
      const flatten = flag(req, 'flatten_errors');
      const selectTags = listParam(req, 'select_tags');
      try {
        const doc = await documentOf(req);
        const kinds = documentKinds(entities);
        const external = selectTags ? await outsideTags(kinds, selectTags) : undefined;
        const flat = flattenDocument(doc, kinds, { selectTags, external });
        const errors = validateDocument(flat);
        if (errors.length) throw new DeclarativeError(errors);
        if (flag(req, 'dry_run') || flag(req, 'check_hash')) {
          const diff = await diffDocument(entities, flat, selectTags);
          if (flag(req, 'check_hash') && isEmptyDiff(diff)) {
            res.status(304).end();
            return;
          }
          if (flag(req, 'dry_run')) {
            send(req, res, 200, diff);
            return;
          }
        }
        const written = await applyDocument(entities, flat, selectTags);
        const body: Record<string, unknown> = {};
        for (const kind of flat.kinds) {
          const list = written.get(kind.def.name) ?? [];
          if (list.length) body[kind.def.name] = list.map((e) => toDocumentEntity(kind, entities.present(kind, e)));
        }
        send(req, res, 201, body);
      } catch (err) {
        throw err instanceof DeclarativeError && flatten ? err.flattenedToo() : err;
      }
    },
  });
}
