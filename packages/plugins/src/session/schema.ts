import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** Kong's default secret: 32 random bytes, base64 without `/`, `+` or `=` (a new one for every configuration). */
export function randomSecret(): string {
  return randomBytes(32)
    .toString('base64')
    .replace(/[/+=]/g, () => String.fromCharCode(97 + Math.floor(Math.random() * 26)));
}

/** cookie names are HTTP tokens; cookie attributes may not hold control characters or `;` */
const cookieName = () => z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'invalid cookie name');
const cookieAttribute = () => z.string().refine((value) => ![...value].some((c) => c < ' ' || c === '\x7f' || c === ';'), 'invalid cookie attribute: no control characters or ;');

const SESSION_HEADERS = ['id', 'audience', 'subject', 'timeout', 'idling-timeout', 'rolling-timeout', 'absolute-timeout'] as const;
export type SessionHeader = (typeof SESSION_HEADERS)[number];

const headerSet = () =>
  z
    .array(z.enum(SESSION_HEADERS))
    .refine((items) => new Set(items).size === items.length, 'elements must be unique')
    .nullable()
    .default(null);

/** Kong 3.9 `session`: the cookie, its timeouts, what is told to the upstream and client, and how to log out. */
export const sessionConfigSchema = z
  .object({
    secret: z.string().default(randomSecret),
    storage: z.enum(['cookie', 'kong']).default('cookie'),
    audience: z.string().default('default'),
    idling_timeout: z.number().default(900),
    rolling_timeout: z.number().default(3600),
    absolute_timeout: z.number().default(86400),
    stale_ttl: z.number().default(10),
    cookie_name: cookieName().default('session'),
    cookie_path: cookieAttribute().default('/'),
    cookie_domain: cookieAttribute().nullable().default(null),
    cookie_same_site: z.enum(['Strict', 'Lax', 'None', 'Default']).default('Strict'),
    cookie_http_only: z.boolean().default(true),
    cookie_secure: z.boolean().default(true),
    remember: z.boolean().default(false),
    remember_cookie_name: cookieName().default('remember'),
    remember_rolling_timeout: z.number().default(604800),
    remember_absolute_timeout: z.number().default(2592000),
    response_headers: headerSet(),
    request_headers: headerSet(),
    read_body_for_logout: z.boolean().default(false),
    logout_methods: z
      .array(z.enum(['GET', 'POST', 'DELETE']))
      .refine((items) => new Set(items).size === items.length, 'elements must be unique')
      .nullable()
      .default(['POST', 'DELETE']),
    logout_query_arg: z.string().nullable().default('session_logout'),
    logout_post_arg: z.string().nullable().default('session_logout'),
  })
  .strict();

export type SessionConfig = z.infer<typeof sessionConfigSchema>;
