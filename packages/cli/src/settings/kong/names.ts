/** Every setting name Kong 3.9 reads from kong.conf or KONG_* (nginx directive injections aside: see isKongSettingName). */
export const KONG_SETTING_NAMES: ReadonlySet<string> = new Set([
  'admin_access_log', 'admin_error_log', 'admin_gui_access_log', 'admin_gui_api_url', 'admin_gui_error_log', 'admin_gui_listen',
  'admin_gui_path', 'admin_gui_ssl_cert', 'admin_gui_ssl_cert_key', 'admin_gui_url', 'admin_listen', 'admin_ssl_cert',
  'admin_ssl_cert_key', 'allow_debug_header', 'anonymous_reports', 'client_body_buffer_size', 'client_ssl', 'client_ssl_cert',
  'client_ssl_cert_key', 'cluster_ca_cert', 'cluster_cert', 'cluster_cert_key', 'cluster_cjson', 'cluster_control_plane',
  'cluster_data_plane_purge_delay', 'cluster_dp_labels', 'cluster_incremental_sync', 'cluster_listen', 'cluster_max_payload', 'cluster_mtls',
  'cluster_ocsp', 'cluster_rpc', 'cluster_server_name', 'cluster_use_proxy', 'database', 'db_cache_neg_ttl',
  'db_cache_ttl', 'db_cache_warmup_entities', 'db_resurrect_ttl', 'db_update_frequency', 'db_update_propagation', 'debug_ssl_cert',
  'debug_ssl_cert_key', 'declarative_config', 'declarative_config_string', 'dedicated_config_processing', 'dns_cache_size', 'dns_error_ttl',
  'dns_hostsfile', 'dns_no_sync', 'dns_not_found_ttl', 'dns_order', 'dns_resolver', 'dns_stale_ttl',
  'dns_valid_ttl', 'error_default_type', 'error_template_html', 'error_template_json', 'error_template_plain', 'error_template_xml',
  'headers', 'headers_upstream', 'host_ports', 'kic', 'lmdb_environment_path', 'lmdb_map_size',
  'log_level', 'lua_max_post_args', 'lua_max_req_headers', 'lua_max_resp_headers', 'lua_max_uri_args', 'lua_package_cpath',
  'lua_package_path', 'lua_socket_pool_size', 'lua_ssl_protocols', 'lua_ssl_trusted_certificate', 'lua_ssl_verify_depth', 'mem_cache_size',
  'new_dns_client', 'nginx_admin_client_body_buffer_size', 'nginx_admin_client_max_body_size', 'nginx_daemon', 'nginx_events_multi_accept', 'nginx_events_worker_connections',
  'nginx_http_charset', 'nginx_http_client_body_buffer_size', 'nginx_http_client_header_buffer_size', 'nginx_http_client_max_body_size', 'nginx_http_grpc_ssl_conf_command', 'nginx_http_keepalive_requests',
  'nginx_http_large_client_header_buffers', 'nginx_http_lua_regex_cache_max_entries', 'nginx_http_lua_regex_match_limit', 'nginx_http_lua_ssl_conf_command', 'nginx_http_proxy_ssl_conf_command', 'nginx_http_ssl_conf_command',
  'nginx_http_ssl_dhparam', 'nginx_http_ssl_prefer_server_ciphers', 'nginx_http_ssl_protocols', 'nginx_http_ssl_session_tickets', 'nginx_http_ssl_session_timeout', 'nginx_main_daemon',
  'nginx_main_user', 'nginx_main_worker_processes', 'nginx_main_worker_rlimit_nofile', 'nginx_proxy_real_ip_header', 'nginx_proxy_real_ip_recursive', 'nginx_stream_lua_ssl_conf_command',
  'nginx_stream_proxy_ssl_conf_command', 'nginx_stream_ssl_conf_command', 'nginx_stream_ssl_dhparam', 'nginx_stream_ssl_prefer_server_ciphers', 'nginx_stream_ssl_protocols', 'nginx_stream_ssl_session_tickets',
  'nginx_stream_ssl_session_timeout', 'nginx_user', 'nginx_wasm_main_shm_kv', 'nginx_worker_processes', 'node_id', 'openresty_path',
  'opentelemetry_tracing', 'opentelemetry_tracing_sampling_rate', 'pg_backlog', 'pg_database', 'pg_host', 'pg_keepalive_timeout',
  'pg_max_concurrent_queries', 'pg_password', 'pg_pool_size', 'pg_port', 'pg_ro_backlog', 'pg_ro_database',
  'pg_ro_host', 'pg_ro_keepalive_timeout', 'pg_ro_max_concurrent_queries', 'pg_ro_password', 'pg_ro_pool_size', 'pg_ro_port',
  'pg_ro_schema', 'pg_ro_semaphore_timeout', 'pg_ro_ssl', 'pg_ro_ssl_verify', 'pg_ro_timeout', 'pg_ro_user',
  'pg_schema', 'pg_semaphore_timeout', 'pg_ssl', 'pg_ssl_verify', 'pg_timeout', 'pg_user',
  'plugins', 'pluginserver_names', 'port_maps', 'prefix', 'privileged_worker', 'proxy_access_log',
  'proxy_error_log', 'proxy_listen', 'proxy_server', 'proxy_server_ssl_verify', 'proxy_stream_access_log', 'proxy_stream_error_log',
  'real_ip_header', 'real_ip_recursive', 'request_debug', 'request_debug_token', 'resolver_address', 'resolver_error_ttl',
  'resolver_family', 'resolver_hosts_file', 'resolver_lru_cache_size', 'resolver_mem_cache_size', 'resolver_stale_ttl', 'resolver_valid_ttl',
  'role', 'router_consistency', 'router_flavor', 'ssl_cert', 'ssl_cert_key', 'ssl_cipher_suite',
  'ssl_ciphers', 'ssl_dhparam', 'ssl_prefer_server_ciphers', 'ssl_protocols', 'ssl_session_cache_size', 'ssl_session_tickets',
  'ssl_session_timeout', 'status_access_log', 'status_error_log', 'status_listen', 'status_ssl_cert', 'status_ssl_cert_key',
  'stream_listen', 'tracing_instrumentations', 'tracing_sampling_rate', 'trusted_ips', 'untrusted_lua', 'untrusted_lua_sandbox_environment',
  'untrusted_lua_sandbox_requires', 'upstream_keepalive_idle_timeout', 'upstream_keepalive_max_requests', 'upstream_keepalive_pool_size', 'vault_env_prefix', 'vaults',
  'wasm', 'wasm_dynamic_module', 'wasm_filters', 'wasm_filters_path', 'worker_consistency', 'worker_events_max_payload',
  'worker_state_update_frequency',
]);

/** nginx directives Kong injects from `nginx_<block>_<directive>` names */
const NGINX_INJECTION = /^nginx_(main|events|http|proxy|admin|status|upstream|stream|sproxy|supstream|wasm)_[a-z0-9_]+$/;

/** Whether Kong 3.9 knows the name (a setting of its own or an nginx directive injection). */
export function isKongSettingName(name: string): boolean {
  return KONG_SETTING_NAMES.has(name) || NGINX_INJECTION.test(name);
}
