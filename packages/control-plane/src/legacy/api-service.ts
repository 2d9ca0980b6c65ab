import { randomUUID } from 'node:crypto';
import { coerceInput, Errors, schemaViolation, validateWith } from '@gatehouse/core';
import type { EntityService, WriteInput } from '../service/entity-service';
import { checkOverriddenFields } from '../service/overridden-fields';
import { isUuid } from '../service/references';
import type { Executor, StoredEntity } from '../store/entity-repository';
import { apiInputSchema, apis, type ApiInput } from './api-entity';

const LIST_FIELDS = ['hosts', 'uris', 'methods'] as const;

/** 0.x accepted comma-separated strings for list fields, in forms and in JSON. */
function splitLists(body: Record<string, unknown>): Record<string, unknown> {
  const out = { ...body };
  for (const field of LIST_FIELDS) {
    const value = out[field];
    if (typeof value === 'string') out[field] = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
    else if (Array.isArray(value)) out[field] = value.flatMap((v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter((s) => s !== '') : [v]));
  }
  // uris lose a trailing slash, as in 0.x ("/foo/" → "/foo", "/" stays)
  if (Array.isArray(out.uris)) out.uris = out.uris.map((u) => (typeof u === 'string' && u.length > 1 ? u.replace(/\/+$/, '') || '/' : u));
  return out;
}

/** The API as 0.x served it: its own fields, null lists left out. */
export function presentApi(stored: StoredEntity): Record<string, unknown> {
  const { service: _service, route: _route, ...api } = stored;
  for (const field of LIST_FIELDS) if (api[field] == null) delete api[field];
  return api;
}

function serviceBody(api: ApiInput): Record<string, unknown> {
  return {
    name: api.name,
    url: api.upstream_url,
    retries: api.retries,
    connect_timeout: api.upstream_connect_timeout,
    write_timeout: api.upstream_send_timeout,
    read_timeout: api.upstream_read_timeout,
  };
}

function routeBody(api: ApiInput, serviceId: string): Record<string, unknown> {
  return {
    name: api.name,
    paths: api.uris,
    hosts: api.hosts,
    methods: api.methods,
    strip_path: api.strip_uri,
    preserve_host: api.preserve_host,
    protocols: api.https_only ? ['https'] : ['http', 'https'],
    service: { id: serviceId },
  };
}

/** Legacy API writes: the API row and its service + route change together, in one transaction. */
export class ApiService {
  constructor(private readonly entities: EntityService) {}

  private get repo() {
    return this.entities.store.repo(apis.name);
  }

  async find(ref: string, ex: Executor = this.entities.store.db): Promise<StoredEntity | null> {
    return isUuid(ref) ? this.repo.findById(ex, ref) : this.repo.findByField(ex, 'name', ref);
  }

  /** the API or a 404 */
  async get(ref: string): Promise<StoredEntity> {
    const api = await this.find(ref);
    if (!api) throw Errors.notFound();
    return api;
  }

  private validate(candidate: Record<string, unknown>): ApiInput {
    const api = validateWith(apiInputSchema, candidate) as ApiInput;
    const errors = apis.check?.(api);
    if (errors) throw schemaViolation(errors);
    return api;
  }

  private read(input: WriteInput): Record<string, unknown> {
    const body = input.form ? (coerceInput(apiInputSchema, input.body) as Record<string, unknown>) : input.body;
    return splitLists(body);
  }

  async create(input: WriteInput): Promise<StoredEntity> {
    return this.entities.store.write((trx) => this.createIn(trx, this.read(input)));
  }

  private async createIn(trx: Executor, body: Record<string, unknown>): Promise<StoredEntity> {
    const api = this.validate({ ...body, id: body.id ?? randomUUID(), created_at: body.created_at ?? Math.floor(Date.now() / 1000) });
    const service = await this.entities.createIn(trx, this.entities.kind('services'), { body: serviceBody(api) });
    const route = await this.entities.createIn(trx, this.entities.kind('routes'), { body: routeBody(api, service.id) });
    const stored = { ...api, service: { id: service.id }, route: { id: route.id } } as StoredEntity;
    await this.repo.insert(trx, stored);
    return stored;
  }

  /** PATCH (merge) or full replacement of an existing API */
  async update(existing: StoredEntity, input: WriteInput, replace: boolean): Promise<StoredEntity> {
    return this.entities.store.write((trx) => this.updateIn(trx, existing, this.read(input), replace));
  }

  private async updateIn(trx: Executor, existing: StoredEntity, body: Record<string, unknown>, replace: boolean): Promise<StoredEntity> {
    checkOverriddenFields(apiInputSchema, body, ['id', 'created_at']);
    const base = replace ? {} : presentApi(existing);
    const api = this.validate({ ...base, ...body, id: existing.id, created_at: existing.created_at });
    const serviceId = (existing.service as { id: string }).id;
    const routeId = (existing.route as { id: string }).id;
    await this.entities.upsertIn(trx, this.entities.kind('services'), serviceId, { body: serviceBody(api) });
    await this.entities.upsertIn(trx, this.entities.kind('routes'), routeId, { body: routeBody(api, serviceId) });
    const stored = { ...api, service: { id: serviceId }, route: { id: routeId } } as StoredEntity;
    await this.repo.replace(trx, stored);
    return stored;
  }

  /** 0.x `PUT /apis`: with an id of an existing API a full update (200), otherwise a creation (201) */
  async put(input: WriteInput): Promise<{ api: StoredEntity; created: boolean }> {
    const body = this.read(input);
    return this.entities.store.write(async (trx) => {
      const existing = isUuid(body.id) ? await this.repo.findById(trx, body.id) : null;
      if (existing) return { api: await this.updateIn(trx, existing, body, true), created: false };
      return { api: await this.createIn(trx, body), created: true };
    });
  }

  /** removes the API, its route and its service (with the plugins on them) */
  async remove(existing: StoredEntity): Promise<void> {
    await this.entities.store.write(async (trx) => {
      await this.repo.delete(trx, existing.id);
      await this.entities.store.repo('routes').delete(trx, (existing.route as { id: string }).id);
      await this.entities.store.repo('services').delete(trx, (existing.service as { id: string }).id);
    });
  }
}
