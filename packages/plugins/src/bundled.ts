import type { PluginDefinition } from './contract';
import { basicAuth } from './basic-auth';
import { keyAuth } from './key-auth';
import { requestTermination } from './request-termination';
import { jweDecrypt } from './jwe-decrypt';
import { jwt } from './jwt';
import { hmacAuth } from './hmac-auth';
import { acl } from './acl';
import { rateLimiting } from './rate-limiting';
import { ldapAuth } from './ldap-auth';
import { oauth2 } from './oauth2';
import { cors } from './cors';
import { ipRestriction } from './ip-restriction';
import { requestSizeLimiting } from './request-size-limiting';
import { requestTransformer } from './request-transformer';
import { responseTransformer } from './response-transformer';
import { proxyCache } from './proxy-cache';
import { prometheus } from './prometheus';
import { correlationId } from './correlation-id';
import { fileLog } from './file-log';
import { httpLog } from './http-log';
import { redirect } from './redirect';
import { botDetection } from './bot-detection';
import { standardWebhooks } from './standard-webhooks';
import { responseRateLimiting } from './response-ratelimiting';
import { session } from './session';
import { acme } from './acme';

/** Every bundled plugin, one line each. */
export const bundledPlugins: PluginDefinition[] = [
  keyAuth as PluginDefinition,
  basicAuth as PluginDefinition,
  requestTermination as PluginDefinition,
  jweDecrypt as PluginDefinition,
  jwt as PluginDefinition,
  hmacAuth as PluginDefinition,
  acl as PluginDefinition,
  rateLimiting as PluginDefinition,
  ldapAuth as PluginDefinition,
  oauth2 as PluginDefinition,
  cors as PluginDefinition,
  ipRestriction as PluginDefinition,
  requestSizeLimiting as PluginDefinition,
  requestTransformer as PluginDefinition,
  responseTransformer as PluginDefinition,
  proxyCache as PluginDefinition,
  prometheus as PluginDefinition,
  correlationId as PluginDefinition,
  fileLog as PluginDefinition,
  httpLog as PluginDefinition,
  redirect as PluginDefinition,
  botDetection as PluginDefinition,
  standardWebhooks as PluginDefinition,
  responseRateLimiting as PluginDefinition,
  session as PluginDefinition,
  acme as PluginDefinition,
];

const byName = new Map(bundledPlugins.map((p) => [p.name, p]));
export function findPlugin(name: string): PluginDefinition | undefined {
  return byName.get(name);
}
