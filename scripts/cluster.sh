#!/usr/bin/env bash
# The deploy/ topology as local processes on loopback: a redis-server, N viewportd instances
# sharing it (store.url), and nginx routing by session id with deploy/nginx.conf (its
# `server viewportd-N:8080` lines and `listen 8080` replaced). For development, and for the
# cluster check in CI (`load`). Everything runs from Debian's packages (redis-server, nginx) and
# a viewportd binary; nothing needs Docker.
#
#   scripts/cluster.sh start [--instances N] [--port P] [--binary PATH] [--dir DIR]
#       start redis-server, N viewportd (default 3) and nginx on 127.0.0.1:P (default 8080);
#       state, logs and the generated nginx.conf in DIR (default ${TMPDIR:-/tmp}/viewportd-cluster)
#   scripts/cluster.sh status [--dir DIR]      each process, its port and /healthz
#   scripts/cluster.sh stop [--dir DIR]        SIGTERM everything (viewportd hands its sessions over)
#   scripts/cluster.sh restart K [--dir DIR]   SIGTERM instance K (1-based), wait, start it again
#   scripts/cluster.sh kill K [--dir DIR]      kill -9 instance K, start it again
#   scripts/cluster.sh load [options]          start a cluster, run wrk through nginx while every
#       instance is restarted in turn (SIGTERM), then check that no update was lost: the sum of
#       the sessions' stats.updates is at least the 200 answers wrk counted (and at most one more
#       per connection: the requests in flight when wrk stopped). Stops the cluster after.
#       --duration D (default 20s)  --connections C (default 32)  --threads T (default 2)
#       --no-restart (measure only)  --settle S (wait S seconds after the start, before the
#       sessions are opened: scripts/store-cpu.py measures the idle cluster then)  --held H (open H
#       more sessions that wrk leaves alone: held by the instances, their leases renewed)  --kill (kill -9 one instance instead: updates since its last
#       flush may be lost, and those sessions answer 503 until its lease ends)
#       --url URL (load a cluster that already runs behind URL instead of starting one; with
#       --disrupt 'COMMAND', run COMMAND where the restarts would be: e.g. scripts/image-test.sh
#       stops a container of the compose project; nothing may be lost either)
#
# Other options: --binary PATH (default: build release viewportd), --scratch-path DIR,
# --redis-port P (default: a free port), --store-url URL (a store that runs already, such as a
# Redis Cluster from scripts/redis-cluster.sh, instead of starting a redis-server), --http-threads N.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command="${1:-}"; [[ $# -gt 0 ]] && shift
instances=3 port=8080 binary="" dir="${TMPDIR:-/tmp}/viewportd-cluster" redis_port="" http_threads=""
scratch="$repo_root/.build" duration=20s connections=32 threads=2 restart=1 kill_mode=0 target="" settle=0 held=0
url="" disrupt="" store_url=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --instances) instances="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        --binary) binary="$2"; shift 2 ;;
        --dir) dir="$2"; shift 2 ;;
        --redis-port) redis_port="$2"; shift 2 ;;
        --store-url) store_url="$2"; shift 2 ;;
        --http-threads) http_threads="$2"; shift 2 ;;
        --scratch-path) scratch="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --connections) connections="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --no-restart) restart=0; shift ;;
        --settle) settle="$2"; shift 2 ;;
        --held) held="$2"; shift 2 ;;
        --kill) kill_mode=1; shift ;;
        --url) url="$2"; shift 2 ;;
        --disrupt) disrupt="$2"; shift 2 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        [0-9]*) target="$1"; shift ;;
        *) echo "cluster: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

log() { echo "cluster: $*" >&2; }
die() { echo "cluster: error: $*" >&2; exit 1; }
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }
state() { cat "$dir/$1" 2>/dev/null || true; }

stop_pid() {  # stop_pid PID [SIGNAL]: signal, then SIGKILL after 30 s
    local p="$1" sig="${2:-TERM}" i
    alive "$p" || return 0
    kill "-$sig" "$p" 2>/dev/null || true
    for ((i = 0; i < 300; i++)); do alive "$p" || return 0; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
}

wait_http() {  # wait_http URL SECONDS
    local url="$1" i
    for ((i = 0; i < $2 * 10; i++)); do
        curl -sf --max-time 1 -o /dev/null "$url" && return 0
        sleep 0.1
    done
    return 1
}

build_binary() {
    if [[ -z "$binary" ]]; then
        log "building release viewportd (scratch path $scratch)"
        (cd "$repo_root" && swift build -c release --scratch-path "$scratch" --product viewportd >&2)
        binary="$(cd "$repo_root" && swift build -c release --scratch-path "$scratch" --show-bin-path)/viewportd"
    fi
    [[ -x "$binary" ]] || die "no executable at $binary"
}

start_instance() {  # start_instance K: viewportd K on its port, sharing the store
    local k="$1" p
    p="$(state "viewportd-$k.port")"
    local env_args=(HTTP_HOST=127.0.0.1 HTTP_PORT="$p" STORE_URL="$(state store-url)"
                    SESSIONS_MAX=100000 HTTP_CONNECTION_TIMEOUT=600 LOG_LEVEL="${LOG_LEVEL:-info}")
    [[ -n "$(state http-threads)" ]] && env_args+=(HTTP_THREADS="$(state http-threads)")
    ( cd "$repo_root" && exec env "${env_args[@]}" "$(state binary)" ) >>"$dir/viewportd-$k.log" 2>&1 &
    echo $! > "$dir/viewportd-$k.pid"
    wait_http "http://127.0.0.1:$p/healthz" 30 || { tail -n 20 "$dir/viewportd-$k.log" >&2; die "viewportd $k did not start"; }
    log "viewportd $k on 127.0.0.1:$p (pid $(state "viewportd-$k.pid"))"
}

nginx_config() {  # the deploy config, on loopback
    local n="$1" servers="" k
    for ((k = 1; k <= n; k++)); do servers+="        server 127.0.0.1:$(state "viewportd-$k.port") max_fails=0;\n"; done
    awk -v servers="$servers" -v listen="127.0.0.1:$(state nginx.port)" -v dir="$dir" '
        /^[[:space:]]*server viewportd-[0-9]+:8080/ { if (!done) { printf "%s", servers; done = 1 } ; next }
        /^[[:space:]]*listen 8080;/ { sub(/8080/, listen) }
        /^pid / { print "pid " dir "/nginx.pid;"; print "error_log " dir "/nginx-error.log warn;"; next }
        /^http \{/ { print; print "    client_body_temp_path " dir "/nginx-tmp/body;"; print "    proxy_temp_path " dir "/nginx-tmp/proxy;";
                    print "    fastcgi_temp_path " dir "/nginx-tmp/fastcgi;"; print "    uwsgi_temp_path " dir "/nginx-tmp/uwsgi;";
                    print "    scgi_temp_path " dir "/nginx-tmp/scgi;"; next }
        { print }
    ' "$repo_root/deploy/nginx.conf"
}

cmd_start() {
    mkdir -p "$dir/nginx-tmp" "$dir/logs"
    if alive "$(state redis.pid)"; then die "a cluster already runs in $dir (scripts/cluster.sh stop --dir $dir)"; fi
    rm -f "$dir"/*.pid "$dir"/*.port "$dir"/*.log
    "$repo_root/scripts/install-deps.sh" --load >/dev/null
    build_binary
    echo "$binary" > "$dir/binary"
    echo "$instances" > "$dir/instances"
    echo "$http_threads" > "$dir/http-threads"
    if [[ -n "$store_url" ]]; then
        echo "$store_url" > "$dir/store-url"
        log "the store: $store_url"
    else
    echo "${redis_port:-$(free_port)}" > "$dir/redis.port"
    echo "redis://127.0.0.1:$(state redis.port)" > "$dir/store-url"
    redis-server --port "$(state redis.port)" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
        --protected-mode no --loglevel warning >"$dir/redis.log" 2>&1 &
    echo $! > "$dir/redis.pid"
    for ((i = 0; i < 100; i++)); do redis-cli -p "$(state redis.port)" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$(state redis.port)" ping >/dev/null 2>&1 || die "redis-server did not start: $(cat "$dir/redis.log")"
    log "redis-server on 127.0.0.1:$(state redis.port) (pid $(state redis.pid))"
    fi
    for ((k = 1; k <= instances; k++)); do
        free_port > "$dir/viewportd-$k.port"
        start_instance "$k"
    done
    echo "$port" > "$dir/nginx.port"
    nginx_config "$instances" > "$dir/nginx.conf"
    "$nginx_bin" -p "$dir" -e "$dir/nginx-error.log" -c "$dir/nginx.conf" -t >/dev/null 2>"$dir/nginx-test.log" \
        || { cat "$dir/nginx-test.log" >&2; die "nginx -t rejected the generated config"; }
    "$nginx_bin" -p "$dir" -e "$dir/nginx-error.log" -c "$dir/nginx.conf" -g 'daemon off;' >"$dir/nginx.log" 2>&1 &
    echo $! > "$dir/nginx.pid.main"
    wait_http "http://127.0.0.1:$port/healthz" 10 || die "nginx did not answer on 127.0.0.1:$port"
    log "nginx on http://127.0.0.1:$port (pid $(state nginx.pid.main)), routing by session id"
}

cmd_status() {
    [[ -f "$dir/instances" ]] || { echo "no cluster in $dir"; return 1; }
    printf '%-12s %-8s %-22s %s\n' process pid address health
    printf '%-12s %-8s %-22s %s\n' redis "$(state redis.pid)" "127.0.0.1:$(state redis.port)" \
        "$(redis-cli -p "$(state redis.port)" ping 2>/dev/null || echo down)"
    for ((k = 1; k <= $(state instances); k++)); do
        printf '%-12s %-8s %-22s %s\n' "viewportd-$k" "$(state "viewportd-$k.pid")" "127.0.0.1:$(state "viewportd-$k.port")" \
            "$(curl -s --max-time 1 "http://127.0.0.1:$(state "viewportd-$k.port")/healthz" || echo down)"
    done
    printf '%-12s %-8s %-22s %s\n' nginx "$(state nginx.pid.main)" "127.0.0.1:$(state nginx.port)" \
        "$(curl -s --max-time 1 "http://127.0.0.1:$(state nginx.port)/healthz" || echo down)"
}

cmd_stop() {
    [[ -f "$dir/instances" ]] || return 0
    stop_pid "$(state nginx.pid.main)" QUIT
    for ((k = 1; k <= $(state instances); k++)); do stop_pid "$(state "viewportd-$k.pid")" TERM; done
    stop_pid "$(state redis.pid)" TERM
    rm -f "$dir"/*.pid "$dir"/*.pid.main "$dir/instances"
    log "stopped"
}

cmd_restart() {  # cmd_restart K SIGNAL
    local k="$1" sig="$2"
    [[ -n "$k" && -f "$dir/viewportd-$k.port" ]] || die "no instance $k"
    log "$([[ $sig == KILL ]] && echo "kill -9" || echo "SIGTERM") viewportd $k"
    stop_pid "$(state "viewportd-$k.pid")" "$sig"
    start_instance "$k"
}

cmd_load() {
    "$repo_root/scripts/install-deps.sh" --load >/dev/null
    dir="$(mktemp -d -t viewportd-cluster.XXXXXX)"
    local base layout sessions=() k disruption
    if [[ -n "$url" ]]; then
        trap 'rm -rf "$dir"' EXIT
        base="$url"
        disruption="${disrupt:+$disrupt}"
    else
        trap 'cmd_stop; rm -rf "$dir"' EXIT
        port="$(free_port)"
        cmd_start
        sleep "$settle"
        base="http://127.0.0.1:$port"
        if [[ $kill_mode -eq 1 ]]; then disruption="instance 2 killed (-9) and restarted"
        else disruption="every instance restarted (SIGTERM) in turn"; fi
    fi
    [[ $restart -eq 1 ]] || disruption=""
    trap 'exit 130' INT TERM
    python3 - "$dir/layout.json" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"items":[' + ",".join('{"id":"%d","rect":[0,%d,375,50],"reuse":"%s"}' % (i, 50 * i, "ad" if i % 7 == 0 else "row") for i in range(10000)) + ']}')
PY
    layout="$(curl -sS --max-time 30 -H 'Content-Type: application/json' --data-binary @"$dir/layout.json" "$base/v1/layouts" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["layout"])')"
    for ((k = 0; k < connections; k++)); do
        sessions+=("$(curl -sS --max-time 10 -H 'Content-Type: application/json' \
            --data "{\"layout\":\"$layout\",\"viewport\":[375,667]}" "$base/v1/sessions" \
            | python3 -c 'import json,sys; print(json.load(sys.stdin)["session"])')")
    done
    local idle=()
    for ((k = 0; k < held; k++)); do
        idle+=("$(curl -sS --max-time 10 -H 'Content-Type: application/json' \
            --data "{\"layout\":\"$layout\",\"viewport\":[375,667]}" "$base/v1/sessions" \
            | python3 -c 'import json,sys; print(json.load(sys.stdin)["session"])')")
    done
    log "layout $layout, ${#sessions[@]} sessions opened through nginx$([[ $held -gt 0 ]] && echo " (and $held held that wrk leaves alone)")"
    # One update of each session through nginx before the load: a session opened on one instance
    # moves (a handover) to the instance nginx routes its id to at its first update; the load then
    # measures sessions that stay where they are. (Its answers count with wrk's below.)
    local warmed
    local warm='
import http.client, sys, urllib.parse
url = urllib.parse.urlsplit(sys.argv[1])
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
answered = 0
for line in sys.stdin:
    connection.request("POST", "/v1/sessions/" + line.strip() + "/viewport", body=b"{\"offset\":[0,0]}",
                       headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    answered += response.status == 200
print(answered)
'
    warmed="$(printf '%s\n' "${sessions[@]}" | python3 -c "$warm" "$base")"
    if [[ $held -gt 0 ]]; then printf '%s\n' "${idle[@]}" | python3 -c "$warm" "$base" >/dev/null; fi
    {
        echo "local all = {"
        for s in "${sessions[@]}"; do echo "  \"$s\","; done
        echo "}"
        cat <<LUA
local threads = {}
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end
function init(args)
  mine, ys = {}, {}
  for i = 1, #all do
    if (i - 1) % $threads == tid then mine[#mine + 1] = all[i]; ys[#mine] = (#mine * 1009) % 400000 end
  end
  nxt = 0
  ok, bad = 0, 0
  hdrs = { ["Content-Type"] = "application/json" }
end
function request()
  nxt = nxt % #mine + 1
  ys[nxt] = (ys[nxt] + 97) % 400000
  return wrk.format("POST", "/v1/sessions/" .. mine[nxt] .. "/viewport", hdrs, '{"offset":[0,' .. ys[nxt] .. ']}')
end
function response(status, headers, body)
  if status == 200 then ok = ok + 1 else bad = bad + 1 end
end
function done(summary, latency, requests)
  local total_ok, total_bad = 0, 0
  for _, t in ipairs(threads) do total_ok = total_ok + t:get("ok"); total_bad = total_bad + t:get("bad") end
  io.write(string.format("answers: 200 %d, other %d\n", total_ok, total_bad))
end
LUA
    } > "$dir/load.lua"
    local secs
    secs="$(python3 -c "import re,sys; m=re.fullmatch(r'(\d+)([smh]?)', sys.argv[1]); print(int(m[1]) * {'':1,'s':1,'m':60,'h':3600}[m[2]])" "$duration")"
    log "wrk -t$threads -c$connections -d$duration through nginx${disruption:+, $disruption}"
    timeout --signal=INT --kill-after=10 $((secs + 30)) wrk -t"$threads" -c"$connections" -d"$duration" --timeout 10s --latency \
        -s "$dir/load.lua" "$base" > "$dir/wrk.txt" 2>&1 &
    local wrk_pid=$!
    if [[ -n "$disruption" ]]; then
        sleep "$(python3 -c "print($secs / 5)")"
        if [[ -n "$url" ]]; then
            bash -c "$disrupt" >&2 || { kill "$wrk_pid" 2>/dev/null; die "the disruption failed: $disrupt"; }
        elif [[ $kill_mode -eq 1 ]]; then
            cmd_restart 2 KILL
        else
            for ((k = 1; k <= instances; k++)); do cmd_restart "$k" TERM; sleep 1; done
        fi
    fi
    wait "$wrk_pid" || { cat "$dir/wrk.txt" >&2; die "wrk failed"; }
    local answered total=0 updates
    answered="$(sed -n 's/^answers: 200 \([0-9]*\), other \([0-9]*\)$/\1 \2/p' "$dir/wrk.txt")"
    for s in "${sessions[@]}"; do
        updates="$(curl -sS --max-time 10 "$base/v1/sessions/$s" | python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"]["updates"])')"
        total=$((total + updates))
    done
    echo
    echo "== wrk through nginx, ${#sessions[@]} sessions on $([[ -n "$url" ]] && echo "the cluster behind $url" || echo "$instances instances")${disruption:+, $disruption} =="
    grep -E 'Requests/sec|Latency |Socket errors|Non-2xx|requests in|99%' "$dir/wrk.txt" || true
    read -r ok other <<<"$answered"
    ok=$((ok + warmed))
    echo "answered 200: $ok, other: $other; the sessions applied $total updates"
    local status=0
    # When wrk stops it drops the answers still in flight (at most one per connection): those
    # updates were applied but not counted. Fewer applied than answered would be a lost update.
    if [[ "$total" -lt "$ok" && $kill_mode -eq 1 ]]; then
        echo "cluster: kill -9 lost $((ok - total)) answered update(s) not yet written (at most store.flushInterval of them)"
    elif [[ "$total" -lt "$ok" ]]; then
        echo "cluster: LOST UPDATES: wrk got $ok plans, the sessions applied only $total updates"; status=1
    elif [[ "$total" -gt $((ok + connections)) ]]; then
        echo "cluster: the sessions applied $total updates, more than the $ok answered plus $connections in flight when wrk stopped"; status=1
    fi
    if [[ $kill_mode -eq 0 && "$other" -ne 0 ]]; then echo "cluster: $other answers were not 200"; status=1; fi
    if grep -q 'Socket errors' "$dir/wrk.txt" && [[ $kill_mode -eq 0 ]]; then echo "cluster: wrk had socket errors"; status=1; fi
    [[ $status -eq 0 && $kill_mode -eq 0 ]] && echo "cluster: no update lost"
    return $status
}

case "$command" in
    start) cmd_start ;;
    status) cmd_status ;;
    stop) cmd_stop ;;
    restart) cmd_restart "$target" TERM ;;
    kill) cmd_restart "$target" KILL ;;
    load) cmd_load ;;
    *) echo "usage: scripts/cluster.sh start|status|stop|restart K|kill K|load [options] (see --help)" >&2; exit 2 ;;
esac
