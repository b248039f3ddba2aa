#!/usr/bin/env bash
# Schema-driven fuzzing of viewportd with schemathesis (4.x): starts the built service on a free
# loopback port, runs `schemathesis run` against the document it serves at /openapi.json with
# every check on, and stops the service on exit. Exits non-zero on any failure (a 5xx, a crash, a
# hang, a response that breaks the document, a check that fails).
#
#   scripts/fuzz.sh                     uses .build-openapi/debug/viewportd (or $VIEWPORTD)
#   FUZZ_MAX_EXAMPLES=200 scripts/fuzz.sh
#
# Narrow, documented exceptions are in scripts/schemathesis.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
binary=${VIEWPORTD:-$root/.build-openapi/debug/viewportd}
max_examples=${FUZZ_MAX_EXAMPLES:-50}
# Seconds for each of the four schemathesis runs. A hung request fails by itself (--request-timeout
# 10); this bound is for a run that never ends. The first run takes ~40 s on a quiet machine but
# 115 s plus start-up at a load average of 15 (seen here), so 120 s failed runs that found nothing.
budget=${FUZZ_TIMEOUT:-240}
token=fuzz-token

[[ -x $binary ]] || { echo "fuzz: $binary is not built (swift build --scratch-path .build-openapi)" >&2; exit 2; }
if ! command -v schemathesis >/dev/null 2>&1 || ! schemathesis --version 2>/dev/null | grep -q 'version 4\.'; then
    echo "fuzz: installing schemathesis 4.x with pip"
    python3 -m pip install -q 'schemathesis>=4,<5'
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
work=$(mktemp -d)
log=$work/viewportd.log
pid=
stop() {
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap stop EXIT
trap 'exit 130' INT TERM

# Auth on, so every request also goes through the bearer check (the conformance test covers 401).
"$binary" --http-host 127.0.0.1 --http-port "$port" --auth-token "$token" >"$log" 2>&1 &
pid=$!
for _ in $(seq 300); do
    grep -q 'listening on http://' "$log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "fuzz: viewportd exited before listening" >&2; exit 2; }
    sleep 0.1
done
grep -q 'listening on http://' "$log" || { echo "fuzz: viewportd did not start" >&2; exit 2; }

# Random path ids only reach the 404 branch, so viewport updates (JSON and NDJSON) and layout
# changes would hardly
# be fuzzed past the session lookup: focused runs fuzz those operations on a real session
# (on a layout of 200 cards), given as the path parameter. The stateful phase of the first run
# follows the document's links with real ids for the rest.
session_id=$(python3 - "http://127.0.0.1:$port" "$token" <<'PY'
import json, sys, urllib.request
base, token = sys.argv[1], sys.argv[2]
items = [{"id": f"{i // 2}/{i % 2}", "rect": [25 + 169 * (i % 2), 15 + 165 * (i // 2), 156, 150], "reuse": "card" if i % 7 else None} for i in range(200)]
request = urllib.request.Request(base + "/v1/sessions", method="POST",
    data=json.dumps({"layout": {"items": items}, "viewport": [375, 667], "pool": {"max": 4}}).encode(),
    headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
print(json.loads(urllib.request.urlopen(request).read())["session"])
PY
)
live_session="
[parameters]
\"path.id\" = \"$session_id\""
# A session on a stack (the document's chat example: m1, m2, m3), for the edits' own run.
chat_id=$(python3 - "http://127.0.0.1:$port" "$token" <<'PY'
import json, sys, urllib.request
base, token = sys.argv[1], sys.argv[2]
layout = {"sections": [{"id": "chat", "reuse": "msg", "stack": {"items": [{"id": "m1", "size": [375, 64]}, {"id": "m2"}, {"id": "m3", "reuse": "photo", "size": [375, 300]}], "estimate": [375, 80], "spacing": 4}}]}
request = urllib.request.Request(base + "/v1/sessions", method="POST",
    data=json.dumps({"layout": layout, "viewport": [375, 300]}).encode(),
    headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
print(json.loads(urllib.request.urlopen(request).read())["session"])
PY
)
chat_session="
[parameters]
\"path.id\" = \"$chat_id\""
printf '%s\n' "$(cat "$root/scripts/schemathesis.toml")" "$chat_session" >"$work/edit-json.toml"
printf '%s\n' "$(cat "$root/scripts/schemathesis.toml")" "$live_session" >"$work/viewport-json.toml"
printf '%s\n' "$(cat "$root/scripts/schemathesis.toml")" "$(cat "$root/scripts/schemathesis-ndjson.toml")" "$live_session" >"$work/viewport-ndjson.toml"

fuzz() {  # fuzz CONFIG [schemathesis options…]
    local config=$1
    shift
    SCHEMATHESIS_HOOKS=schemathesis_hooks PYTHONPATH="$root/scripts${PYTHONPATH:+:$PYTHONPATH}" \
    timeout --signal=INT --kill-after=15 "$budget" \
        schemathesis --config-file "$config" run "http://127.0.0.1:$port/openapi.json" \
            --header "Authorization: Bearer $token" \
            --checks all \
            --max-examples "$max_examples" \
            --request-timeout 10 \
            --seed "${FUZZ_SEED:-$(date +%s)}" \
            --no-color \
            --report "${FUZZ_REPORT:-junit}" --report-dir "${FUZZ_REPORT_DIR:-$work/report}" \
            "$@"
}

started=$(date +%s)
status=0
# The first run sends NDJSON streams too (the stateful phase reaches live sessions), so it takes
# the NDJSON allowance; the JSON-only viewport run below keeps negative_data_rejection strict.
printf '%s\n' "$(cat "$root/scripts/schemathesis.toml")" "$(cat "$root/scripts/schemathesis-ndjson.toml")" >"$work/all.toml"
echo "fuzz: every operation"
fuzz "$work/all.toml" || status=$?
# The JSON run also fuzzes layout changes (PUT /v1/sessions/{id}/layout) on that session.
echo "fuzz: POST /v1/sessions/{id}/viewport and PUT /v1/sessions/{id}/layout on a live session, application/json bodies"
FUZZ_MEDIA_TYPE=application/json fuzz "$work/viewport-json.toml" \
    --include-path-regex '^/v1/sessions/\{id\}/(viewport|layout)$' --phases examples,coverage,fuzzing || status=$?
echo "fuzz: PATCH and GET /v1/sessions/{id}/layout on a live session whose layout has a stack"
FUZZ_MEDIA_TYPE=application/json fuzz "$work/edit-json.toml" \
    --include-name 'PATCH /v1/sessions/{id}/layout' --include-name 'GET /v1/sessions/{id}/layout' --phases examples,coverage,fuzzing || status=$?
echo "fuzz: POST /v1/sessions/{id}/viewport on a live session, application/x-ndjson bodies"
FUZZ_MEDIA_TYPE=application/x-ndjson fuzz "$work/viewport-ndjson.toml" \
    --include-path '/v1/sessions/{id}/viewport' --phases examples,coverage,fuzzing || status=$?
elapsed=$(( $(date +%s) - started ))

# The service must still be alive: a crash is a failure even when every response looked fine.
if ! kill -0 "$pid" 2>/dev/null; then
    echo "fuzz: viewportd died during the run:" >&2
    tail -40 "$log" >&2
    status=1
elif ! curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; then
    echo "fuzz: viewportd no longer answers /healthz" >&2
    status=1
fi
if [[ $status == 124 ]]; then echo "fuzz: schemathesis exceeded ${budget}s (a hang?)" >&2; fi
echo "fuzz: schemathesis exit status $status after ${elapsed}s"
exit "$status"
