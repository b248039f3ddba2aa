#!/usr/bin/env bash
# The test suite once under ThreadSanitizer: `swift test --sanitize=thread` in its own scratch
# path (.build-tsan), so the normal build is untouched. Exits non-zero when a test fails or TSan
# reports a data race (TSan's reports make the test process fail: halt_on_error=0 lets every
# report print first, exitcode=66 marks the run).
#
#   scripts/tsan.sh                          the whole suite
#   scripts/tsan.sh --filter ConcurrencyTests   any `swift test` arguments pass through
#
# Takes a clean debug build with instrumentation (several minutes on 2 cores) plus the suite,
# which runs several times slower than without TSan; see scripts/README.md for timings. Reports
# are also kept in .build-tsan/tsan-report.* (TSan's log_path).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -d /opt/swift/usr/bin ]] && export PATH="$PATH:/opt/swift/usr/bin"
mkdir -p .build-tsan
rm -f .build-tsan/tsan-report.*
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 history_size=4 log_path=$PWD/.build-tsan/tsan-report ${TSAN_OPTIONS:-}"
# Swift's own crash handler would race TSan's for signals; TSan reports are what we want here.
export SWIFT_BACKTRACE=enable=no
started=$SECONDS
status=0
# VIEWPORTD_TSAN: the locks TSan can see (see Sources/ViewportLock/TSanMutex.swift).
swift test --sanitize=thread --scratch-path .build-tsan -Xswiftc -DVIEWPORTD_TSAN "$@" || status=$?
reports=(.build-tsan/tsan-report.*)
if [[ -e ${reports[0]} ]]; then
    echo
    echo "tsan: ThreadSanitizer reports (${#reports[@]} file(s)):"
    cat "${reports[@]}"
    status=${status:-66}
    [[ $status -ne 0 ]] || status=66
fi
echo "tsan: finished in $((SECONDS - started)) s, exit $status"
exit "$status"
