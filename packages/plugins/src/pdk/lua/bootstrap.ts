/**
 * The Lua side of the sandbox, run once per VM with `host` (the PDK's JavaScript functions, flat by name) and
 * `options` (Kong's untrusted_lua settings: `mode`, and `requires` / `environment` as space-separated names) as its
 * arguments. It returns the helpers the VM calls from JavaScript. With `mode = sandbox` (Kong's default) the VM's
 * globals are gone from reach after it ran: every snippet runs in an environment whose only way out is the table
 * built here (Kong's sandbox list: no io, os.execute, require, load, debug, string.rep, metatables), plus the modules
 * `requires` names and the globals `environment` names. With `mode = on` a snippet sees every global as well.
 */
export const BOOTSTRAP_LUA = String.raw`
local host, options = ...
local G, real_require = _G, require
local error, type, tostring, setmetatable, rawget, rawset, select = error, type, tostring, setmetatable, rawget, rawset, select
local pairs, ipairs, string_lower, string_gsub = pairs, ipairs, string.lower, string.gsub

-- the pieces of the standard library a snippet may use
local function pick(source, names)
  local out = {}
  for name in names:gmatch("%S+") do out[name] = source[name] end
  return out
end

local safe = pick(_G, "_VERSION assert error ipairs next pairs pcall select tonumber tostring type xpcall")
safe.unpack = table.unpack
safe.string = pick(string, "byte char find format gmatch gsub len lower match reverse sub upper")
safe.table = pick(table, "insert remove sort concat unpack")
safe.math = pick(math, "abs acos asin atan ceil cos deg exp floor fmod huge log max maxinteger min mininteger modf pi rad random sin sqrt tan tointeger type ult")
safe.os = pick(os, "clock date difftime time")
safe.coroutine = pick(coroutine, "create isyieldable resume running status wrap yield")
safe.utf8 = pick(utf8, "char charpattern codepoint codes len offset")
local allowed = {}
for name in options.requires:gmatch("%S+") do allowed[name] = true end
safe.require = function(name)
  if allowed[name] then return real_require(name) end
  error("require '" .. tostring(name) .. "' not allowed within sandbox", 2)
end

-- untrusted_lua_sandbox_environment: a global (or a dotted name inside one) the sandbox sees as well (Kong's link)
local function link(name, from, into)
  local head, rest = name:match("([^%.]+)%.?(.*)")
  local value = from[head]
  if value == nil then return end
  if rest == "" then
    if type(value) == "table" then into[head] = setmetatable({}, { __index = value }) else into[head] = value end
    return
  end
  if type(into[head]) ~= "table" then into[head] = {} end
  link(rest, value, into[head])
end
if options.mode == "sandbox" then
  for name in options.environment:gmatch("%S+") do link(name, G, safe) end
  -- string.rep allocates without bound in one instruction: gone from the library strings use as methods too
  string.rep = nil
  string.dump = nil
end


-- a PDK table: reading a name it does not have is an error naming it, so an unsupported call fails loudly
local function surface(path, fields)
  return setmetatable(fields, {
    __index = function(_, key) error("unsupported function: " .. path .. "." .. tostring(key), 2) end,
  })
end

-- header tables answer any spelling of a name (Kong's get_headers: case-insensitive, '_' as '-')
local headers_mt = {
  __index = function(t, key)
    if type(key) ~= "string" then return nil end
    local normal = string_gsub(string_lower(key), "_", "-")
    return rawget(t, normal)
  end,
}
local function as_headers(t)
  if type(t) == "table" then setmetatable(t, headers_mt) end
  return t
end
local function headers_of(fn)
  return function(...) return as_headers(fn(...)) end
end

local function exits(fn)
  return function(...)
    fn(...)
    error(host.exit_marker, 0)
  end
end

local kong = {}
kong.request = surface("kong.request", {
  get_header = host.request_get_header, get_headers = headers_of(host.request_get_headers),
  get_path = host.request_get_path, get_raw_path = host.request_get_path, get_method = host.request_get_method,
  get_query = host.request_get_query, get_query_arg = host.request_get_query_arg, get_raw_query = host.request_get_raw_query,
  get_path_with_query = host.request_get_path_with_query, get_raw_body = host.request_get_raw_body,
  get_body = host.request_get_body, get_scheme = host.request_get_scheme, get_host = host.request_get_host,
  get_port = host.request_get_port, get_forwarded_scheme = host.request_get_scheme,
  get_forwarded_host = host.request_get_host, get_forwarded_port = host.request_get_port,
  get_http_version = host.request_get_http_version, get_uri_captures = host.request_get_uri_captures,
  get_start_time = host.request_get_start_time,
})
kong.response = surface("kong.response", {
  exit = exits(host.response_exit), error = exits(host.response_error),
  set_header = host.response_set_header, add_header = host.response_add_header,
  clear_header = host.response_clear_header, set_headers = host.response_set_headers,
  get_header = host.response_get_header, get_headers = headers_of(host.response_get_headers),
  get_status = host.response_get_status, get_source = host.response_get_source,
  get_raw_body = host.response_get_raw_body, set_raw_body = host.response_set_raw_body,
})
kong.service = surface("kong.service", {
  request = surface("kong.service.request", {
    set_header = host.service_request_set_header, add_header = host.service_request_add_header,
    clear_header = host.service_request_clear_header, set_headers = host.service_request_set_headers,
    set_path = host.service_request_set_path, set_query = host.service_request_set_query,
    set_raw_query = host.service_request_set_raw_query, set_raw_body = host.service_request_set_raw_body,
    set_body = host.service_request_set_body, set_method = host.service_request_set_method,
  }),
})
kong.client = surface("kong.client", {
  get_ip = host.client_get_ip, get_forwarded_ip = host.client_get_ip, get_port = host.client_get_port,
  get_forwarded_port = host.client_get_port, get_consumer = host.client_get_consumer,
  get_credential = host.client_get_credential, get_protocol = host.request_get_scheme,
})
-- where a log line was written (the snippet's chunk and line) goes with it, as Kong's observability logs keep it
local getinfo = debug.getinfo
local function log_line(level, ...)
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
  local info = getinfo(3, "nSl") or {}
  host.log(level, table.concat(parts), info.currentline, info.source, info.name, info.namewhat, info.what)
end
local function logger(level)
  return function(...) log_line(level, ...) end
end
kong.log = surface("kong.log", {
  debug = logger("debug"), info = logger("info"), notice = logger("notice"), warn = logger("warn"),
  err = logger("err"), crit = logger("crit"), alert = logger("alert"), emerg = logger("emerg"),
  set_serialize_value = host.log_set_serialize_value,
})
kong.ctx = surface("kong.ctx", {})
getmetatable(kong.ctx).__index = function(_, key)
  if key == "shared" then return host.ctx_shared() end
  error("unsupported function: kong.ctx." .. tostring(key), 2)
end
kong.version = host.version()
kong.version_num = 3009001
kong = surface("kong", kong)

local LOG_LEVELS = { "STDERR", "EMERG", "ALERT", "CRIT", "ERR", "WARN", "NOTICE", "INFO", "DEBUG" }
local ngx = {
  OK = 0, ERROR = -1, AGAIN = -2, DONE = -4, DECLINED = -5, null = host.null,
  HTTP_OK = 200, HTTP_CREATED = 201, HTTP_NO_CONTENT = 204, HTTP_MOVED_PERMANENTLY = 301, HTTP_MOVED_TEMPORARILY = 302,
  HTTP_BAD_REQUEST = 400, HTTP_UNAUTHORIZED = 401, HTTP_FORBIDDEN = 403, HTTP_NOT_FOUND = 404,
  HTTP_INTERNAL_SERVER_ERROR = 500, HTTP_SERVICE_UNAVAILABLE = 503,
  time = host.ngx_time, now = host.ngx_now, say = host.ngx_say, print = host.ngx_print,
  exit = function(status)
    if host.ngx_exit(status) then error(host.exit_marker, 0) end
  end,
  log = function(level, ...)
    log_line(string_lower(LOG_LEVELS[(level or 0) + 1] or "notice"), ...)
  end,
  encode_args = host.ngx_encode_args, decode_args = host.ngx_decode_args,
  re = surface("ngx.re", { match = host.ngx_re_match, find = host.ngx_re_find }),
  req = surface("ngx.req", {
    read_body = function() end, get_body_data = host.request_get_raw_body,
    get_headers = headers_of(host.request_get_headers), get_method = host.request_get_method,
    get_uri_args = host.request_get_query, start_time = host.request_get_start_time,
  }),
  worker = surface("ngx.worker", { pid = host.worker_pid, id = function() return 0 end, count = function() return 1 end }),
  var = setmetatable({}, {
    __index = function(_, name) return host.ngx_var(name) end,
    __newindex = function(_, name, value) host.ngx_var_set(name, value) end,
  }),
}
for i, name in ipairs(LOG_LEVELS) do ngx[name] = i - 1 end
ngx = setmetatable(ngx, {
  __index = function(_, key)
    if key == "status" then return host.ngx_status() end
    if key == "ctx" then return host.ctx_shared() end
    error("unsupported function: ngx." .. tostring(key), 2)
  end,
  __newindex = function(_, key, value)
    if key == "status" then return host.ngx_status(value) end
    error("unsupported function: ngx." .. tostring(key), 2)
  end,
})
safe.kong = kong
safe.ngx = ngx

local function sandbox_env()
  if options.mode == "on" then return setmetatable({ kong = kong, ngx = ngx }, { __index = G }) end
  return setmetatable({}, { __index = safe })
end

-- request-transformer's template environment (Kong's): headers, query_params, uri_captures, shared, type, require
local function template_env(headers, query, captures, shared)
  local env = { headers = as_headers(headers), query_params = query, uri_captures = captures, shared = shared,
    type = type, require = safe.require }
  return setmetatable(env, { __newindex = function() error("This environment is read-only.", 2) end })
end

return { sandbox_env = sandbox_env, template_env = template_env, tostring = tostring, concat = table.concat }
`;
