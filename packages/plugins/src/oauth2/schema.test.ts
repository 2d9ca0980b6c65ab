import { describe, expect, it } from '@jest/globals';
import { oauth2CredentialSchema, prepareOAuth2Credential } from './entities';
import { checkOAuth2Config, oauth2ConfigSchema } from './schema';
import { hashSecret, isHashedSecret, sameSecret, verifyHashedSecret } from './secret';

describe('oauth2 config', () => {
  it("fills Kong's defaults and generates a provision key", () => {
    const config = oauth2ConfigSchema.parse({ enable_client_credentials: true });
    expect(config).toMatchObject({
      scopes: null,
      mandatory_scope: false,
      token_expiration: 7200,
      enable_authorization_code: false,
      enable_implicit_grant: false,
      enable_password_grant: false,
      hide_credentials: false,
      accept_http_if_already_terminated: false,
      anonymous: null,
      global_credentials: false,
      auth_header_name: 'authorization',
      refresh_token_ttl: 1209600,
      reuse_refresh_token: false,
      pkce: 'lax',
      realm: null,
    });
    expect(config.provision_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(oauth2ConfigSchema.parse({}).provision_key).not.toBe(config.provision_key);
    expect(oauth2ConfigSchema.parse({ provision_key: 'mine' }).provision_key).toBe('mine');
  });

  it('demands at least one grant flow, in Kong words', () => {
    expect(checkOAuth2Config(oauth2ConfigSchema.parse({}))).toEqual({
      '@entity': ['at least one of these fields must be true: enable_authorization_code, enable_implicit_grant, enable_client_credentials, enable_password_grant'],
    });
    expect(checkOAuth2Config(oauth2ConfigSchema.parse({ enable_implicit_grant: true }))).toBeNull();
  });

  it('demands scopes when a scope is mandatory', () => {
    expect(checkOAuth2Config(oauth2ConfigSchema.parse({ enable_password_grant: true, mandatory_scope: true }))).toEqual({
      '@entity': ["failed conditional validation given value of field 'config.mandatory_scope'"],
      scopes: 'required field missing',
    });
    expect(checkOAuth2Config(oauth2ConfigSchema.parse({ enable_password_grant: true, mandatory_scope: true, scopes: ['read'] }))).toBeNull();
  });

  it('refuses unknown fields and a pkce mode that does not exist', () => {
    expect(oauth2ConfigSchema.safeParse({ pkce: 'sometimes' }).success).toBe(false);
    expect(oauth2ConfigSchema.safeParse({ bogus: 1 }).success).toBe(false);
    expect(oauth2ConfigSchema.safeParse({ refresh_token_ttl: -1 }).success).toBe(false);
  });
});

describe('oauth2 credentials', () => {
  const consumer = { id: '11111111-1111-4111-8111-111111111111' };

  it('validates redirect URIs: absolute, no fragment', () => {
    const issues = (uris: string[]) => {
      const parsed = oauth2CredentialSchema.safeParse({ consumer, name: 'app', redirect_uris: uris });
      return parsed.success ? [] : parsed.error.issues.map((i) => i.message);
    };
    expect(issues(['https://app.example/cb', 'myapp://callback'])).toEqual([]);
    expect(issues(['/relative'])).toEqual(["cannot parse '/relative'"]);
    expect(issues(['https://app.example/cb#frag'])).toEqual(["fragment not allowed in 'https://app.example/cb#frag'"]);
  });

  it('defaults client_type and hash_secret', () => {
    const parsed = oauth2CredentialSchema.parse({ consumer, name: 'app' });
    expect(parsed).toMatchObject({ client_type: 'confidential', hash_secret: false, redirect_uris: null, tags: null });
    expect(oauth2CredentialSchema.safeParse({ consumer, name: 'app', client_type: 'spa' }).success).toBe(false);
    expect(oauth2CredentialSchema.safeParse({ consumer }).success).toBe(false);
  });

  it('generates client_id and client_secret, keeping given ones', async () => {
    const generated = await prepareOAuth2Credential({ name: 'app', hash_secret: false });
    expect(generated.client_id).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(generated.client_secret).toMatch(/^[A-Za-z0-9]{32}$/);
    const given = await prepareOAuth2Credential({ name: 'app', client_id: 'id-1', client_secret: 'secret-1', hash_secret: false });
    expect(given).toMatchObject({ client_id: 'id-1', client_secret: 'secret-1' });
  });

  it('stores only a hash with hash_secret, and keeps a hash that comes back', async () => {
    const hashed = await prepareOAuth2Credential({ name: 'app', client_secret: 'secret-1', hash_secret: true });
    expect(hashed.client_secret).not.toBe('secret-1');
    expect(isHashedSecret(hashed.client_secret)).toBe(true);
    await expect(verifyHashedSecret('secret-1', hashed.client_secret as string)).resolves.toBe(true);
    await expect(verifyHashedSecret('secret-2', hashed.client_secret as string)).resolves.toBe(false);
    const again = await prepareOAuth2Credential({ ...hashed });
    expect(again.client_secret).toBe(hashed.client_secret);
  });
});

describe('client secrets', () => {
  it('salts every hash', async () => {
    const [a, b] = await Promise.all([hashSecret('same'), hashSecret('same')]);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^\$scrypt\$ln=14,r=8,p=1\$/);
  });

  it('verifies bcrypt hashes made elsewhere', async () => {
    const { hash } = await import('bcryptjs');
    const stored = await hash('imported', 4);
    expect(isHashedSecret(stored)).toBe(true);
    await expect(verifyHashedSecret('imported', stored)).resolves.toBe(true);
    await expect(verifyHashedSecret('other', stored)).resolves.toBe(false);
  });

  it('compares plain secrets exactly', () => {
    expect(sameSecret('abc', 'abc')).toBe(true);
    expect(sameSecret('abc', 'abd')).toBe(false);
    expect(sameSecret('abc', 'abcd')).toBe(false);
    expect(isHashedSecret('plain')).toBe(false);
  });
});
