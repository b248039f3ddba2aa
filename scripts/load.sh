#!/usr/bin/env bash
# Load tests for viewportd, on loopback only, bounded in time; everything started is stopped on
# exit.
#
#   scripts/load.sh [rps] [options]
#       Posts a vertical-list layout (--items, default 10,000), opens one session per wrk
#       connection, and runs `wrk -t2 -c64 -d10s --latency` with a Lua script that POSTs
#       {"offset":[0,Y]} to /v1/sessions/{id}/viewport, on three shapes: `empty` (the offset the
#       session already has: empty plans), `steps` (Y moves by --step, 97 pt: a few views recycle
#       and reuse) and `jumps` (Y moves by --jump, 5003 pt: every view leaves and as many enter).
#       For each shape it captures one real plan from viewportd and runs the identical wrk load
#       against two servers answering those bytes: nginx (`return 200` with the same Content-Type)
#       and a bare libmicrohttpd server (scripts/mhd-reference.c, built here with viewportd's MHD
#       flags and options: thread pool + epoll, the same threads and connection memory). Rounds
#       are interleaved (per shape: viewportd, nginx, bare MHD). Prints requests/s, p50/p99 and
#       errors of each, and viewportd's ratios to nginx and to bare MHD (median, and the range of
#       the per-round ratios).
#
#   scripts/load.sh stream [options]
#       Posts a 1,000,000-item layout (timed: post + index), opens a session and sends
#       1,000,000 small-step updates as one NDJSON stream with curl; prints updates/s. Then runs
#       the native client (`viewport-bench 0 net`, Sources/viewport-bench/NetBench.swift) on a
#       layout of the same size: NDJSON streams of small steps and of jumps (--jumps, random
#       offsets) sent whole before anything is read; the same traces over a WebSocket,
#       pipelined, as a ratio of the NDJSON rate (target >= 0.5); sequential WebSocket round
#       trips (--round-trips) against a bare TCP ping-pong on loopback in the same run (target
#       <= 2x).
#
#   scripts/load.sh sessions [options]
#       Posts the 10,000-row list and opens sessions in steps (--counts, default
#       1000,10000,100000; `viewport-bench 0 open-sessions`, one keep-alive connection); after
#       each step prints viewportd's RSS, its growth per session (target <= 2 KiB), and the wrk
#       load of the rps mode (steps of --step pt) spread over all the sessions open.
#
# Options:
#   --binary PATH      use this viewportd instead of building one
#   --scratch-path DIR swift build scratch path (default .build)
#   --items N          layout size (default 10000; stream mode 1000000)
#   --updates N        stream mode: updates in the stream (default 1000000)
#   --threads N        wrk threads (default 2)       --connections N  wrk connections (default 64)
#   --duration D       wrk duration (default 10s)    --step PT        offset step per update (default 97; stream 7)
#   --jump PT          rps mode: the jumps shape's step (default 5003)
#   --shapes LIST      rps mode: comma-separated shapes to run (default empty,steps,jumps)
#   --http-threads N   viewportd http.threads (default: the config file's)
#   --rounds N         rps mode: N interleaved rounds (viewportd, nginx, ...), medians reported
#                      (default 1; use 3+ on a machine shared with other work)
#   --no-nginx         rps mode: skip the nginx comparison
#   --no-mhd           rps mode: skip the bare libmicrohttpd comparison
#   --jumps N          stream mode: jumps in the native client's jump stream (default 100000)
#   --round-trips N    stream mode: sequential WebSocket round trips (default 20000)
#   --counts LIST      sessions mode: session counts to reach (default 1000,10000,100000)
#   --bench PATH       the viewport-bench binary (default: beside viewportd, built if missing)
#   --baseline PATH    rps mode: also run this viewportd binary (another build) in the same interleaved
#                      rounds, and print the ratio viewportd / baseline on each shape (A/B). Stream
#                      mode: after the runs above, the native client's four streams against
#                      viewportd and this build in --rounds alternate rounds (each posts its own
#                      layout of --items), the range of each and the ratio viewportd / baseline
#   --perf DIR         rps mode: `perf record -e cpu-clock -g` on viewportd, the baseline and the bare
#                      MHD server during each of their wrk runs, into DIR/NAME-SHAPE-ROUND.perf (read
#                      with `perf report -i FILE` or scripts/perf-breakdown.py FILE --requests N)
#   --mhd-work NS      rps mode: the bare libmicrohttpd server spins NS ns of CPU per request before
#                      answering (default 0): a control that costs what viewportd costs a request,
#                      to tell what a latency tail owes to CPU per request alone
#   --server-cpus LIST rps mode: pin every server process (all threads; nginx's workers too) to
#                      these CPUs (taskset list, e.g. 0)     --wrk-cpus LIST  pin wrk to these (e.g. 1):
#                      with both, the load generator no longer takes the servers' cores, which on a
#                      2-core machine is what decides p99 (docs/performance.md "HTTP")
#   LOAD_KEEP=DIR      (environment) copy the work directory (wrk's full reports with their latency
#                      distributions, the servers' logs, the captured plans) to DIR on exit
#   --store            rps mode: also run a second viewportd with a shared store (a redis-server on
#                      another loopback port, store.url set), in the same interleaved rounds, and
#                      print the ratio with a store / without on each shape (docs/operations/store.md)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=rps
if [[ "${1:-}" == rps || "${1:-}" == stream || "${1:-}" == sessions ]]; then mode="$1"; shift; fi

binary="" scratch="$repo_root/.build" items="" updates=1000000 threads=2 connections=64
duration=10s step="" http_threads="" with_nginx=1 rounds=1 with_store=0 with_mhd=1 jump=5003 shapes=empty,steps,jumps perf_dir="" baseline="" server_cpus="" wrk_cpus="" mhd_work=0 jumps=100000 round_trips=20000 counts=1000,10000,100000 bench=""
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
        --no-mhd) with_mhd=0; shift ;;
        --perf) perf_dir="$2"; shift 2 ;;
        --baseline) baseline="$2"; shift 2 ;;
        --jumps) jumps="$2"; shift 2 ;;
        --round-trips) round_trips="$2"; shift 2 ;;
        --counts) counts="$2"; shift 2 ;;
        --bench) bench="$2"; shift 2 ;;
        --jump) jump="$2"; shift 2 ;;
        --shapes) shapes="$2"; shift 2 ;;
        --store) with_store=1; shift ;;
        --server-cpus) server_cpus="$2"; shift 2 ;;
        --mhd-work) mhd_work="$2"; shift 2 ;;
        --wrk-cpus) wrk_cpus="$2"; shift 2 ;;
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
if [[ "$mode" != rps && -z "$bench" ]]; then
    bench="$(dirname "$binary")/viewport-bench"
    if [[ ! -x "$bench" ]]; then
        log "building release viewport-bench (scratch path $scratch)"
        (cd "$repo_root" && swift build -c release --scratch-path "$scratch" --product viewport-bench >&2)
        bench="$(cd "$repo_root" && swift build -c release --scratch-path "$scratch" --show-bin-path)/viewport-bench"
    fi
fi

# --- cleanup of everything we start --------------------------------------------------------
work="$(mktemp -d -t viewportd-load.XXXXXX)"
vp_pid="" nginx_pid="" st_pid="" redis_pid="" mhd_pids=() bl_pid=""
stop_pid() {  # stop_pid PID: SIGTERM, then SIGKILL after 10 s
    local p="$1" i
    [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null || return 0
    kill -TERM "$p" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
}
cleanup() {
    stop_pid "$nginx_pid"; stop_pid "$vp_pid"; stop_pid "$st_pid"; stop_pid "$redis_pid"; stop_pid "$bl_pid"
    local p; for p in "${mhd_pids[@]}"; do stop_pid "$p"; done
    wait 2>/dev/null || true
    [[ -n "${LOAD_KEEP:-}" ]] && cp -r "$work" "$LOAD_KEEP"; rm -rf "$work"
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
          SESSIONS_MAX=$(( $([[ $mode == sessions ]] && tr ',' '\n' <<<"$counts" | sort -n | tail -1 || echo "$connections") + 1000 ))
          SESSIONS_IDLE_TIMEOUT=3600 LAYOUTS_MAX_ITEMS=$((items > 2000000 ? items : 2000000))
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

# --- with --baseline: the other build, configured alike -------------------------------------
bl_base=""
if [[ "$mode" != sessions && -n "$baseline" ]]; then
    [[ -x "$baseline" ]] || die "no executable at $baseline"
    bl_port="$(free_port)"
    bl_base="http://127.0.0.1:$bl_port"
    ( cd "$repo_root" && exec env "${env_args[@]/#HTTP_PORT=*/HTTP_PORT=$bl_port}" "$baseline" ) >"$work/viewportd-baseline.log" 2>&1 &
    bl_pid=$!
    for ((i = 0; i < 300; i++)); do
        grep -q 'listening on http://' "$work/viewportd-baseline.log" && break
        kill -0 "$bl_pid" 2>/dev/null || { cat "$work/viewportd-baseline.log" >&2; die "baseline viewportd exited before listening"; }
        sleep 0.1
    done
    log "baseline viewportd $baseline on $bl_base (pid $bl_pid)"
fi

# --- layout --------------------------------------------------------------------------------
# A vertical list: item i is [0, 50 i, 375, 50], reuse "row"; 375x667 viewport, buffer 20.
gen_layout() {  # gen_layout N FILE
    python3 "$repo_root/scripts/gen-list-layout.py" "$1" "$2"
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

# Summarize the wrk reports of one server on one shape over all rounds, tab-separated:
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
    rm -f "$work/plans.ndjson" "$work/updates.ndjson"
    echo
    echo "== native client (viewport-bench 0 net): $items-item layout, $updates small steps, $jumps jumps =="
    "$bench" 0 net "$vp_port" "$items" "$updates" "$jumps" 0 ndjson-steps,ndjson-jumps,ws-steps,ws-jumps
    if [[ -n "$bl_base" ]]; then
        # The same client against both builds, taking turns, so that the machine's noise hits
        # both alike (one server's rates move 10-25 % from run to run here).
        echo
        echo "== A/B, native client: viewportd against the baseline ($baseline), $rounds alternate round(s) =="
        for ((r = 1; r <= rounds; r++)); do
            "$bench" 0 net "$vp_port" "$items" "$updates" "$jumps" 0 ndjson-steps,ndjson-jumps,ws-steps,ws-jumps > "$work/ab-viewportd-$r.txt"
            "$bench" 0 net "$bl_port" "$items" "$updates" "$jumps" 0 ndjson-steps,ndjson-jumps,ws-steps,ws-jumps > "$work/ab-baseline-$r.txt"
        done
        python3 - "$work" "$rounds" <<'EOF'
import re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def rates(path):
    out = {}
    for line in open(path):
        m = re.match(r"(NDJSON, .*?|WebSocket pipelined, .*?)(?:, sent whole then read)?\s+([\d.]+) M updates/s", line)
        if m:
            out[m[1]] = float(m[2])
    return out
runs = {name: [rates(f"{work}/ab-{name}-{r}.txt") for r in range(1, rounds + 1)] for name in ("viewportd", "baseline")}
print(f"{'stream':<40} {'viewportd M/s':>16} {'baseline M/s':>16}   viewportd / baseline")
for key in runs["viewportd"][0]:
    a = [run.get(key, float("nan")) for run in runs["viewportd"]]
    b = [run.get(key, float("nan")) for run in runs["baseline"]]
    ratios = [x / y for x, y in zip(a, b)]
    span = lambda v: f"{min(v):.3f}-{max(v):.3f}" if len(v) > 1 else f"{v[0]:.3f}"
    print(f"{key:<40} {span(a):>16} {span(b):>16}   {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
EOF
    fi
    # Round trips, on a 10,000-item layout (the trace is small steps). A reply that has to wake a
    # thread on the other CPU costs ~55 µs here, one between threads sharing a CPU ~12 µs,
    # whichever server answers; unpinned, the scheduler places viewportd's socket thread and the
    # bench's echo thread independently and the ratio is a coin toss (0.3x-4.7x). So both
    # placements, each the same for both servers: viewportd (its threads, and the socket thread
    # it starts for the connection) and the echo thread on CPU 0, the client on CPU 1; then all
    # three on CPU 0.
    if [[ "$(nproc)" -ge 2 ]] && command -v taskset >/dev/null; then
        taskset -a -p -c 0 "$vp_pid" >/dev/null
        echo
        echo "== round trips ($round_trips): viewportd and the echo thread on CPU 0, the client on CPU 1 =="
        VIEWPORT_BENCH_ECHO_CPU=0 taskset -c 1 "$bench" 0 net "$vp_port" 10000 "$round_trips" 0 "$round_trips" rtt
        echo
        echo "== round trips ($round_trips): viewportd, the echo thread and the client on CPU 0 =="
        VIEWPORT_BENCH_ECHO_CPU=0 taskset -c 0 "$bench" 0 net "$vp_port" 10000 "$round_trips" 0 "$round_trips" rtt
    else
        echo
        echo "== round trips ($round_trips), unpinned (one CPU, or no taskset) =="
        "$bench" 0 net "$vp_port" 10000 "$round_trips" 0 "$round_trips" rtt
    fi
    exit 0
fi

# =========================================================================================
if [[ "$mode" == sessions ]]; then
    rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$vp_pid/status"; }
    base_kb="$(rss_kb)"
    : > "$work/sessions.txt"
    opened=0
    cat > "$work/sessions.lua" <<EOF
local step, max_y = $step, $max_y
local ids = {}
for line in io.lines("$work/sessions.txt") do ids[#ids + 1] = line end
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end
function init(args)
  nxt = tid
  ys = {}
end
function request()
  nxt = nxt % #ids + 1
  local y = ((ys[nxt] or (nxt * 7919) % max_y) + step) % (2 * max_y)
  ys[nxt] = y
  if y > max_y then y = 2 * max_y - y end
  return wrk.format("POST", "/v1/sessions/" .. ids[nxt] .. "/viewport", { ["Content-Type"] = "application/json" },
                    '{"offset":[0,' .. y .. ']}')
end
EOF
    rows=()
    IFS=',' read -r -a count_list <<<"$counts"
    for n in "${count_list[@]}"; do
        (( n > opened )) || continue
        log "opening $((n - opened)) sessions (to $n)"
        "$bench" 0 open-sessions "$vp_port" "$layout_id" "$((n - opened))" "$work/sessions.txt" >&2
        opened=$n
        sleep 1
        kb="$(rss_kb)"
        per="$(( (kb - base_kb) * 1024 / n ))"
        log "wrk -t$threads -c$connections -d$duration over $n sessions"
        timeout --signal=INT --kill-after=10 600 wrk -t"$threads" -c"$connections" -d"$duration" --timeout 5s --latency \
            -s "$work/sessions.lua" "$vp_base" > "$work/wrk-sessions-$n.txt" 2>&1 || { cat "$work/wrk-sessions-$n.txt" >&2; die "wrk failed"; }
        IFS=$'\t' read -r rps p50 p99 non2xx sock sock_text reqs per_round < <(summarize_wrk "$work/wrk-sessions-$n.txt")
        after_kb="$(rss_kb)"
        rows+=("$(printf '%-10s %10s %14s %14s %12s %8s %8s %8s' "$n" "$((kb / 1024))" "$per" "$((after_kb / 1024))" "$rps" "$p50" "$p99" "$((non2xx + sock))")")
    done
    echo
    echo "== sessions at scale: $items-row list, wrk -t$threads -c$connections -d$duration, $step pt steps spread over every open session =="
    echo "   (RSS with the layout and no session: $((base_kb / 1024)) MB; load average before: $load_before)"
    printf '%-10s %10s %14s %14s %12s %8s %8s %8s\n' "sessions" "RSS MB" "bytes/session" "RSS after MB" "requests/s" "p50 ms" "p99 ms" "errors"
    for row in "${rows[@]}"; do echo "$row"; done
    exit 0
fi

# =========================================================================================
# rps mode: one session per connection; every shape, every server, in interleaved rounds.
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
baseline_sessions=()
if [[ -n "$bl_base" ]]; then
    code="$(curl -sS --max-time 300 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
        --data-binary @"$work/layout.json" "$bl_base/v1/layouts")"
    [[ "$code" == 201 || "$code" == 200 ]] || die "POST /v1/layouts (baseline) answered $code"
    for ((i = 0; i < connections; i++)); do baseline_sessions+=("$(open_session "$bl_base")"); done
fi

# The offset step of each shape: empty plans post the offset the session already has, steps move
# by --step, jumps by --jump (more than a screen plus both buffers: every view leaves, as many enter).
shape_step() {
    case "$1" in
        empty) echo 0 ;;
        steps) echo "$step" ;;
        jumps) echo "$jump" ;;
        *) die "unknown shape $1 (empty, steps, jumps)" ;;
    esac
}
IFS=',' read -r -a shape_list <<<"$shapes"
for shape in "${shape_list[@]}"; do shape_step "$shape" >/dev/null; done

# One real plan body per shape and its Content-Type, for nginx and the bare MHD server to answer:
# session 1 takes two updates of the shape from a fresh spot (the first may still create views;
# the second recycles and reuses as under load) and the second answer is kept.
capture_y=1009
for shape in "${shape_list[@]}"; do
    s="$(shape_step "$shape")"
    capture_y=$(( (capture_y + 20011) % max_y ))
    for y in $(( (capture_y + s) % max_y )) $(( (capture_y + 2 * s) % max_y )); do
        curl -sS --max-time 10 -D "$work/plan-$shape.headers" -o "$work/plan-$shape.body" -H 'Content-Type: application/json' \
            --data "{\"offset\":[0,$y]}" "$vp_base/v1/sessions/${sessions[0]}/viewport" >/dev/null
    done
    grep -q '^HTTP/[0-9.]* 200' "$work/plan-$shape.headers" || { cat "$work/plan-$shape.headers" "$work/plan-$shape.body" >&2; die "viewport update did not answer 200"; }
    log "captured $shape plan: $(stat -c %s "$work/plan-$shape.body") bytes: $(head -c 160 "$work/plan-$shape.body")"
done
content_type="$(grep -i '^content-type:' "$work/plan-${shape_list[0]}.headers" | head -n1 | cut -d: -f2- | tr -d '\r' | sed 's/^ *//')"

# wrk Lua: each thread takes its slice of the sessions and cycles through it, so each of its
# connections mostly drives its own session; every session's Y moves by the shape's step per
# request, down to the end of the content and back up (a step of 0 repeats the same offset).
write_lua() {  # write_lua STEP SESSION... > FILE
    local s="$1"; shift
    echo "local all = {"
    for id in "$@"; do echo "  \"$id\","; done
    echo "}"
    cat <<EOF
local threads, step, max_y = $threads, $s, $max_y
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
for shape in "${shape_list[@]}"; do
    write_lua "$(shape_step "$shape")" "${sessions[@]}" > "$work/viewport-$shape.lua"
    [[ -n "$st_base" ]] && write_lua "$(shape_step "$shape")" "${store_sessions[@]}" > "$work/store-$shape.lua"
    [[ -n "$bl_base" ]] && write_lua "$(shape_step "$shape")" "${baseline_sessions[@]}" > "$work/baseline-$shape.lua"
done

run_wrk() {  # run_wrk NAME SHAPE ROUND BASE_URL LUA -> writes $work/wrk-NAME-SHAPE-ROUND.txt
    local name="$1" shape="$2" round="$3" url="$4" script="$5" secs
    secs="$(python3 -c "import re,sys; d=sys.argv[1]; m=re.fullmatch(r'(\d+)([smh]?)', d); print(int(m[1]) * {'':1,'s':1,'m':60,'h':3600}[m[2]])" "$duration")"
    log "round $round/$rounds, $shape: wrk -t$threads -c$connections -d$duration --latency against $name ($url)"
    local perf_pid=""
    local target_pid=""
    [[ $name == viewportd ]] && target_pid="$vp_pid"
    [[ $name == mhd ]] && target_pid="${mhd_pid_of[$shape]}"
    [[ $name == baseline ]] && target_pid="$bl_pid"
    if [[ -n "$perf_dir" && -n "$target_pid" ]]; then
        mkdir -p "$perf_dir"
        perf record -q -e cpu-clock -g -p "$target_pid" -o "$perf_dir/$name-$shape-$round.perf" -- sleep "$secs" \
            >"$work/perf.log" 2>&1 &
        perf_pid=$!
    fi
    local pin=()
    [[ -n "$wrk_cpus" ]] && pin=(taskset -c "$wrk_cpus")
    timeout --signal=INT --kill-after=10 $((secs + 30)) \
        "${pin[@]}" wrk -t"$threads" -c"$connections" -d"$duration" --timeout 5s --latency -s "$script" "$url" \
        > "$work/wrk-$name-$shape-$round.txt" 2>&1 || { cat "$work/wrk-$name-$shape-$round.txt" >&2; die "wrk against $name failed"; }
    [[ -n "$perf_pid" ]] && { wait "$perf_pid" || { cat "$work/perf.log" >&2; die "perf record failed"; }; }
    return 0
}

# nginx: one server block per shape, each on its own port, returning that shape's captured body.
declare -A ng_port mhd_port mhd_pid_of
if [[ $with_nginx -eq 1 ]]; then
    mkdir -p "$work/nginx/logs" "$work/nginx/tmp"
    servers=""
    for shape in "${shape_list[@]}"; do
        # nginx returns the captured body verbatim: it must not contain what an nginx string would
        # interpret ($variables) or end the quoted string.
        if grep -q '[$\\'"'"']' "$work/plan-$shape.body"; then die "captured $shape plan contains \$, \\ or ': cannot embed it in nginx.conf"; fi
        ng_port[$shape]="$(free_port)"
        servers+="
    server {
        listen 127.0.0.1:${ng_port[$shape]};
        location ~ ^/v1/sessions/[^/]+/viewport\$ {
            if (\$request_method != POST) { return 405; }
            default_type \"$content_type\";
            return 200 '$(cat "$work/plan-$shape.body")';
        }
        location / { return 404; }
    }"
    done
    # As many workers as viewportd and the bare MHD server have threads.
    ng_workers="${http_threads:-$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["http"]["threads"])' "$repo_root/config/viewportd.json")}"
    cat > "$work/nginx/nginx.conf" <<EOF
daemon off;
worker_processes $ng_workers;
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
$servers
}
EOF
    "$nginx_bin" -p "$work/nginx" -e "$work/nginx/logs/error.log" -c "$work/nginx/nginx.conf" -t >/dev/null 2>"$work/nginx/test.log" \
        || { cat "$work/nginx/test.log" >&2; die "nginx -t rejected the config"; }
    "$nginx_bin" -p "$work/nginx" -e "$work/nginx/logs/error.log" -c "$work/nginx/nginx.conf" >"$work/nginx/stdout.log" 2>&1 &
    nginx_pid=$!
    for shape in "${shape_list[@]}"; do
        for ((i = 0; i < 100; i++)); do
            curl -s --max-time 1 -o /dev/null "http://127.0.0.1:${ng_port[$shape]}/" && break
            kill -0 "$nginx_pid" 2>/dev/null || { cat "$work/nginx/logs/error.log" >&2; die "nginx exited"; }
            sleep 0.1
        done
    done
fi

# The bare libmicrohttpd server (scripts/mhd-reference.c), built here with the same MHD flags and
# options as viewportd: one process per shape, answering that shape's bytes.
if [[ $with_mhd -eq 1 ]]; then
    cc -O2 -Wall -o "$work/mhd-reference" "$repo_root/scripts/mhd-reference.c" -lmicrohttpd \
        || die "cannot build scripts/mhd-reference.c (libmicrohttpd-dev: scripts/install-deps.sh)"
    mhd_threads="${http_threads:-$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["http"]["threads"])' "$repo_root/config/viewportd.json")}"
    mhd_memory="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["http"]["connectionMemoryLimit"])' "$repo_root/config/viewportd.json")"
    for shape in "${shape_list[@]}"; do
        mhd_port[$shape]="$(free_port)"
        "$work/mhd-reference" "${mhd_port[$shape]}" "$mhd_threads" "$mhd_memory" 600 "$work/plan-$shape.body" "$content_type" "$mhd_work" \
            >"$work/mhd-$shape.log" 2>&1 &
        mhd_pids+=($!)
        mhd_pid_of[$shape]=$!
        for ((i = 0; i < 100; i++)); do
            grep -q 'listening on' "$work/mhd-$shape.log" && break
            kill -0 "${mhd_pids[-1]}" 2>/dev/null || { cat "$work/mhd-$shape.log" >&2; die "mhd-reference exited"; }
            sleep 0.1
        done
    done
    log "bare libmicrohttpd servers: $mhd_threads threads, $mhd_memory bytes per connection, $mhd_work ns of work a request, ports $(for s in "${shape_list[@]}"; do printf '%s ' "${mhd_port[$s]}"; done)"
fi

# Each comparison server answers exactly the captured bytes with the same Content-Type.
for shape in "${shape_list[@]}"; do
    urls=()
    [[ $with_nginx -eq 1 ]] && urls+=("http://127.0.0.1:${ng_port[$shape]}")
    [[ $with_mhd -eq 1 ]] && urls+=("http://127.0.0.1:${mhd_port[$shape]}")
    for url in "${urls[@]}"; do
        curl -sS --max-time 5 -D "$work/check.headers" -o "$work/check.body" -H 'Content-Type: application/json' \
            --data '{"offset":[0,1]}' "$url/v1/sessions/${sessions[0]}/viewport" >/dev/null
        cmp -s "$work/check.body" "$work/plan-$shape.body" || die "$url does not answer the captured $shape plan bytes"
        grep -qi "^content-type: $content_type" "$work/check.headers" || die "$url answers another Content-Type: $(grep -i '^content-type' "$work/check.headers")"
    done
done

# With --server-cpus: every server process, and every thread of each, on those CPUs.
if [[ -n "$server_cpus" ]]; then
    command -v taskset >/dev/null || die "taskset missing (util-linux)"
    pinned=()
    for pid in "$vp_pid" ${st_pid:-} ${bl_pid:-} ${nginx_pid:-} ${mhd_pids[@]+"${mhd_pids[@]}"}; do
        [[ -n "$pid" ]] || continue
        for p in "$pid" $(pgrep -P "$pid" || true); do
            taskset -a -p -c "$server_cpus" "$p" >/dev/null || die "taskset -a -p -c $server_cpus $p failed"
            pinned+=("$p")
        done
    done
    log "servers pinned to CPUs $server_cpus (pids ${pinned[*]}); wrk on ${wrk_cpus:-any CPU}"
fi

# Interleaved rounds (per round, per shape: viewportd, nginx, bare MHD, ...; the order rotates
# from round to round), so that a neighbour's load on a shared machine hits all alike; medians are
# reported.
order=(viewportd)
[[ -n "$st_base" ]] && order+=(store)
[[ -n "$bl_base" ]] && order+=(baseline)
[[ $with_nginx -eq 1 ]] && order+=(nginx)
[[ $with_mhd -eq 1 ]] && order+=(mhd)
for ((round = 1; round <= rounds; round++)); do
    for shape in "${shape_list[@]}"; do
        for ((k = 0; k < ${#order[@]}; k++)); do
            name="${order[$(( (k + round - 1) % ${#order[@]} ))]}"
            case "$name" in
                viewportd) run_wrk viewportd "$shape" "$round" "$vp_base" "$work/viewport-$shape.lua" ;;
                store) run_wrk store "$shape" "$round" "$st_base" "$work/store-$shape.lua" ;;
                baseline) run_wrk baseline "$shape" "$round" "$bl_base" "$work/baseline-$shape.lua" ;;
                nginx) run_wrk nginx "$shape" "$round" "http://127.0.0.1:${ng_port[$shape]}" "$work/viewport-$shape.lua" ;;
                mhd) run_wrk mhd "$shape" "$round" "http://127.0.0.1:${mhd_port[$shape]}" "$work/viewport-$shape.lua" ;;
            esac
        done
    done
done

# Ratio of two servers' medians, and the range of their per-round ratios: "0.83 (0.80–0.86)".
ratio() {  # ratio A_RPS A_ROUNDS B_RPS B_ROUNDS
    python3 - "$@" <<'EOF'
import sys
a, ar, b, br = float(sys.argv[1]), sys.argv[2].split("/"), float(sys.argv[3]), sys.argv[4].split("/")
per = [float(x) / float(y) for x, y in zip(ar, br)]
print(f"{a / b:.2f}" + (f" ({min(per):.2f}–{max(per):.2f})" if len(per) > 1 else ""))
EOF
}

status=0
declare -A summary
echo
echo "== wrk -t$threads -c$connections -d$duration x $rounds round(s): POST /v1/sessions/{id}/viewport, $connections sessions, $items-item vertical list =="
[[ -n "$server_cpus" ]] && echo "   (servers pinned to CPUs $server_cpus, wrk to ${wrk_cpus:-any CPU})"
echo "   (load average before: $load_before; medians$([[ $rounds -gt 1 ]] && echo " of $rounds interleaved rounds, ratio ranges over the rounds"))"
for shape in "${shape_list[@]}"; do
    s="$(shape_step "$shape")"
    echo
    echo "-- $shape ($([[ $s -eq 0 ]] && echo "the same offset again: empty plans" || echo "$s pt per update")): $(stat -c %s "$work/plan-$shape.body")-byte plan: $(head -c 200 "$work/plan-$shape.body")$([[ $(stat -c %s "$work/plan-$shape.body") -gt 200 ]] && echo "…")"
    printf '%-10s %12s %10s %10s %10s %10s  %-16s %s\n' "server" "requests/s" "p50 ms" "p99 ms" "requests" "non-2xx" "socket errors" "requests/s per round"
    names=(viewportd)
    [[ -n "$st_base" ]] && names+=(store)
    [[ -n "$bl_base" ]] && names+=(baseline)
    [[ $with_nginx -eq 1 ]] && names+=(nginx)
    [[ $with_mhd -eq 1 ]] && names+=(mhd)
    declare -A rps_of rounds_of
    for name in "${names[@]}"; do
        IFS=$'\t' read -r rps p50 p99 non2xx sock sock_text reqs per_round < <(summarize_wrk "$work"/wrk-"$name"-"$shape"-*.txt)
        rps_of[$name]="$rps" rounds_of[$name]="$per_round"
        label="$name"; [[ $name == store ]] && label="+store"; [[ $name == mhd ]] && label="bare MHD"
        printf '%-10s %12s %10s %10s %10s %10s  %-16s %s\n' "$label" "$rps" "$p50" "$p99" "$reqs" "$non2xx" "$sock_text" "$per_round"
        if [[ $name == viewportd || $name == store ]] && [[ "$non2xx" -ne 0 || "$sock" -ne 0 ]]; then
            echo "load: $name had errors on $shape"; status=1
        fi
        [[ $name == viewportd ]] && summary[$shape]="$rps	$p50	$p99	$((non2xx + sock))"
    done
    [[ -n "$bl_base" ]] && echo "ratio viewportd / baseline: $(ratio "${rps_of[viewportd]}" "${rounds_of[viewportd]}" "${rps_of[baseline]}" "${rounds_of[baseline]}")  (baseline: $baseline)"
    [[ -n "$st_base" ]] && echo "ratio with store / without: $(ratio "${rps_of[store]}" "${rounds_of[store]}" "${rps_of[viewportd]}" "${rounds_of[viewportd]}")  (target >= 0.8)"
    [[ $with_nginx -eq 1 ]] && summary[$shape]+="	$(ratio "${rps_of[viewportd]}" "${rounds_of[viewportd]}" "${rps_of[nginx]}" "${rounds_of[nginx]}")" || summary[$shape]+="	-"
    [[ $with_mhd -eq 1 ]] && summary[$shape]+="	$(ratio "${rps_of[viewportd]}" "${rounds_of[viewportd]}" "${rps_of[mhd]}" "${rounds_of[mhd]}")" || summary[$shape]+="	-"
    unset rps_of rounds_of
done

echo
echo "== viewportd against nginx and bare libmicrohttpd (targets: >= 0.85x nginx, >= 0.9x bare MHD, p99 <= 3 ms, no errors) =="
printf '%-8s %8s %12s %8s %8s %8s  %-18s %s\n' "shape" "bytes" "requests/s" "p50 ms" "p99 ms" "errors" "vs nginx" "vs bare MHD"
for shape in "${shape_list[@]}"; do
    IFS=$'\t' read -r rps p50 p99 errors vs_ng vs_mhd <<<"${summary[$shape]}"
    printf '%-8s %8s %12s %8s %8s %8s  %-18s %s\n' "$shape" "$(stat -c %s "$work/plan-$shape.body")" "$rps" "$p50" "$p99" "$errors" "$vs_ng" "$vs_mhd"
done

if [[ -n "$perf_dir" ]]; then
    echo
    echo "== perf: CPU per request by component (scripts/perf-breakdown.py) =="
    for f in "$perf_dir"/*.perf; do
        base="$(basename "$f" .perf)"
        [[ -f "$work/wrk-$base.txt" ]] || continue
        echo "-- $base"
        "$repo_root/scripts/perf-breakdown.py" "$f" --requests "$(grep -o '[0-9]* requests in' "$work/wrk-$base.txt" | cut -d' ' -f1)" || true
    done
fi

# Evidence that the plans were real: one session's counters after the run.
curl -sS --max-time 10 -o "$work/session0.json" "$vp_base/v1/sessions/${sessions[1]}" || true
vp_stats="$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d.get("stats", d), separators=(",", ":")))' "$work/session0.json" 2>/dev/null || echo "?")"
echo "viewportd session 2 of $connections after the run: $vp_stats"
exit $status
