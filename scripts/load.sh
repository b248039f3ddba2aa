#!/usr/bin/env bash
# Load tests for viewportd, on loopback only, bounded in time; everything started is stopped on
# exit.
#
#   scripts/load.sh [rps] [options]
#       Posts a vertical-list layout (--items, default 10,000), opens one session per wrk
#       connection, and runs `wrk -t2 -c64 -d10s --latency` with a Lua script that POSTs
#       {"offset":[0,Y]} to /v1/sessions/{id}/viewport, Y moving on every request so every plan
#       is real (items leave and enter). Then runs the identical wrk load against nginx on another
#       loopback port answering the same method and path with the same response bytes (one real
#       plan captured from viewportd, `return 200` with the same Content-Type), and prints
#       requests/s, p99 latency and errors of both, and the ratio viewportd/nginx.
#
#   scripts/load.sh stream [options]
#       Posts a 1,000,000-item layout (timed: post + index), opens a session and sends
#       1,000,000 small-step updates as one NDJSON stream with curl; prints updates/s.
#
# Options:
#   --binary PATH      use this viewportd instead of building one
#   --scratch-path DIR swift build scratch path (default .build)
#   --items N          layout size (default 10000; stream mode 1000000)
#   --updates N        stream mode: updates in the stream (default 1000000)
#   --threads N        wrk threads (default 2)       --connections N  wrk connections (default 64)
#   --duration D       wrk duration (default 10s)    --step PT        offset step per update (default 97; stream 7)
#   --http-threads N   viewportd http.threads (default: the config file's)
#   --rounds N         rps mode: N interleaved rounds (viewportd, nginx, ...), medians reported
#                      (default 1; use 3+ on a machine shared with other work)
#   --no-nginx         rps mode: skip the nginx comparison
#   --store            rps mode: also run a second viewportd with a shared store (a redis-server on
#                      another loopback port, store.url set), in the same interleaved rounds, and
#                      print the ratio with a store / without (README "Many instances, one store")
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=rps
if [[ "${1:-}" == rps || "${1:-}" == stream ]]; then mode="$1"; shift; fi

binary="" scratch="$repo_root/.build" items="" updates=1000000 threads=2 connections=64
duration=10s step="" http_threads="" with_nginx=1 rounds=1 with_store=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --scratch-path) scratch="$2"; shift 2 ;;
        --items) items="$2"; shift 2 ;;
        --updates) updates="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --connections) connections="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --step) step="$2"; shift 2 ;;
        --http-threads) http_threads="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --no-nginx) with_nginx=0; shift ;;
        --store) with_store=1; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "load: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [[ "$mode" == stream ]]; then items="${items:-1000000}"; step="${step:-7}"; else items="${items:-10000}"; step="${step:-97}"; fi

log() { echo "load: $*" >&2; }
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
die() { echo "load: error: $*" >&2; exit 1; }

# --- tools ---------------------------------------------------------------------------------
"$repo_root/scripts/install-deps.sh" --load
command -v wrk >/dev/null || die "wrk missing"
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"

# --- binary --------------------------------------------------------------------------------
if [[ -z "$binary" ]]; then
    log "building release viewportd (scratch path $scratch)"
    (cd "$repo_root" && swift build -c release --scratch-path "$scratch" --product viewportd >&2)
    binary="$(cd "$repo_root" && swift build -c release --scratch-path "$scratch" --show-bin-path)/viewportd"
fi
[[ -x "$binary" ]] || die "no executable at $binary"

# --- cleanup of everything we start --------------------------------------------------------
work="$(mktemp -d -t viewportd-load.XXXXXX)"
vp_pid="" nginx_pid="" st_pid="" redis_pid=""
stop_pid() {  # stop_pid PID: SIGTERM, then SIGKILL after 10 s
    local p="$1" i
    [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null || return 0
    kill -TERM "$p" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
}
cleanup() {
    stop_pid "$nginx_pid"; stop_pid "$vp_pid"; stop_pid "$st_pid"; stop_pid "$redis_pid"
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# --- start viewportd -------------------------------------------------------------------------
vp_port="$(free_port)"
vp_base="http://127.0.0.1:$vp_port"
env_args=(HTTP_HOST=127.0.0.1 HTTP_PORT="$vp_port"
          SESSIONS_MAX=$((connections + 1000)) LAYOUTS_MAX_ITEMS=$((items > 2000000 ? items : 2000000))
          HTTP_MAX_BODY_BYTES=1073741824 HTTP_CONNECTION_TIMEOUT=600)
[[ -n "$http_threads" ]] && env_args+=(HTTP_THREADS="$http_threads")
( cd "$repo_root" && exec env "${env_args[@]}" "$binary" ) >"$work/viewportd.log" 2>&1 &
vp_pid=$!
for ((i = 0; i < 300; i++)); do
    grep -q 'listening on http://' "$work/viewportd.log" && break
    kill -0 "$vp_pid" 2>/dev/null || { cat "$work/viewportd.log" >&2; die "viewportd exited before listening"; }
    sleep 0.1
done
grep -q 'listening on http://' "$work/viewportd.log" || die "viewportd did not log 'listening on http://' within 30 s"
log "viewportd $(grep -m1 -o 'listening on http://[^ ]*' "$work/viewportd.log") (pid $vp_pid)"

# --- with --store: redis-server and a second viewportd using it ------------------------------
st_base=""
if [[ "$mode" == rps && $with_store -eq 1 ]]; then
    command -v redis-server >/dev/null || die "redis-server missing (scripts/install-deps.sh)"
    redis_port="$(free_port)"
    redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no --protected-mode no \
        --loglevel warning >"$work/redis.log" 2>&1 &
    redis_pid=$!
    for ((i = 0; i < 100; i++)); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    st_port="$(free_port)"
    st_base="http://127.0.0.1:$st_port"
    ( cd "$repo_root" && exec env "${env_args[@]/#HTTP_PORT=*/HTTP_PORT=$st_port}" STORE_URL="redis://127.0.0.1:$redis_port" "$binary" ) \
        >"$work/viewportd-store.log" 2>&1 &
    st_pid=$!
    for ((i = 0; i < 300; i++)); do
        grep -q 'listening on http://' "$work/viewportd-store.log" && break
        kill -0 "$st_pid" 2>/dev/null || { cat "$work/viewportd-store.log" >&2; die "viewportd (store) exited before listening"; }
        sleep 0.1
    done
    log "viewportd with store.url=redis://127.0.0.1:$redis_port on $st_base (pid $st_pid)"
fi

# --- layout --------------------------------------------------------------------------------
# A vertical list: item i is [0, 50 i, 375, 50], reuse "row"; 375x667 viewport, buffer 20.
gen_layout() {  # gen_layout N FILE
    python3 - "$1" "$2" <<'EOF'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write('{"items":[')
    chunk = 100000
    for start in range(0, n, chunk):
        f.write(",".join('{"id":"%d","rect":[0,%d,375,50],"reuse":"row"}' % (i, 50 * i)
                         for i in range(start, min(n, start + chunk))))
        if start + chunk < n:
            f.write(",")
    f.write(']}')
EOF
}
json_field() {  # json_field FILE KEY
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

t0=$(date +%s.%N)
gen_layout "$items" "$work/layout.json"
t1=$(date +%s.%N)
log "generated a $items-item layout ($(du -h "$work/layout.json" | cut -f1)) in $(python3 -c "print(f'{$t1 - $t0:.2f}')") s"

post_time="$(curl -sS --max-time 300 -o "$work/layout-response.json" -w '%{http_code} %{time_total}' \
    -H 'Content-Type: application/json' --data-binary @"$work/layout.json" "$vp_base/v1/layouts")"
post_code="${post_time%% *}"; post_time="${post_time#* }"
[[ "$post_code" == 201 || "$post_code" == 200 ]] || { cat "$work/layout-response.json" >&2; die "POST /v1/layouts answered $post_code"; }
layout_id="$(json_field "$work/layout-response.json" layout)"
log "POST /v1/layouts: $post_code in $post_time s, layout $layout_id"

open_session() {  # open_session [BASE_URL]: prints the session id
    local out="$work/session-$RANDOM.json" code
    code="$(curl -sS --max-time 30 -o "$out" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data "{\"layout\":\"$layout_id\",\"viewport\":[375,667]}" "${1:-$vp_base}/v1/sessions")"
    [[ "$code" == 201 ]] || { cat "$out" >&2; die "POST /v1/sessions answered $code"; }
    json_field "$out" session
}

content_h=$((items * 50))
max_y=$((content_h > 667 ? content_h - 667 : 1))

# =========================================================================================
if [[ "$mode" == stream ]]; then
    session="$(open_session)"
    python3 - "$updates" "$step" "$max_y" "$work/updates.ndjson" <<'EOF'
import sys
n, step, max_y, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
period = 2 * max_y  # scroll down to the end, then back up
with open(path, "w") as f:
    chunk = 100000
    for start in range(0, n, chunk):
        lines = []
        for i in range(start, min(n, start + chunk)):
            y = ((i + 1) * step) % period
            if y > max_y:
                y = period - y
            lines.append('{"offset":[0,%d]}\n' % y)
        f.write("".join(lines))
EOF
    log "generated $updates updates ($(du -h "$work/updates.ndjson" | cut -f1)), step $step pt"
    res="$(curl -sS --max-time 600 -o "$work/plans.ndjson" -w '%{http_code} %{time_total}' \
        -H 'Content-Type: application/x-ndjson' --data-binary @"$work/updates.ndjson" \
        "$vp_base/v1/sessions/$session/viewport")"
    code="${res%% *}"; secs="${res#* }"
    lines="$(wc -l < "$work/plans.ndjson")"
    problems="$(grep -c '"title"' "$work/plans.ndjson" || true)"
    [[ "$code" == 200 ]] || { head -c 2000 "$work/plans.ndjson" >&2; die "NDJSON stream answered $code"; }
    [[ "$problems" -eq 0 ]] || { grep -m3 '"title"' "$work/plans.ndjson" >&2; die "the stream answered $problems problem line(s)"; }
    [[ "$lines" -eq "$updates" ]] || die "sent $updates updates, got $lines plan lines"
    rate="$(python3 -c "print(f'{$lines / $secs:,.0f}')")"
    echo
    echo "== viewportd NDJSON stream, $items-item layout =="
    printf '%-34s %s s (%s bytes, HTTP %s)\n' "POST layout (parse + index):" "$post_time" "$(stat -c %s "$work/layout.json")" "$post_code"
    printf '%-34s %s in %s s\n' "updates -> plans:" "$lines" "$secs"
    printf '%-34s %s updates/s\n' "throughput:" "$rate"
    printf '%-34s %s bytes of plans\n' "response:" "$(stat -c %s "$work/plans.ndjson")"
    exit 0
fi

# =========================================================================================
# rps mode: one session per connection.
log "opening $connections sessions"
sessions=()
for ((i = 0; i < connections; i++)); do sessions+=("$(open_session)"); done
store_sessions=()
if [[ -n "$st_base" ]]; then
    code="$(curl -sS --max-time 300 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
        --data-binary @"$work/layout.json" "$st_base/v1/layouts")"
    [[ "$code" == 201 || "$code" == 200 ]] || die "POST /v1/layouts (store) answered $code"
    for ((i = 0; i < connections; i++)); do store_sessions+=("$(open_session "$st_base")"); done
fi

# One real plan body and its Content-Type, for nginx to answer: the second step of a session
# (the first one still creates views; from the second on, plans recycle and reuse as under load).
curl -sS --max-time 10 -o /dev/null -H 'Content-Type: application/json' \
    --data "{\"offset\":[0,$step]}" "$vp_base/v1/sessions/${sessions[0]}/viewport"
curl -sS --max-time 10 -D "$work/plan.headers" -o "$work/plan.body" -H 'Content-Type: application/json' \
    --data "{\"offset\":[0,$((2 * step))]}" "$vp_base/v1/sessions/${sessions[0]}/viewport" >/dev/null
grep -q '^HTTP/[0-9.]* 200' "$work/plan.headers" || { cat "$work/plan.headers" "$work/plan.body" >&2; die "viewport update did not answer 200"; }
content_type="$(grep -i '^content-type:' "$work/plan.headers" | head -n1 | cut -d: -f2- | tr -d '\r' | sed 's/^ *//')"
log "captured plan: $(stat -c %s "$work/plan.body") bytes, Content-Type: $content_type: $(head -c 160 "$work/plan.body")"

# wrk Lua: each thread takes its slice of the sessions and cycles through it, so each of its
# connections mostly drives its own session; every session's Y moves by --step per request,
# down to the end of the content and back up.
write_lua() {  # write_lua SESSION... > FILE
    echo "local all = {"
    for s in "$@"; do echo "  \"$s\","; done
    echo "}"
    cat <<EOF
local threads, step, max_y = $threads, $step, $max_y
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end
function init(args)
  mine, ys = {}, {}
  for i = 1, #all do
    if (i - 1) % threads == tid then
      mine[#mine + 1] = all[i]
      ys[#mine] = (#mine * 1009) % max_y
    end
  end
  if #mine == 0 then mine[1] = all[1]; ys[1] = 0 end
  nxt = 0
  hdrs = { ["Content-Type"] = "application/json" }
end
function request()
  nxt = nxt % #mine + 1
  local y = (ys[nxt] + step) % (2 * max_y)
  ys[nxt] = y
  if y > max_y then y = 2 * max_y - y end
  return wrk.format("POST", "/v1/sessions/" .. mine[nxt] .. "/viewport", hdrs,
                    '{"offset":[0,' .. y .. ']}')
end
EOF
}
write_lua "${sessions[@]}" > "$work/viewport.lua"
[[ -n "$st_base" ]] && write_lua "${store_sessions[@]}" > "$work/viewport-store.lua"

run_wrk() {  # run_wrk NAME ROUND BASE_URL [LUA] -> writes $work/wrk-NAME-ROUND.txt
    local name="$1" round="$2" url="$3" script="${4:-$work/viewport.lua}" secs
    secs="$(python3 -c "import re,sys; d=sys.argv[1]; m=re.fullmatch(r'(\d+)([smh]?)', d); print(int(m[1]) * {'':1,'s':1,'m':60,'h':3600}[m[2]])" "$duration")"
    log "round $round/$rounds: wrk -t$threads -c$connections -d$duration --latency against $name ($url)"
    timeout --signal=INT --kill-after=10 $((secs + 30)) \
        wrk -t"$threads" -c"$connections" -d"$duration" --timeout 5s --latency -s "$script" "$url" \
        > "$work/wrk-$name-$round.txt" 2>&1 || { cat "$work/wrk-$name-$round.txt" >&2; die "wrk against $name failed"; }
}

# Summarize the wrk reports of one server over all rounds, tab-separated:
#   median rps, median p50 ms, median p99 ms, non-2xx (sum), socket errors (sum),
#   socket errors (text), requests (sum), per-round rps
summarize_wrk() {
    python3 - "$@" <<'EOF'
import re, statistics, sys
def ms(v, unit):
    return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]
rows = []
for path in sys.argv[1:]:
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s*([\d.]+)", text)[1])
    lat = dict((p, ms(v, u)) for p, v, u in re.findall(r"^\s*(50|99)%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M))
    non2xx = int((re.search(r"Non-2xx or 3xx responses:\s*(\d+)", text) or [0, 0])[1])
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    sock = [int(x) for x in sock.groups()] if sock else [0, 0, 0, 0]
    reqs = int(re.search(r"(\d+) requests in", text)[1])
    rows.append((rps, lat.get("50", float("nan")), lat.get("99", float("nan")), non2xx, sock, reqs))
med = lambda i: statistics.median(r[i] for r in rows)
sock = [sum(r[4][k] for r in rows) for k in range(4)]
sock_text = "none" if sum(sock) == 0 else "connect %d read %d write %d timeout %d" % tuple(sock)
print("\t".join([f"{med(0):.0f}", f"{med(1):.3f}", f"{med(2):.3f}", str(sum(r[3] for r in rows)),
                 str(sum(sock)), sock_text, str(sum(r[5] for r in rows)),
                 "/".join(f"{r[0]:.0f}" for r in rows)]))
EOF
}

if [[ $with_nginx -eq 1 ]]; then
    # nginx returns the captured body verbatim: it must not contain what an nginx string would
    # interpret ($variables) or end the quoted string.
    if grep -q '[$\\'"'"']' "$work/plan.body"; then die "captured plan contains \$, \\ or ': cannot embed it in nginx.conf"; fi
    ng_port="$(free_port)"
    mkdir -p "$work/nginx/logs" "$work/nginx/tmp"
    cat > "$work/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/nginx/tmp/body;
    proxy_temp_path $work/nginx/tmp/proxy;
    fastcgi_temp_path $work/nginx/tmp/fastcgi;
    uwsgi_temp_path $work/nginx/tmp/uwsgi;
    scgi_temp_path $work/nginx/tmp/scgi;
    keepalive_requests 100000000;
    keepalive_timeout 600s;
    server {
        listen 127.0.0.1:$ng_port;
        location ~ ^/v1/sessions/[^/]+/viewport\$ {
            if (\$request_method != POST) { return 405; }
            default_type "$content_type";
            return 200 '$(cat "$work/plan.body")';
        }
        location / { return 404; }
    }
}
EOF
    "$nginx_bin" -p "$work/nginx" -e "$work/nginx/logs/error.log" -c "$work/nginx/nginx.conf" -t >/dev/null 2>"$work/nginx/test.log" \
        || { cat "$work/nginx/test.log" >&2; die "nginx -t rejected the config"; }
    "$nginx_bin" -p "$work/nginx" -e "$work/nginx/logs/error.log" -c "$work/nginx/nginx.conf" >"$work/nginx/stdout.log" 2>&1 &
    nginx_pid=$!
    for ((i = 0; i < 100; i++)); do
        curl -s --max-time 1 -o /dev/null "http://127.0.0.1:$ng_port/" && break
        kill -0 "$nginx_pid" 2>/dev/null || { cat "$work/nginx/logs/error.log" >&2; die "nginx exited"; }
        sleep 0.1
    done
    curl -sS --max-time 5 -D "$work/nginx.headers" -o "$work/nginx.body" -H 'Content-Type: application/json' \
        --data '{"offset":[0,1]}' "http://127.0.0.1:$ng_port/v1/sessions/${sessions[0]}/viewport" >/dev/null
    cmp -s "$work/nginx.body" "$work/plan.body" || die "nginx does not answer the captured plan bytes"
    grep -qi "^content-type: $content_type" "$work/nginx.headers" || die "nginx answers another Content-Type: $(grep -i '^content-type' "$work/nginx.headers")"
    log "nginx on 127.0.0.1:$ng_port answers the same $(stat -c %s "$work/nginx.body") bytes (pid $nginx_pid)"
fi

# Interleaved rounds (viewportd, nginx, viewportd, nginx, ...), so that a neighbour's load on a
# shared machine hits both alike; medians are reported.
for ((round = 1; round <= rounds; round++)); do
    run_wrk viewportd "$round" "$vp_base"
    [[ -n "$st_base" ]] && run_wrk store "$round" "$st_base" "$work/viewport-store.lua"
    [[ $with_nginx -eq 1 ]] && run_wrk nginx "$round" "http://127.0.0.1:$ng_port"
done

IFS=$'\t' read -r vp_rps vp_p50 vp_p99 vp_non2xx vp_sock vp_sock_text vp_reqs vp_rounds \
    < <(summarize_wrk "$work"/wrk-viewportd-*.txt)
if [[ -n "$st_base" ]]; then
    IFS=$'\t' read -r st_rps st_p50 st_p99 st_non2xx st_sock st_sock_text st_reqs st_rounds \
        < <(summarize_wrk "$work"/wrk-store-*.txt)
fi
if [[ $with_nginx -eq 1 ]]; then
    IFS=$'\t' read -r ng_rps ng_p50 ng_p99 ng_non2xx ng_sock ng_sock_text ng_reqs ng_rounds \
        < <(summarize_wrk "$work"/wrk-nginx-*.txt)
fi

# Evidence that the plans were real: one session's counters after the run.
curl -sS --max-time 10 -o "$work/session0.json" "$vp_base/v1/sessions/${sessions[0]}" || true
vp_stats="$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d.get("stats", d), separators=(",", ":")))' "$work/session0.json" 2>/dev/null || echo "?")"

echo
echo "== wrk -t$threads -c$connections -d$duration x $rounds round(s): POST /v1/sessions/{id}/viewport, $connections sessions, $items-item vertical list, step $step pt =="
echo "   (load average before: $load_before)"
printf '%-10s %12s %10s %10s %10s %10s  %-16s %s\n' "server" "requests/s" "p50 ms" "p99 ms" "requests" "non-2xx" "socket errors" "requests/s per round"
printf '%-10s %12s %10s %10s %10s %10s  %-16s %s\n' viewportd "$vp_rps" "$vp_p50" "$vp_p99" "$vp_reqs" "$vp_non2xx" "$vp_sock_text" "$vp_rounds"
if [[ -n "$st_base" ]]; then
    printf '%-10s %12s %10s %10s %10s %10s  %-16s %s\n' "+store" "$st_rps" "$st_p50" "$st_p99" "$st_reqs" "$st_non2xx" "$st_sock_text" "$st_rounds"
    echo "ratio with store / without requests/s: $(python3 -c "print(f'{$st_rps / $vp_rps:.2f}')")  (medians$([[ $rounds -gt 1 ]] && echo " of $rounds rounds"); target >= 0.8)"
fi
if [[ $with_nginx -eq 1 ]]; then
    printf '%-10s %12s %10s %10s %10s %10s  %-16s %s\n' nginx "$ng_rps" "$ng_p50" "$ng_p99" "$ng_reqs" "$ng_non2xx" "$ng_sock_text" "$ng_rounds"
    echo "ratio viewportd/nginx requests/s: $(python3 -c "print(f'{$vp_rps / $ng_rps:.2f}')")  (medians$([[ $rounds -gt 1 ]] && echo " of $rounds rounds"))"
fi
echo "response: $(stat -c %s "$work/plan.body") bytes ($content_type): $(cat "$work/plan.body")"
echo "viewportd session 1 of $connections after the run: $vp_stats"
status=0
if [[ "$vp_non2xx" -ne 0 || "$vp_sock" -ne 0 ]]; then echo "load: viewportd had errors"; status=1; fi
if [[ -n "$st_base" ]] && [[ "$st_non2xx" -ne 0 || "$st_sock" -ne 0 ]]; then echo "load: viewportd with the store had errors"; status=1; fi
exit $status
