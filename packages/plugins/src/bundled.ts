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
import { openTelemetry } from './opentelemetry';
import { zipkin } from './zipkin';
import { aiProxy } from './ai-proxy';
import { aiPromptDecorator } from './ai-prompt-decorator';
import { aiPromptGuard } from './ai-prompt-guard';
import { aiPromptTemplate } from './ai-prompt-template';
import { aiRequestTransformer } from './ai-request-transformer';
import { aiResponseTransformer } from './ai-response-transformer';
import { tcpLog } from './tcp-log';
import { udpLog } from './udp-log';
import { syslog } from './syslog';
import { loggly } from './loggly';
import { statsd } from './statsd';
import { datadog } from './datadog';
import { preFunction } from './pre-function';
import { awsLambda } from './aws-lambda';
import { azureFunctions } from './azure-functions';
import { postFunction } from './post-function';
import { redirect } from './redirect';
import { botDetection } from './bot-detection';
import { standardWebhooks } from './standard-webhooks';
import { responseRateLimiting } from './response-ratelimiting';
import { session } from './session';
import { acme } from './acme';
import { grpcWeb } from './grpc-web';
import { grpcGateway } from './grpc-gateway';

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
  openTelemetry as PluginDefinition,
  zipkin as PluginDefinition,
  aiProxy as PluginDefinition,
  aiPromptDecorator as PluginDefinition,
  aiPromptGuard as PluginDefinition,
  aiPromptTemplate as PluginDefinition,
  aiRequestTransformer as PluginDefinition,
  aiResponseTransformer as PluginDefinition,
  tcpLog as PluginDefinition,
  udpLog as PluginDefinition,
  syslog as PluginDefinition,
  loggly as PluginDefinition,
  statsd as PluginDefinition,
  datadog as PluginDefinition,
  preFunction as PluginDefinition,
  awsLambda as PluginDefinition,
  azureFunctions as PluginDefinition,
  postFunction as PluginDefinition,
  redirect as PluginDefinition,
  botDetection as PluginDefinition,
  standardWebhooks as PluginDefinition,
  responseRateLimiting as PluginDefinition,
  session as PluginDefinition,
  acme as PluginDefinition,
  grpcWeb as PluginDefinition,
  grpcGateway as PluginDefinition,
];

const byName = new Map(bundledPlugins.map((p) => [p.name, p]));
export function findPlugin(name: string): PluginDefinition | undefined {
  return byName.get(name);
}

/**
 * Adds a plugin loaded from `GATEHOUSE_PLUGINS` (a custom plugin) to the catalogue both planes read; refused when its
 * name is already taken. Call before the planes start.
 */
export function registerPlugin(def: PluginDefinition): void {
  if (byName.has(def.name)) throw new Error(`plugin '${def.name}' is already loaded`);
  bundledPlugins.push(def);
  byName.set(def.name, def);
}
