#!/usr/bin/env bash
# Coverage-guided fuzzing of viewportd's parsers and planner with libFuzzer (`swiftc
# -sanitize=fuzzer`, part of the Swift toolchain). The targets live in fuzz/, a package of its own
# that depends on this one by path, so the service's normal build and `swift test` never see them.
#
#   scripts/fuzz-native.sh                       every target, 10 s each (about a minute and a half in all)
#   scripts/fuzz-native.sh --seconds 300 FuzzSessionApply
#   scripts/fuzz-native.sh --save-corpus ...     merge what the run found into fuzz/corpus/
#   scripts/fuzz-native.sh --replay FILE TARGET  run one input (e.g. a crash) once, with
#                                                FUZZ_TRACE=1 for the trace of FuzzSessionApply,
#                                                FuzzStackEdits or FuzzNDJSONStream
#   FUZZ_FLAGS='-jobs=2 -workers=2' scripts/fuzz-native.sh ...   extra libFuzzer flags
#   scripts/fuzz-native.sh --no-asan ...         without AddressSanitizer (faster, finds less)
#
# Built with AddressSanitizer by default (`-sanitize=fuzzer,address`): a memory error in
# optimized code is a failure even where it would not crash (for example a use-after-free that
# Swift 6.3.1's optimizer made of a `_read` accessor, on every PATCH of a session with exposure,
# which FuzzStackEdits reaches in seconds with ASan and never without).
#
# Targets: FuzzJSONReader, FuzzNDJSONStream, FuzzWebSocketFrames, FuzzLayoutDecoder,
# FuzzSectionsDecoder, FuzzSessionApply, FuzzStackEdits (each one's main.swift says what it
# checks). Each run starts from the seed corpus fuzz/corpus/<target>.hex (one input per line, in
# hex; it includes every crash found so far, as a regression input), writes what it finds to a
# scratch directory, and any crash, timeout (10 s) or out-of-memory (2 GiB, 4 GiB with ASan) input to
# fuzz/artifacts/. Exits 1 when a target fails, 2 on a usage or build error. Prints executions
# and coverage per target.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[[ -d /opt/swift/usr/bin ]] && export PATH="$PATH:/opt/swift/usr/bin"

all_targets=(FuzzJSONReader FuzzNDJSONStream FuzzWebSocketFrames FuzzLayoutDecoder FuzzSectionsDecoder FuzzSessionApply FuzzStackEdits)
seconds=10
save=0
replay=
asan=1
targets=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
        --save-corpus) save=1; shift ;;
        --replay) replay=${2:?--replay needs a file}; shift 2 ;;
        --no-asan) asan=0; shift ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        Fuzz*) targets+=("$1"); shift ;;
        *) echo "fuzz-native: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
    [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "fuzz-native: unknown target $t" >&2; exit 2; }
done
[[ -z $replay || ${#targets[@]} -eq 1 ]] || { echo "fuzz-native: --replay needs exactly one target" >&2; exit 2; }

# A release build with coverage instrumentation of every module (the service's too) and testable
# imports (the decoders and the handler are internal). One product at a time: building the whole
# package would also link the service's own executables, which cannot take libFuzzer.
# With ASan, its own scratch path: switching the flags would rebuild everything each time.
if [[ $asan == 1 ]]; then
    build=(swift build -c release --package-path fuzz --scratch-path fuzz/.build-asan -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing)
    # Leaks are not what these targets look for (the Swift runtime keeps metadata for ever).
    export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}"
else
    build=(swift build -c release --package-path fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -enable-testing)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$SECONDS
for t in "${targets[@]}"; do
    if ! "${build[@]}" --product "$t" >"$work/build.log" 2>&1; then
        cat "$work/build.log"
        echo "fuzz-native: build of $t failed" >&2
        exit 2
    fi
done
bin=$("${build[@]}" --show-bin-path)
echo "fuzz-native: built ${targets[*]} in $((SECONDS - started)) s"

# Swift's own crash handler would take libFuzzer's signals: a failed check must reach libFuzzer,
# which saves the input.
export SWIFT_BACKTRACE=enable=no
# ASan's shadow memory and quarantine take more: a higher RSS limit with it.
flags=(-timeout=10 -rss_limit_mb=$((asan == 1 ? 4096 : 2048)) -print_final_stats=1)
# shellcheck disable=SC2206
extra=(${FUZZ_FLAGS:-})
dict() { case $1 in FuzzWebSocketFrames|FuzzSessionApply|FuzzStackEdits) ;; *) echo "-dict=$root/fuzz/dict/viewportd.dict" ;; esac; }

if [[ -n $replay ]]; then
    exec "$bin/${targets[0]}" "${flags[@]}" $(dict "${targets[0]}") "$replay"
fi

mkdir -p fuzz/artifacts
failed=()
for t in "${targets[@]}"; do
    seeds=$work/$t.seeds
    found=$work/$t.found
    mkdir -p "$seeds" "$found"
    if [[ -f fuzz/corpus/$t.hex ]]; then
        python3 - "fuzz/corpus/$t.hex" "$seeds" <<'PY'
import sys, hashlib, pathlib
out = pathlib.Path(sys.argv[2])
for line in open(sys.argv[1]):
    line = line.strip()
    if line and not line.startswith('#'):
        data = bytes.fromhex(line)
        (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
PY
    fi
    log=$work/$t.log
    echo
    echo "=== fuzz-native: $t (${seconds} s, $(ls "$seeds" | wc -l) seeds) ==="
    status=0
    "$bin/$t" "${flags[@]}" $(dict "$t") "${extra[@]}" -max_total_time="$seconds" \
        -artifact_prefix="$root/fuzz/artifacts/$t-" "$found" "$seeds" >"$log" 2>&1 || status=$?
    grep -E 'INITED|DONE|stat::number_of_executed_units|stat::peak_rss_mb|fuzz check failed|Fatal error|ERROR: libFuzzer|ERROR: AddressSanitizer|Test unit written' "$log" || true
    if [[ $status -ne 0 ]]; then
        failed+=("$t")
        echo "fuzz-native: $t FAILED (exit $status); the input is in fuzz/artifacts/ (replay: scripts/fuzz-native.sh --replay FILE $t); log tail:"
        tail -n 40 "$log"
    fi
    if [[ $save -eq 1 ]]; then
        merged=$work/$t.merged
        mkdir -p "$merged"
        "$bin/$t" -merge=1 -use_counters=0 -timeout=10 "$merged" "$seeds" "$found" >/dev/null 2>&1 || true
        # Keep the regression inputs (commented lines and every seed that ever crashed) as they are.
        python3 - "fuzz/corpus/$t.hex" "$merged" <<'PY'
import sys, pathlib
path = pathlib.Path(sys.argv[1])
old = path.read_text().splitlines() if path.exists() else []
keep = []
i = 0
while i < len(old):
    if old[i].startswith('# regression'):
        keep += old[i:i + 2]
        i += 2
    else:
        i += 1
header = [l for l in old if l.startswith('#') and not l.startswith('# regression')][:3]
kept = {l.strip() for l in keep if not l.startswith('#')}
lines = sorted({f.read_bytes().hex() for f in pathlib.Path(sys.argv[2]).iterdir()} - kept - {''}, key=lambda h: (len(h), h))
path.write_text('\n'.join(header + keep + lines) + '\n')
print(f"fuzz-native: {path}: {len(lines)} inputs + {len(kept)} regression inputs")
PY
    fi
done
echo
echo "fuzz-native: finished in $((SECONDS - started)) s"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz-native: FAILED: ${failed[*]}"
    exit 1
fi
echo "fuzz-native: no crash, timeout or out-of-memory in ${targets[*]}"
