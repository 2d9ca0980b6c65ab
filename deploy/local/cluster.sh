#!/usr/bin/env bash
# The docker-compose topology as local processes: one control plane on Postgres, N data planes over Redis.
#
#   deploy/local/cluster.sh start [-n N]    control plane on :8001 (status :8099), N data planes (default 2) proxying
#                                           on :8000, :8002, :8003, … (the admin port is skipped), status on :8100, :8101, …
#   deploy/local/cluster.sh status
#   deploy/local/cluster.sh stop
#
# Environment (defaults in brackets):
#   DATABASE_URL              [postgres://postgres@127.0.0.1:5432/gatehouse_local]  created if missing
#   REDIS_URL                 [redis://127.0.0.1:6379]
#   GATEHOUSE_REDIS_PREFIX    [gatehouse-local:]
#   GATEHOUSE_CLUSTER_SECRET  [generated once, kept in the run directory]
#   GATEHOUSE_ADMIN_LISTEN    [127.0.0.1:8001]
#   GATEHOUSE_LOCAL_PROXY_PORT [8000]   first data plane's proxy port, the next ones count up (past the admin port)
#   GATEHOUSE_LOCAL_STATUS_PORT [8100]  first data plane's status port, the next ones count up
#   GATEHOUSE_LOCAL_CP_STATUS_PORT [8099]  the control plane's status listener (no RBAC): start and status probe it,
#                                           so a cluster with GATEHOUSE_ENFORCE_RBAC=on starts like any other
#   GATEHOUSE_LOCAL_RUN_DIR   [deploy/local/.run]  PID files, logs, data directories
#   GATEHOUSE_CLI             [packages/cli/src/main.ts]
# Other GATEHOUSE_* variables (GATEHOUSE_ENFORCE_RBAC, GATEHOUSE_ADMIN_TOKEN, …) reach every process as they are.
# Processes are stopped by the PIDs recorded at start, nothing else.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RUN_DIR="${GATEHOUSE_LOCAL_RUN_DIR:-$ROOT/deploy/local/.run}"
CLI="${GATEHOUSE_CLI:-$ROOT/packages/cli/src/main.ts}"
DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/gatehouse_local}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
REDIS_PREFIX="${GATEHOUSE_REDIS_PREFIX:-gatehouse-local:}"
ADMIN_LISTEN="${GATEHOUSE_ADMIN_LISTEN:-127.0.0.1:8001}"
PROXY_PORT="${GATEHOUSE_LOCAL_PROXY_PORT:-8000}"
STATUS_PORT="${GATEHOUSE_LOCAL_STATUS_PORT:-8100}"
CP_STATUS_PORT="${GATEHOUSE_LOCAL_CP_STATUS_PORT:-8099}"
TLS_PORT="${GATEHOUSE_LOCAL_TLS_PORT:-8443}"

usage() {
  sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}

log() { printf '%s\n' "$*" >&2; }
die() {
  log "cluster.sh: $*"
  exit 1
}

# "host:port" → "port"; a wildcard host is reached through 127.0.0.1
admin_url() {
  local host="${ADMIN_LISTEN%:*}" port="${ADMIN_LISTEN##*:}"
  [[ "$host" == "0.0.0.0" || "$host" == "::" || "$host" == "[::]" || -z "$host" ]] && host=127.0.0.1
  printf 'http://%s:%s' "$host" "$port"
}

# the control plane's status listener: readiness without RBAC (the admin API's /status may want a token)
cp_status_url() {
  printf 'http://127.0.0.1:%s' "$CP_STATUS_PORT"
}

# proxy port of data plane i (1-based): consecutive from PROXY_PORT, stepping over the admin and control plane status ports
proxy_port() {
  local i="$1" port="$PROXY_PORT" admin="${ADMIN_LISTEN##*:}" n=0
  while :; do
    if ((port != admin && port != CP_STATUS_PORT)); then
      n=$((n + 1))
      ((n == i)) && break
    fi
    port=$((port + 1))
  done
  printf '%s' "$port"
}

http_code() {
  if command -v curl >/dev/null 2>&1; then
    curl -s -o /dev/null -m 2 -w '%{http_code}' "$1" || true
  else
    node -e "fetch(process.argv[1],{signal:AbortSignal.timeout(2000)}).then(r=>console.log(r.status),()=>console.log('000'))" "$1"
  fi
}

# A PID file names our process only while that PID still runs our entry point (PIDs get reused).
pid_alive() {
  local pid_file="$1" pid
  [[ -f "$pid_file" ]] || return 1
  pid="$(cat "$pid_file")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$CLI" || [[ ! -d /proc ]]
}

wait_for_http() { # url wanted-code seconds pid-file name
  local url="$1" want="$2" seconds="$3" pid_file="$4" name="$5" code
  local deadline=$((SECONDS + seconds))
  while ((SECONDS < deadline)); do
    code="$(http_code "$url")"
    [[ "$code" == "$want" ]] && return 0
    pid_alive "$pid_file" || {
      log "$name exited during start; last lines of its log:"
      tail -n 30 "${pid_file%.pid}.log" >&2 || true
      return 2
    }
    sleep 0.3
  done
  return 1
}

# Creates the database named in DATABASE_URL when it does not exist (through the `postgres` database).
ensure_database() {
  (cd "$ROOT/packages/control-plane" && node -e '
    const pg = require("pg");
    const target = new URL(process.argv[1]);
    const name = decodeURIComponent(target.pathname.replace(/^\//, ""));
    if (!name) { console.error("DATABASE_URL names no database"); process.exit(1); }
    const admin = new URL(target); admin.pathname = "/postgres";
    const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
    client.connect()
      .then(() => client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]))
      .then((r) => r.rowCount ? null : client.query(`CREATE DATABASE "${name.replace(/"/g, "\"\"")}"`).then(() => console.error(`created database ${name}`)))
      .then(() => client.end(), (e) => { console.error(`Postgres: ${e.message}`); process.exit(1); });
  ' "$DATABASE_URL") || die "cannot reach Postgres at ${DATABASE_URL%%@*}@… or create the database"
}

ensure_redis() {
  (cd "$ROOT/packages/sync" && node -e '
    const { Redis } = require("ioredis");
    const r = new Redis(process.argv[1], { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 3000 });
    r.on("error", () => {});
    r.connect().then(() => r.ping()).then(() => { r.disconnect(); }, (e) => { console.error(`Redis: ${e.message}`); process.exit(1); });
  ' "$REDIS_URL") || die "cannot reach Redis"
}

cluster_secret() {
  if [[ -n "${GATEHOUSE_CLUSTER_SECRET:-}" ]]; then
    printf '%s' "$GATEHOUSE_CLUSTER_SECRET"
    return
  fi
  local file="$RUN_DIR/cluster-secret"
  if [[ ! -s "$file" ]]; then
    (umask 077 && node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("hex"))' >"$file")
  fi
  cat "$file"
}

launch() { # name role env...
  local name="$1" role="$2"
  shift 2
  local pid_file="$RUN_DIR/$name.pid" log_file="$RUN_DIR/$name.log"
  (
    cd "$ROOT"
    export "$@"
    # node runs the CLI directly (no wrapper process), so the recorded PID is the gateway's own
    exec nohup node --import tsx "$CLI" "$role" >>"$log_file" 2>&1 </dev/null
  ) &
  echo $! >"$pid_file"
}

cmd_start() {
  local count="$1"
  [[ -f "$CLI" ]] || die "no CLI at $CLI"
  mkdir -p "$RUN_DIR"
  chmod 700 "$RUN_DIR"
  local running=()
  for pid_file in "$RUN_DIR"/*.pid; do
    [[ -e "$pid_file" ]] || continue
    if pid_alive "$pid_file"; then running+=("$(basename "$pid_file" .pid)"); else rm -f "$pid_file"; fi
  done
  ((${#running[@]} == 0)) || die "already running (${running[*]}); run '$0 stop' first"

  ensure_database
  ensure_redis
  local secret
  secret="$(cluster_secret)"
  local common=("REDIS_URL=$REDIS_URL" "GATEHOUSE_REDIS_PREFIX=$REDIS_PREFIX" "GATEHOUSE_CLUSTER_SECRET=$secret")

  log "starting control plane (admin $(admin_url), status $(cp_status_url), log $RUN_DIR/control-plane.log)"
  launch control-plane control-plane "${common[@]}" "DATABASE_URL=$DATABASE_URL" "GATEHOUSE_ADMIN_LISTEN=$ADMIN_LISTEN" \
    "GATEHOUSE_STATUS_LISTEN=127.0.0.1:$CP_STATUS_PORT" "GATEHOUSE_DATA_DIR=$RUN_DIR/control-plane"
  if ! wait_for_http "$(cp_status_url)/status/ready" 200 90 "$RUN_DIR/control-plane.pid" "control plane"; then
    cmd_stop
    die "control plane did not come up"
  fi

  local i
  for ((i = 1; i <= count; i++)); do
    local proxy status=$((STATUS_PORT + i - 1))
    proxy="$(proxy_port "$i")"
    log "starting data-plane-$i (proxy :$proxy, status :$status)"
    launch "data-plane-$i" data-plane "${common[@]}" "GATEHOUSE_PROXY_LISTEN=127.0.0.1:$proxy" \
      "GATEHOUSE_STATUS_LISTEN=127.0.0.1:$status" "GATEHOUSE_DATA_DIR=$RUN_DIR/data-plane-$i" \
      "GATEHOUSE_PROXY_TLS_LISTEN=127.0.0.1:$((TLS_PORT + i - 1))" \
      "GATEHOUSE_DATA_PLANE_ID=local-data-plane-$i"
  done
  local failed=0
  for ((i = 1; i <= count; i++)); do
    local status=$((STATUS_PORT + i - 1)) rc=0
    wait_for_http "http://127.0.0.1:$status/status/ready" 200 60 "$RUN_DIR/data-plane-$i.pid" "data-plane-$i" || rc=$?
    case $rc in
      0) ;;
      2) failed=1 ;;
      *) log "data-plane-$i is running but has no config yet (status :$status/status/ready is not 200)" ;;
    esac
  done
  if ((failed)); then
    cmd_stop
    die "a data plane did not start"
  fi
  cmd_status
}

stop_one() { # pid-file
  local pid_file="$1" name pid
  name="$(basename "$pid_file" .pid)"
  if ! pid_alive "$pid_file"; then
    rm -f "$pid_file"
    return
  fi
  pid="$(cat "$pid_file")"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 10))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name (pid $pid) ignored SIGTERM; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pid_file"
  log "stopped $name (pid $pid)"
}

cmd_stop() {
  [[ -d "$RUN_DIR" ]] || return 0
  # data planes first, so none logs the control plane's disappearance
  for pid_file in "$RUN_DIR"/data-plane-*.pid "$RUN_DIR"/control-plane.pid; do
    [[ -e "$pid_file" ]] && stop_one "$pid_file"
  done
  return 0
}

cmd_status() {
  local any=0
  if [[ -d "$RUN_DIR" ]]; then
    for pid_file in "$RUN_DIR"/control-plane.pid "$RUN_DIR"/data-plane-*.pid; do
      [[ -e "$pid_file" ]] || continue
      any=1
      local name pid state url code
      name="$(basename "$pid_file" .pid)"
      pid="$(cat "$pid_file")"
      if pid_alive "$pid_file"; then state="running"; else state="not running"; fi
      if [[ "$name" == control-plane ]]; then
        url="$(cp_status_url)/status/ready"
      else
        local i="${name#data-plane-}"
        url="http://127.0.0.1:$((STATUS_PORT + i - 1))/status/ready"
      fi
      code="$(http_code "$url")"
      printf '%-16s pid %-8s %-12s %s → %s' "$name" "$pid" "$state" "$url" "$code"
      [[ "$name" == control-plane ]] || printf '   proxy :%s' "$(proxy_port "${name#data-plane-}")"
      printf '\n'
    done
  fi
  ((any)) || echo "not running"
}

command="${1:-}"
[[ -n "$command" ]] || usage 1
shift
count=2
while (($#)); do
  case "$1" in
    -n)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || die "-n needs a number"
      count="$2"
      shift 2
      ;;
    -h | --help) usage 0 ;;
    *) die "unknown option $1" ;;
  esac
done

case "$command" in
  start) cmd_start "$count" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  -h | --help | help) usage 0 ;;
  *) usage 1 ;;
esac
