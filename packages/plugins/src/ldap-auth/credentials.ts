/** Username and password sent by the client. */
export interface GivenCredentials {
  username: string;
  password: string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const schemePatterns = new Map<string, RegExp>();

/** `^\s*<header_type>\s+<base64>`, the scheme compared without regard to case (one compiled pattern per scheme). */
function schemePattern(headerType: string): RegExp {
  let pattern = schemePatterns.get(headerType);
  if (pattern === undefined) {
    pattern = new RegExp(`^\\s*${escapeRegExp(headerType)}\\s+(\\S+)\\s*$`, 'i');
    schemePatterns.set(headerType, pattern);
  }
  return pattern;
}

/**
 * `<header_type> base64(user:pass)`. The username is everything before the first `:`; neither part may be empty: an
 * LDAP simple bind with an empty password is an unauthenticated bind, which many servers accept for any name.
 */
export function parseLdapAuthorization(header: string | undefined, headerType: string): GivenCredentials | null {
  if (header === undefined) return null;
  const m = schemePattern(headerType).exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * RFC 4514 escaping of an attribute value in a DN, so a username such as `x,ou=admins` stays one value of the
 * configured attribute instead of naming another entry.
 */
export function escapeDnValue(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/^[ #]/, (c) => `\\${c}`)
    .replace(/ $/, '\\ ')
    .replace(/\0/g, '\\00');
}

/** The DN a user binds as: `<attribute>=<username>,<base_dn>`. */
export function bindDn(attribute: string, username: string, baseDn: string): string {
  return `${attribute}=${escapeDnValue(username)},${baseDn}`;
}
