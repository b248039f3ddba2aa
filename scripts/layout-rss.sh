#!/usr/bin/env bash
# RSS a stored layout adds per item (docs/performance.md).
#
#   scripts/layout-rss.sh [--items N] [--runs N] [--binary PATH] [--baseline PATH]
#
# Generates the explicit vertical list of `scripts/load.sh` (item i: {"id":"<i>","rect":[0,50i,375,50],
# "reuse":"row"}, --items, default 1,000,000), then per run starts a fresh release viewportd on a
# loopback port, reads its VmRSS, POSTs the layout with curl, waits a second and reads VmRSS again.
# Prints the POST's time (curl's time_total), the RSS added per item ((after - before) / N), and
# the peak RSS during the post (VmHWM). With --baseline, that other build runs too, alternating with
# --binary run by run, so both see the same machine load. Everything started is stopped on exit.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
items=1000000 runs=3 binary="" baseline=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --items) items="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --binary) binary="$2"; shift 2 ;;
        --baseline) baseline="$2"; shift 2 ;;
        *) echo "layout-rss: unknown option $1" >&2; exit 2 ;;
    esac
done
die() { echo "layout-rss: error: $*" >&2; exit 1; }
if [[ -z "$binary" ]]; then
    (cd "$repo_root" && swift build -c release --product viewportd >&2)
    binary="$(cd "$repo_root" && swift build -c release --show-bin-path)/viewportd"
fi
[[ -x "$binary" ]] || die "no executable at $binary"
[[ -z "$baseline" || -x "$baseline" ]] || die "no executable at $baseline"

work="$(mktemp -d -t viewportd-layout-rss.XXXXXX)"
pid=""
cleanup() {
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The list of scripts/load.sh.
python3 "$repo_root/scripts/gen-list-layout.py" "$items" "$work/layout.json"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

measure() {  # measure LABEL BINARY: one fresh server, one post
    local label="$1" bin="$2" port
    port="$(free_port)"
    ( cd "$repo_root" && exec env HTTP_HOST=127.0.0.1 HTTP_PORT="$port" LAYOUTS_MAX_ITEMS=$((items > 2000000 ? items : 2000000)) \
        HTTP_MAX_BODY_BYTES=1073741824 HTTP_CONNECTION_TIMEOUT=600 "$bin" ) >"$work/viewportd.log" 2>&1 &
    pid=$!
    local i
    for ((i = 0; i < 300; i++)); do
        grep -q 'listening on http://' "$work/viewportd.log" && break
        kill -0 "$pid" 2>/dev/null || { cat "$work/viewportd.log" >&2; die "viewportd exited before listening"; }
        sleep 0.1
    done
    sleep 0.5
    local before after hwm res code secs
    before="$(status_kb "$pid" VmRSS)"
    res="$(curl -sS --max-time 300 -o "$work/response.json" -w '%{http_code} %{time_total}' \
        -H 'Content-Type: application/json' --data-binary @"$work/layout.json" "http://127.0.0.1:$port/v1/layouts")"
    code="${res%% *}"; secs="${res#* }"
    [[ "$code" == 201 || "$code" == 200 ]] || { cat "$work/response.json" >&2; die "POST /v1/layouts answered $code"; }
    sleep 1
    after="$(status_kb "$pid" VmRSS)"
    hwm="$(status_kb "$pid" VmHWM)"
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
    python3 -c "print(f'%-9s POST %s s   RSS %6.1f -> %6.1f MB   %6.1f B/item   peak %6.1f MB' % ('$label', '$secs', $before / 1024, $after / 1024, ($after - $before) * 1024 / $items, $hwm / 1024))"
}

echo "layout-rss: $items items, $(stat -c %s "$work/layout.json") bytes of JSON, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for ((run = 1; run <= runs; run++)); do
    measure "after" "$binary"
    [[ -n "$baseline" ]] && measure "before" "$baseline"
done
