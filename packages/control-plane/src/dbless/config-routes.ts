import type { Request, Response } from 'express';
import { stringify as toYaml } from 'yaml';
import { DbError, ErrorCode, HttpError } from '@gatehouse/core';
import { queryFlag } from '../http/query-flags';
import { shownTo } from '../http/private-material';
import type { ResourceRegistry } from '../http/resources';
import { documentOf } from '../declarative/routes';
import { DeclarativeError } from '../declarative/errors';
import { toDocumentEntity } from '../declarative/export';
import type { EntityKind } from '../service/entity-kind';
import type { StoredEntity } from '../store/entity-repository';
import { documentHash, stateDocument, type DeclarativeState } from './declarative-state';
import type { DeclarativeSource } from './declarative-source';
import { presentEntity } from './read-routes';

/** the request's document; a text that is no document is Kong's `invalid declarative configuration` (code 14) */
function parsedDocument(req: Request): Record<string, unknown> {
  try {
    return documentOf(req);
  } catch (err) {
    if (!(err instanceof HttpError) || !err.message.startsWith('failed parsing declarative configuration')) throw err;
    throw new DbError(ErrorCode.DECLARATIVE_CONFIG, `declarative config is invalid: {error="${err.message}"}`, { error: err.message });
  }
}

/** what `POST /config` answers: the loaded entities per family (families without any left out) */
function loadedBody(res: Response, state: DeclarativeState): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const kind of state.kinds) {
    const list = state.entities.get(kind.def.name) ?? [];
    if (list.length) body[kind.def.name] = list.map((e) => toDocumentEntity(kind, shownTo(res, kind, presentEntity(kind, e))));
  }
  return body;
}

/**
 * Kong's `/config` without a database:
 *   GET  /config   `{"config": "<the configuration as YAML>"}`
 *   POST /config   replaces the whole configuration (`?check_hash=1` → 304 when the document is the one loaded,
 *                  `?flatten_errors=1` → `flattened_errors` in the 400 body, as the Kong Ingress Controller reads them)
 */
export function mountDeclarativeConfigRoutes(resources: ResourceRegistry, source: DeclarativeSource): void {
  resources.add('/config', {
    get: (_req: Request, res: Response) => {
      const shown = (kind: EntityKind, e: StoredEntity) => shownTo(res, kind, presentEntity(kind, e));
      res.json({ config: toYaml(stateDocument(source.state, shown), { lineWidth: 0 }) });
    },
    post: async (req: Request, res: Response) => {
      const flatten = queryFlag(req, 'flatten_errors');
      const checkHash = queryFlag(req, 'check_hash');
      try {
        const doc = parsedDocument(req);
        if (checkHash && documentHash(doc) === source.state.hash) {
          res.status(304).end();
          return;
        }
        const applied = await source.replace(doc);
        res.status(201).json(loadedBody(res, applied.state));
      } catch (err) {
        throw err instanceof DeclarativeError && flatten ? err.flattenedToo() : err;
      }
    },
  });
}
