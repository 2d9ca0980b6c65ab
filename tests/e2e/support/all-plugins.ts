// A declarative file (Kong's format 3.0) that enables every bundled plugin with a realistic configuration, each on a
// service and route of its own (`/p-<plugin>`), as a Kong user's kong.yml would.

/** A realistic configuration per plugin; the receivers named here need not exist for the file to load. */
export const PLUGIN_CONFIGS: Record<string, Record<string, unknown>> = {
  'key-auth': { key_names: ['apikey'] },
  'basic-auth': { hide_credentials: true },
  jwt: { claims_to_verify: ['exp'] },
  'hmac-auth': { enforce_headers: ['date'] },
  oauth2: { scopes: ['read'], mandatory_scope: true, enable_client_credentials: true },
  'ldap-auth': { ldap_host: 'ldap.internal', ldap_port: 389, base_dn: 'dc=example,dc=org', attribute: 'uid' },
  acl: { allow: ['gold'] },
  'ip-restriction': { allow: ['10.0.0.0/8', '127.0.0.1'] },
  'bot-detection': { deny: ['badbot'] },
  cors: { origins: ['https://app.example.org'], credentials: true },
  'rate-limiting': { minute: 1000, policy: 'local' },
  'response-ratelimiting': { limits: { video: { minute: 10 } } },
  'request-size-limiting': { allowed_payload_size: 10 },
  'request-termination': { status_code: 418, message: 'so long' },
  'request-transformer': { add: { headers: ['x-added:1'] } },
  'response-transformer': { add: { headers: ['x-out:1'] } },
  'correlation-id': { header_name: 'X-Request-Trace', generator: 'uuid' },
  'proxy-cache': { strategy: 'memory', content_type: ['application/json'] },
  prometheus: { per_consumer: true },
  'file-log': { path: '/tmp/gatehouse-all-plugins.log' },
  'http-log': { http_endpoint: 'http://logs.internal:9000/in' },
  'tcp-log': { host: 'logs.internal', port: 5000 },
  'udp-log': { host: 'logs.internal', port: 5001 },
  syslog: { log_level: 'info' },
  loggly: { key: 'loggly-token' },
  statsd: { host: 'statsd.internal', port: 8125 },
  datadog: { host: 'dogstatsd.internal', port: 8125 },
  opentelemetry: { traces_endpoint: 'http://otel.internal:4318/v1/traces', resource_attributes: { 'service.name': 'edge' } },
  zipkin: { http_endpoint: 'http://zipkin.internal:9411/api/v2/spans', sample_ratio: 0.5 },
  session: { secret: 'a-session-secret-long-enough', cookie_name: 'edge_session' },
  acme: { account_email: 'ops@example.org', domains: ['example.org'], tos_accepted: true },
  redirect: { location: 'https://example.org/new', status_code: 301 },
  'standard-webhooks': { secret_v1: 'whsec_c2VjcmV0' },
  'pre-function': { access: ['kong.service.request.set_header("x-pre", "1")'] },
  'post-function': { log: ['kong.log.info("done")'] },
  'aws-lambda': { aws_region: 'eu-west-1', function_name: 'orders' },
  'azure-functions': { appname: 'orders', functionname: 'list' },
  'ai-proxy': { route_type: 'llm/v1/chat', auth: { header_name: 'Authorization', header_value: 'Bearer sk-placeholder' }, model: { provider: 'openai', name: 'gpt-4o' } },
  'ai-prompt-decorator': { prompts: { prepend: [{ role: 'system', content: 'Answer briefly.' }] } },
  'ai-prompt-guard': { deny_patterns: ['.*password.*'] },
  'ai-prompt-template': { templates: [{ name: 'greet', template: '{"messages":[{"role":"user","content":"Hello {{who}}"}]}' }] },
  'ai-request-transformer': { prompt: 'Rewrite as JSON', llm: { route_type: 'llm/v1/chat', model: { provider: 'openai', name: 'gpt-4o' } } },
  'grpc-web': { proto: '/etc/kong/protos/hello.proto', allow_origin_header: 'https://app.example.org' },
  'grpc-gateway': { proto: '/etc/kong/protos/bookstore.proto' },
  'ai-response-transformer': { prompt: 'Summarise', llm: { route_type: 'llm/v1/chat', model: { provider: 'openai', name: 'gpt-4o' } } },
};

/** The document: one service (the given upstream), route and plugin per entry of PLUGIN_CONFIGS. */
export function allPluginsDocument(upstreamUrl: string): Record<string, unknown> {
  const services = Object.entries(PLUGIN_CONFIGS).map(([name, config]) => ({
    name: `svc-${name}`,
    url: upstreamUrl,
    routes: [{ name: `route-${name}`, paths: [`/p-${name}`] }],
    plugins: [{ name, config }],
  }));
  return { _format_version: '3.0', services };
}
