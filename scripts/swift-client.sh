#!/usr/bin/env bash
# The Swift client of API v1 (clients/swift), generated from openapi/viewportd.openapi.json by
# Apple's swift-openapi-generator 1.14.3 and committed.
#
#   scripts/swift-client.sh generate            regenerate clients/swift/Sources/ViewportdClient/Generated
#   scripts/swift-client.sh check               exit 1 when the committed code is not what the generator
#                                               makes of the current document (or it warns)
#   scripts/swift-client.sh roundtrip [BINARY]  build clients/swift and run its round trip against a
#                                               viewportd started on a free loopback port
#
# The generator is built once (debug, about 3 minutes on 2 cores) from its package, cloned into
# .build/tools/swift-openapi-generator (offline machines map github.com to their package mirror);
# it is not a dependency of either package. Any generator warning fails generate and check.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
[[ -d /opt/swift/usr/bin ]] && export PATH="$PATH:/opt/swift/usr/bin"

version=1.14.3
tools=$root/.build/tools/swift-openapi-generator
generated=clients/swift/Sources/ViewportdClient/Generated
log() { echo "swift-client: $*"; }

build_generator() {
    if [[ ! -d $tools/.git ]] || [[ $(git -C "$tools" describe --tags 2>/dev/null) != "$version" ]]; then
        rm -rf "$tools"
        mkdir -p "$(dirname "$tools")"
        git -c advice.detachedHead=false clone -q --depth 1 --branch "$version" https://github.com/apple/swift-openapi-generator "$tools"
    fi
    log "building swift-openapi-generator $version (once; cached in $tools/.build)"
    swift build --package-path "$tools" --product swift-openapi-generator 2>&1 | tail -n 1
    generator="$(swift build --package-path "$tools" --show-bin-path)/swift-openapi-generator"
}

# generate DIR: the generator's output for the current document, in DIR; fails on warnings.
generate_into() {
    local out=$1 output
    mkdir -p "$out"
    output=$("$generator" generate openapi/viewportd.openapi.json --config clients/swift/openapi-generator-config.yaml \
        --output-directory "$out" 2>&1) || { echo "$output"; log "FAIL: the generator failed"; return 1; }
    if grep -Ei '^(warning|error):' <<<"$output"; then
        log "FAIL: the generator warned (above)"
        return 1
    fi
    log "generated $(ls "$out" | wc -l) files, no warnings"
}

case "${1:-}" in
generate)
    build_generator
    work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
    generate_into "$work"
    rm -rf "$generated"; mkdir -p "$generated"
    cp "$work"/*.swift "$generated"/
    log "wrote $generated"
    ;;
check)
    build_generator
    work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
    generate_into "$work"
    if ! diff -r -q "$work" "$generated" >/dev/null; then
        diff -r "$work" "$generated" | head -n 40
        log "FAIL: $generated is not current; run scripts/swift-client.sh generate and commit it"
        exit 1
    fi
    log "$generated is current"
    ;;
roundtrip)
    binary=${2:-${VIEWPORTD:-$root/.build/release/viewportd}}
    [[ -x $binary ]] || { log "no viewportd binary at $binary"; exit 2; }
    log "building clients/swift"
    swift build --package-path clients/swift --product viewportd-client-roundtrip 2>&1 | tail -n 1
    client="$(swift build --package-path clients/swift --show-bin-path)/viewportd-client-roundtrip"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    token="swift-client-$RANDOM"
    work=$(mktemp -d)
    "$binary" --http-host 127.0.0.1 --http-port "$port" --auth-token "$token" >"$work/viewportd.log" 2>&1 &
    pid=$!
    trap 'kill -TERM $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
    for _ in $(seq 300); do
        grep -q 'listening on http://' "$work/viewportd.log" && break
        kill -0 "$pid" 2>/dev/null || { cat "$work/viewportd.log"; log "viewportd exited"; exit 1; }
        sleep 0.1
    done
    "$client" "http://127.0.0.1:$port" "$token"
    ;;
*)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
