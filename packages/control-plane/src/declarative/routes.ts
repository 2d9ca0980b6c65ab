import type { Request, Response } from 'express';
import { stringify as toYaml } from 'yaml';
import { Errors, HttpError } from '@gatehouse/core';
import type { AdminContext } from '../http/context';
import { mediaType } from '../http/body';
import { queryFlag } from '../http/query-flags';
import { shownTo } from '../http/private-material';
import { applyDocument, diffDocument, validateDocumentInSlices } from './apply';
import { flattenSteps, parseDocumentSteps, type FlatDocument, type FlattenOptions } from './document';
import { nextTurn, runInSlices, SliceCounter, type Steps } from './slices';
import { DeclarativeError } from './errors';
import { isEmptyDiff } from './diff';
import { documentKinds, exportDocument, hasTags, readAll, toDocumentEntity } from './export';
import type { EntityKind } from '../service/entity-kind';
import type { StoredEntity } from '../store/entity-repository';

/** `POST /config` decodes its own body: it may be YAML and is larger than any entity body (GATEHOUSE_ADMIN_MAX_CONFIG_BODY). */
export function isConfigUpload(req: Request): boolean {
  return req.method === 'POST' && req.path.replace(/\/+$/, '') === '/config';
}

function listParam(req: Request, name: string): string[] | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  const list = (Array.isArray(value) ? value.map(String) : [String(value)]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  return list.length ? list : undefined;
}

/** the body the admin request guard read, within GATEHOUSE_ADMIN_MAX_CONFIG_BODY */
function bodyText(req: Request): string {
  const buffer: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  // decoded once: the raw bytes (up to the bound, 64 MiB) are not kept for the rest of the request
  req.body = undefined;
  const text = new TextDecoder('utf-8', { fatal: false }).decode(buffer);
  if (text.includes('\u0000')) throw new HttpError(400, 'failed parsing declarative configuration: NUL byte in the document');
  return text;
}

const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']);

/**
 * The document of a `POST /config`: a JSON or YAML body that is the document itself, or Kong's form where the
 * document travels as a string in the `config` field (JSON body or form-urlencoded). JSON is read in slices.
 */
function* documentSteps(req: Request): Steps<Record<string, unknown>> {
  const type = mediaType(req);
  const text = bodyText(req);
  if (text.trim() === '') throw new HttpError(400, 'expected a declarative configuration');
  if (type === 'application/x-www-form-urlencoded') {
    const config = new URLSearchParams(text).get('config');
    if (config === null) throw new HttpError(400, 'expected a declarative configuration');
    return yield* parseDocumentSteps(config);
  }
  if (type !== null && type !== 'application/json' && !YAML_TYPES.has(type) && type !== 'text/plain') throw Errors.unsupportedMediaType();
  const doc = yield* parseDocumentSteps(text);
  if (typeof doc.config === 'string' && doc._format_version === undefined) return yield* parseDocumentSteps(doc.config);
  return doc;
}

/** the request's document, read in one go (a DB-less node's `POST /config` keeps the whole document) */
export function documentOf(req: Request): Record<string, unknown> {
  const steps = documentSteps(req);
  for (let step = steps.next(); ; step = steps.next()) if (step.done === true) return step.value;
}

/** the request's document, flattened; the parsed document itself is not kept past this */
function flattenRequest(req: Request, kinds: EntityKind[], opts: FlattenOptions): Promise<FlatDocument> {
  return runInSlices(
    (function* () {
      return yield* flattenSteps(yield* documentSteps(req), kinds, opts);
    })(),
  );
}

function send(req: Request, res: Response, status: number, body: unknown): void {
  if (req.query.format === 'yaml') {
    res.status(status).type('application/yaml').send(toYaml(body, { lineWidth: 0 }));
  } else {
    res.status(status).json(body);
  }
}

type Shown = (kind: EntityKind, entity: StoredEntity) => Record<string, unknown>;

/** the answer to a write: the written entities per kind, as documents (kinds without any are left out) */
async function writtenBody(kinds: EntityKind[], written: Map<string, StoredEntity[]>, shown: Shown): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  const slice = new SliceCounter();
  for (const kind of kinds) {
    const list = written.get(kind.def.name) ?? [];
    if (!list.length) continue;
    const items: Array<Record<string, unknown>> = [];
    for (const e of list) {
      if (slice.full()) await nextTurn();
      items.push(shown(kind, e));
    }
    body[kind.def.name] = items;
  }
  return body;
}

/** characters of the answer handed to the socket at once */
const ANSWER_PIECE_CHARS = 256 * 1024;

/**
 * Writes a piece of an answer, then gives the event loop a turn; when the socket's buffer is full, waits until it
 * drained: a client reading slowly does not make the whole answer pile up in memory. False once the client is gone.
 */
async function writePiece(res: Response, piece: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(piece)) {
    await nextTurn();
    return true;
  }
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
  return !res.destroyed;
}

/**
 * The same answer as JSON, the very text `res.json(writtenBody(...))` gives, written out in pieces as the socket
 * takes them: for 100,000 entities neither the whole text nor the whole document list exists at once, and no single
 * step holds up the event loop. Each entity is let go once written out.
 */
async function sendJsonInSlices(res: Response, status: number, kinds: EntityKind[], written: Map<string, StoredEntity[]>, shown: Shown): Promise<void> {
  res.status(status).type('application/json');
  let chunk = '{';
  let firstKind = true;
  const slice = new SliceCounter();
  for (const kind of kinds) {
    const list = written.get(kind.def.name) ?? [];
    written.delete(kind.def.name);
    if (!list.length) continue;
    chunk += `${firstKind ? '' : ','}${JSON.stringify(kind.def.name)}:[`;
    firstKind = false;
    // taken from the end of the reversed list: in order, and each let go once written
    list.reverse();
    for (let first = true; list.length; first = false) {
      chunk += (first ? '' : ',') + JSON.stringify(shown(kind, list.pop()!));
      if (chunk.length >= ANSWER_PIECE_CHARS || slice.full()) {
        if (!(await writePiece(res, chunk))) return;
        chunk = '';
      }
    }
    chunk += ']';
  }
  res.end(chunk + '}');
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
      const flatten = queryFlag(req, 'flatten_errors');
      const dryRun = queryFlag(req, 'dry_run');
      const checkHash = queryFlag(req, 'check_hash');
      const selectTags = listParam(req, 'select_tags');
      try {
        const kinds = documentKinds(entities);
        const external = selectTags ? await outsideTags(kinds, selectTags) : undefined;
        const flat = await flattenRequest(req, kinds, { selectTags, external });
        if (dryRun || checkHash) {
          // a write validates the document itself (applyDocument), before it starts the transaction
          const errors = await validateDocumentInSlices(flat);
          if (errors.length) throw new DeclarativeError(errors);
          const diff = await diffDocument(entities, flat, selectTags);
          if (checkHash && isEmptyDiff(diff)) {
            res.status(304).end();
            return;
          }
          if (dryRun) {
            send(req, res, 200, diff);
            return;
          }
        }
        const written = await applyDocument(entities, flat, selectTags);
        const shown = (kind: EntityKind, e: StoredEntity) => toDocumentEntity(kind, entities.present(kind, e));
        if (req.query.format === 'yaml') send(req, res, 201, await writtenBody(flat.kinds, written, shown));
        else await sendJsonInSlices(res, 201, flat.kinds, written, shown);
      } catch (err) {
        throw err instanceof DeclarativeError && flatten ? err.flattenedToo() : err;
      }
    },
  });
}
