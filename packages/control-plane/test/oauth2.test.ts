import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { isHashedSecret, MemoryTokenStore, oauth2TokenDigest as digest, verifyHashedSecret, type OAuth2Token } from '@gatehouse/plugins';
import { createAdminApp, oauth2TokensExtension, openDatabase, type AdminApp, type Database } from '../src';

// database start-up (PGlite's first initdb) can take longer than jest's default 5 s
jest.setTimeout(60_000);

/** The oauth2 admin surface: credentials at Kong's paths, plugin config checks, and /oauth2_tokens over the token store. */
describe('oauth2 admin API', () => {
  let database: Database;
  let app: AdminApp;
  const store = new MemoryTokenStore();
  let consumerId: string;

  beforeAll(async () => {
    database = await openDatabase({});
    app = createAdminApp({ database, extensions: [oauth2TokensExtension(store)] });
    consumerId = (await request(app).post('/consumers').send({ username: 'alice' }).expect(201)).body.id;
  });

  afterAll(async () => {
    await database?.close();
  });

  describe('credentials', () => {
    it('creates an application with generated client_id and client_secret, found by id or client_id', async () => {
      const created = await request(app).post('/consumers/alice/oauth2').send({ name: 'app', redirect_uris: ['https://app.example/cb'] }).expect(201);
      expect(created.body).toMatchObject({
        name: 'app',
        consumer: { id: consumerId },
        client_id: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
        client_secret: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
        hash_secret: false,
        client_type: 'confidential',
        redirect_uris: ['https://app.example/cb'],
      });
      const byKey = await request(app).get(`/oauth2/${created.body.client_id}`).expect(200);
      expect(byKey.body.id).toBe(created.body.id);
      await request(app).get(`/consumers/alice/oauth2/${created.body.id}`).expect(200);
      const listed = await request(app).get('/consumers/alice/oauth2').expect(200);
      expect(listed.body.data.map((c: { id: string }) => c.id)).toContain(created.body.id);
    });

    it('refuses a relative redirect URI, one with a fragment, and a missing name', async () => {
      const relative = await request(app).post('/consumers/alice/oauth2').send({ name: 'x', redirect_uris: ['/cb'] }).expect(400);
      expect(relative.body.code).toBe(2);
      expect(JSON.stringify(relative.body.fields)).toContain("cannot parse '/cb'");
      const fragment = await request(app).post('/oauth2').send({ name: 'x', consumer: { id: consumerId }, redirect_uris: ['https://a.example/#x'] }).expect(400);
      expect(JSON.stringify(fragment.body.fields)).toContain("fragment not allowed in 'https://a.example/#x'");
      const nameless = await request(app).post('/consumers/alice/oauth2').send({}).expect(400);
      expect(nameless.body.fields).toMatchObject({ name: 'required field missing' });
    });

    it('with hash_secret keeps only a hash of the secret, on create and after', async () => {
      const created = await request(app).post('/consumers/alice/oauth2').send({ name: 'hashed', client_secret: 'plain-secret', hash_secret: true }).expect(201);
      expect(created.body.client_secret).not.toBe('plain-secret');
      expect(isHashedSecret(created.body.client_secret)).toBe(true);
      await expect(verifyHashedSecret('plain-secret', created.body.client_secret)).resolves.toBe(true);
      const patched = await request(app).patch(`/oauth2/${created.body.id}`).send({ name: 'renamed' }).expect(200);
      expect(patched.body.client_secret).toBe(created.body.client_secret);
      const read = await request(app).get(`/oauth2/${created.body.client_id}`).expect(200);
      expect(JSON.stringify(read.body)).not.toContain('plain-secret');
    });

    it('refuses a duplicate client_id with 409', async () => {
      await request(app).post('/consumers/alice/oauth2').send({ name: 'one', client_id: 'fixed-id' }).expect(201);
      const dup = await request(app).post('/consumers/alice/oauth2').send({ name: 'two', client_id: 'fixed-id' }).expect(409);
      expect(dup.body.code).toBe(5);
    });

    it('deletes the applications with their consumer', async () => {
      const bob = (await request(app).post('/consumers').send({ username: 'bob' }).expect(201)).body;
      const cred = (await request(app).post('/consumers/bob/oauth2').send({ name: 'bob-app' }).expect(201)).body;
      await request(app).delete(`/consumers/${bob.id}`).expect(204);
      await request(app).get(`/oauth2/${cred.id}`).expect(404);
    });
  });

  describe('plugin configuration', () => {
    it('demands a grant flow, and generates a provision key that updates keep', async () => {
      const refused = await request(app).post('/plugins').send({ name: 'oauth2', config: {} }).expect(400);
      expect(refused.body.fields['@entity']).toEqual([
        'at least one of these fields must be true: enable_authorization_code, enable_implicit_grant, enable_client_credentials, enable_password_grant',
      ]);
      const created = await request(app).post('/plugins').send({ name: 'oauth2', config: { enable_client_credentials: true } }).expect(201);
      expect(created.body.config.provision_key).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(created.body.config).toMatchObject({ token_expiration: 7200, refresh_token_ttl: 1209600, pkce: 'lax', auth_header_name: 'authorization' });
      const patched = await request(app).patch(`/plugins/${created.body.id}`).send({ config: { token_expiration: 60 } }).expect(200);
      expect(patched.body.config.provision_key).toBe(created.body.config.provision_key);
      const scoped = await request(app).post('/plugins').send({ name: 'oauth2', consumer: { id: consumerId }, config: { enable_password_grant: true } }).expect(400);
      expect(scoped.body.fields).toMatchObject({ consumer: 'value must be null' });
    });
  });

  describe('/oauth2_tokens', () => {
    const saved: OAuth2Token[] = [];

    beforeAll(async () => {
      const now = Date.now();
      for (let i = 0; i < 3; i++) {
        const token: OAuth2Token = {
          id: randomUUID(),
          created_at: Math.floor(now / 1000),
          credential: { id: randomUUID() },
          service: null,
          token_type: 'bearer',
          expires_in: 7200,
          access_token_digest: digest(`access-${i}`),
          refresh_token_digest: digest(`refresh-${i}`),
          authenticated_userid: 'u',
          scope: 'read',
          issued_at_ms: now,
          refresh_expires_at_ms: now + (i + 1) * 60_000 * 1000,
          removed_at_ms: now + (i + 1) * 60_000 * 1000,
        };
        saved.push(token);
        await store.saveToken(token);
      }
    });

    it("lists the store's tokens in Kong's shape, page by page, with the digests of the tokens it keeps in their place", async () => {
      const first = await request(app).get('/oauth2_tokens?size=2').expect(200);
      expect(first.body.data).toHaveLength(2);
      expect(first.body.data[0]).toEqual({
        id: saved[0]!.id,
        created_at: saved[0]!.created_at,
        credential: saved[0]!.credential,
        service: null,
        token_type: 'bearer',
        expires_in: 7200,
        access_token: `sha256:${digest('access-0')}`,
        refresh_token: `sha256:${digest('refresh-0')}`,
        authenticated_userid: 'u',
        scope: 'read',
      });
      expect(first.body.next).toBe(`/oauth2_tokens?offset=${encodeURIComponent(first.body.offset)}&size=2`);
      const second = await request(app).get(first.body.next).expect(200);
      expect(second.body.data.map((t: { id: string }) => t.id)).toEqual([saved[2]!.id]);
      expect(second.body.next).toBeNull();
      expect(second.body.offset).toBeUndefined();
    });

    it('refuses a bad offset or size', async () => {
      expect((await request(app).get('/oauth2_tokens?offset=bogus').expect(400)).body.name).toBe('invalid offset');
      await request(app).get('/oauth2_tokens?size=0').expect(400);
    });

    it('reads one token by id, by access token or by the digest it shows, and revokes it', async () => {
      expect((await request(app).get(`/oauth2_tokens/${saved[1]!.id}`).expect(200)).body.access_token).toBe(`sha256:${digest('access-1')}`);
      expect((await request(app).get('/oauth2_tokens/access-1').expect(200)).body.id).toBe(saved[1]!.id);
      expect((await request(app).get(`/oauth2_tokens/sha256:${digest('access-1')}`).expect(200)).body.id).toBe(saved[1]!.id);
      await request(app).delete(`/oauth2_tokens/${saved[1]!.id}`).expect(204);
      expect(await store.findByAccessDigest(digest('access-1'))).toBeNull();
      expect(await store.findByRefreshDigest(digest('refresh-1'))).toBeNull();
      await request(app).get(`/oauth2_tokens/${saved[1]!.id}`).expect(404);
      await request(app).delete(`/oauth2_tokens/${saved[1]!.id}`).expect(204);
      await request(app).delete('/oauth2_tokens/access-2').expect(204);
      expect(await store.findById(saved[2]!.id)).toBeNull();
    });

    it('answers other methods with 405', async () => {
      await request(app).put('/oauth2_tokens/x').send({}).expect(405);
    });
  });
});
