#!/usr/bin/env bash
# Runs the release binary the way the container image does, and checks it starts, answers and
# stops cleanly:
#
#   - a temporary directory laid out like the image's /app: viewportd + config/viewportd.json
#     (the repository's file, with auth.token set, to prove the file is read from the working
#     directory);
#   - started from that directory as a non-root user (nobody, through setpriv, when run as root),
#     on a free loopback port given by HTTP_PORT (environment overrides the file);
#   - waits for the "listening on http://" log line;
#   - GET /healthz -> 200 {"status":"ok"} without a token; a /v1 path without the token -> 401,
#     with it -> not 401 (the file's auth.token is in force);
#   - three updates over the session's WebSocket (scripts/ws-client.py) -> plans seq 1, 2, 3;
#   - SIGTERM while a slow NDJSON upload is in flight -> that request still gets all its plans,
#     and the process exits 0 within the drain time.
#
# Usage: scripts/smoke-test.sh [BINARY]   (default .build/release/viewportd)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
binary="${1:-$repo_root/.build/release/viewportd}"
start_timeout=30 stop_timeout=20

log() { echo "smoke-test: $*"; }
fail() { echo "smoke-test: FAIL: $*" >&2; if [[ -f "${logfile:-}" ]]; then echo "--- viewportd log ---" >&2; tail -n 40 "$logfile" >&2; fi; exit 1; }

[[ -x "$binary" ]] || fail "no executable at $binary"
command -v curl >/dev/null || fail "curl is needed"

work="$(mktemp -d -t viewportd-smoke.XXXXXX)"
pid="" stream_pid=""
cleanup() {
    if [[ -n "$stream_pid" ]] && kill -0 "$stream_pid" 2>/dev/null; then kill "$stream_pid" 2>/dev/null || true; fi
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# --- /app layout ---------------------------------------------------------------------------
app="$work/app"
mkdir -p "$app/config"
cp "$binary" "$app/viewportd"
token="smoke-$RANDOM$RANDOM"
python3 - "$repo_root/config/viewportd.json" "$app/config/viewportd.json" "$token" <<'EOF'
import json, sys
src, dst, token = sys.argv[1:]
config = json.load(open(src))
config.setdefault("auth", {})["token"] = token
json.dump(config, open(dst, "w"), indent=2)
EOF
chmod -R a+rX "$work"
logfile="$work/viewportd.log"
: > "$logfile"; chmod a+w "$logfile"

# A mistyped flag or a stray argument must stop the binary (exit 2) naming it, not be ignored.
for bad in "--port 9000" "9000" "--http-port"; do
    # shellcheck disable=SC2086
    set +e; out="$("$binary" $bad 2>&1)"; rc=$?; set -e
    [[ $rc -eq 2 ]] || fail "viewportd $bad exited $rc (want 2): $out"
    first="${bad%% *}"
    [[ "$out" == *"$first"* ]] || fail "viewportd $bad did not name $first: $out"
done
log "unknown flags and stray arguments -> exit 2, named"

port="$(free_port)"
run_as=()
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null; then
    run_as=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
    log "running as uid 65534 (nobody) from $app, port $port"
else
    log "running as $(id -un) from $app, port $port"
fi

# Same environment as the image, but loopback only.
( cd "$app" && exec env HTTP_HOST=127.0.0.1 HTTP_PORT="$port" "${run_as[@]}" ./viewportd ) >>"$logfile" 2>&1 &
pid=$!

deadline=$((SECONDS + start_timeout))
until grep -q 'listening on http://' "$logfile"; do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" && rc=0 || rc=$?; pid=""; fail "viewportd exited (code $rc) before listening"; }
    (( SECONDS < deadline )) || fail "no 'listening on http://' line within ${start_timeout}s"
    sleep 0.1
done
log "$(grep -m1 -o 'listening on http://[^ ]*' "$logfile")"
grep -q "listening on http://127.0.0.1:$port" "$logfile" || fail "listening line does not name 127.0.0.1:$port"

base="http://127.0.0.1:$port"
body="$(curl -sS --max-time 5 -o - -w '\n%{http_code}' "$base/healthz")" || fail "GET /healthz: no answer"
code="${body##*$'\n'}"; body="${body%$'\n'*}"
[[ "$code" == 200 ]] || fail "GET /healthz answered $code: $body"
python3 -c 'import json,sys; assert json.loads(sys.argv[1])["status"] == "ok"' "$body" \
    || fail "GET /healthz body is not {\"status\": \"ok\"}: $body"
log "GET /healthz -> 200 $body"

code="$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "$base/v1/sessions/nope")"
[[ "$code" == 401 ]] || fail "GET /v1/sessions/nope without the config file's token answered $code, not 401 (config/viewportd.json not read from the working directory?)"
code="$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$base/v1/sessions/nope")"
[[ "$code" == 404 ]] || fail "GET /v1/sessions/nope with the token answered $code, not 404"
log "config/viewportd.json read from the working directory (auth.token in force: 401 without, 404 with)"

# An in-flight request must finish across SIGTERM: an NDJSON stream of updates uploaded slowly
# (about 2 s) is under way when the signal is sent, and must still answer every plan.
auth=(-H "Authorization: Bearer $token")
python3 -c '
import json
print(json.dumps({"items": [{"id": str(i), "rect": [0, 50 * i, 375, 50], "reuse": "row"} for i in range(1000)]}))
' > "$work/layout.json"
layout="$(curl -sS --max-time 10 "${auth[@]}" -H 'Content-Type: application/json' --data-binary @"$work/layout.json" "$base/v1/layouts" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["layout"])')" || fail "POST /v1/layouts failed"
session="$(curl -sS --max-time 10 "${auth[@]}" -H 'Content-Type: application/json' \
    --data "{\"layout\":\"$layout\",\"viewport\":[375,667]}" "$base/v1/sessions" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["session"])')" || fail "POST /v1/sessions failed"
# The live transport: three updates over the session's WebSocket (scripts/ws-client.py, the
# client of docs/guides/websocket.md; the token as the subprotocol bearer.<token>, as from a browser).
printf '{"offset":[0,10]}\n{"offset":[0,20],"seq":2}\n{"offset":[0,30]}\n' \
    | timeout 20 python3 "$repo_root/scripts/ws-client.py" "$base" "$session" --token "$token" > "$work/socket.ndjson" 2>"$work/socket.err" \
    || fail "scripts/ws-client.py failed: $(cat "$work/socket.err")"
python3 -c '
import json, sys
plans = [json.loads(line) for line in open(sys.argv[1])]
assert [p.get("seq") for p in plans] == [1, 2, 3], plans
' "$work/socket.ndjson" || fail "the WebSocket did not answer plans 1, 2, 3: $(cat "$work/socket.ndjson") $(cat "$work/socket.err")"
log "GET /v1/sessions/{id}/socket: 3 updates over a WebSocket -> plans seq 1, 2, 3"

updates=2000
python3 -c "import sys; sys.stdout.write(''.join('{\"offset\":[0,%d]}\n' % (7 * (i + 1)) for i in range($updates)))" > "$work/updates.ndjson"
rate=$(( $(stat -c %s "$work/updates.ndjson") / 2 ))
curl -sS --max-time 30 --limit-rate "$rate" "${auth[@]}" -H 'Content-Type: application/x-ndjson' \
    --data-binary @"$work/updates.ndjson" -o "$work/plans.ndjson" -w '%{http_code}' \
    "$base/v1/sessions/$session/viewport" > "$work/stream.code" 2>"$work/stream.err" &
stream_pid=$!
sleep 0.7
kill -0 "$stream_pid" 2>/dev/null || fail "the slow stream finished before SIGTERM was sent (test too fast)"

kill -TERM "$pid"
log "SIGTERM sent while an NDJSON stream of $updates updates is being uploaded"
stream_rc=0; wait "$stream_pid" || stream_rc=$?
[[ $stream_rc -eq 0 && "$(cat "$work/stream.code")" == 200 ]] \
    || fail "the in-flight stream did not finish across SIGTERM (curl $stream_rc, HTTP $(cat "$work/stream.code"): $(cat "$work/stream.err"))"
lines="$(wc -l < "$work/plans.ndjson")"
[[ "$lines" -eq "$updates" ]] || fail "the in-flight stream answered $lines plans, not $updates"
! grep -q '"title"' "$work/plans.ndjson" || fail "the in-flight stream answered a problem: $(grep -m1 '"title"' "$work/plans.ndjson")"
log "in-flight stream finished across SIGTERM: $lines plans"

deadline=$((SECONDS + stop_timeout))
while kill -0 "$pid" 2>/dev/null; do
    (( SECONDS < deadline )) || fail "still running ${stop_timeout}s after SIGTERM"
    sleep 0.1
done
rc=0; wait "$pid" || rc=$?; pid=""
[[ $rc -eq 0 ]] || fail "exit code $rc after SIGTERM (want 0)"
log "SIGTERM -> exit 0"
log "OK"
