#!/usr/bin/env bash
# Instructions per update of a session with helpers on (exposure with minTime, prefetch,
# lazyLoad), counted by callgrind: the server (`viewport-bench 0 serve PORT`, debug info stripped
# for valgrind 3.19) answers one NDJSON stream of 20,000 updates (37 pt steps with `time`) on a
# 2,000-row list; the counters are zeroed after the session opens and dumped after the stream.
#
#   scripts/callgrind-helpers.sh [VIEWPORT_BENCH_BINARY ...]   (default .build/release/viewport-bench)
#
# A `helpers` getter in place of a miscompiled `_read` would copy the whole helpers
# struct on every read (34,068 instructions an update against 32,567 with `_read`); reading the
# single fields in place costs 30,170.
set -euo pipefail
cd "$(dirname "$0")/.."
binaries=("$@")
[[ ${#binaries[@]} -gt 0 ]] || binaries=(.build/release/viewport-bench)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
json.dump({"items": [{"id": f"r{k}", "rect": [0, k * 50, 375, 50], "reuse": "row"} for k in range(2000)]}, open(f"{work}/layout.json", "w"))
with open(f"{work}/trace.ndjson", "w") as f:
    y = 0
    for k in range(1, 20001):
        y = (y + 37) % 90000
        f.write(json.dumps({"offset": [0, y], "seq": k, "time": k * 0.016}) + "\n")
PY
for binary in "${binaries[@]}"; do
    cp "$binary" "$work/bench"
    strip --strip-debug "$work/bench"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$work/bench" 0 serve "$port" >"$work/valgrind.log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do curl -fs "127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
    layout=$(curl -fs -X POST "127.0.0.1:$port/v1/layouts" -H 'Content-Type: application/json' --data-binary @"$work/layout.json" | sed 's/.*"layout":"\([0-9a-f]*\)".*/\1/')
    session=$(curl -fs -X POST "127.0.0.1:$port/v1/sessions" -H 'Content-Type: application/json' \
        -d "{\"layout\":\"$layout\",\"viewport\":[375,667],\"exposure\":{\"threshold\":0.5,\"minTime\":0.3},\"prefetch\":0.5,\"lazyLoad\":true}" \
        | sed 's/.*"session":"\([0-9a-f]*\)".*/\1/')
    callgrind_control -z "$pid" >/dev/null 2>&1
    plans=$(curl -fs -X POST "127.0.0.1:$port/v1/sessions/$session/viewport" -H 'Content-Type: application/x-ndjson' --data-binary @"$work/trace.ndjson" | wc -l)
    callgrind_control -d stream "$pid" >/dev/null 2>&1
    sleep 1
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    dump=$(ls -t "$work"/cg.out* | head -1)
    total=$(callgrind_annotate "$dump" 2>/dev/null | grep -m1 'PROGRAM TOTALS' | awk '{gsub(",", "", $1); print $1}')
    echo "$binary: $plans plans, $total instructions, $((total / 20000)) an update"
    rm -f "$work"/cg.out*
done
