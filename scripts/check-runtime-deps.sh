#!/usr/bin/env bash
# Checks that the Dockerfile's runtime stage provides every shared library the release binary
# needs, without a Docker engine:
#
#   1. `ldd BINARY` lists the libraries (direct and transitive);
#   2. `dpkg -S` maps each library file to its Debian package (this machine is Debian 12, the
#      release of the runtime image);
#   3. a package counts as provided when it is in debian:bookworm-slim
#      (scripts/bookworm-slim-packages.txt), is named in the runtime stage's `apt-get install`
#      (the Dockerfile's last FROM stage), or is a dependency (Depends/Pre-Depends, recursively,
#      first alternative) of one that is.
#
# Usage: scripts/check-runtime-deps.sh [BINARY] [DOCKERFILE]
#   BINARY      default .build/release/viewportd (build it with --static-swift-stdlib, as the
#               Dockerfile does; otherwise the Swift runtime libraries are reported missing)
#   DOCKERFILE  default ./Dockerfile
# Exits 1 naming every library that is not covered, 2 on a usage or setup error.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
binary="${1:-$repo_root/.build/release/viewportd}"
dockerfile="${2:-$repo_root/Dockerfile}"
base_list="$repo_root/scripts/bookworm-slim-packages.txt"

die() { echo "check-runtime-deps: $*" >&2; exit 2; }
[[ -x "$binary" ]] || die "no executable at $binary (build it first)"
[[ -f "$dockerfile" ]] || die "no Dockerfile at $dockerfile"
[[ -f "$base_list" ]] || die "missing $base_list"
command -v ldd >/dev/null || die "ldd not found"
command -v dpkg >/dev/null || die "dpkg not found (this check runs on Debian)"

# --- the base image's packages -------------------------------------------------------------
declare -A base=()
while read -r pkg _; do
    [[ -z "$pkg" || "$pkg" == \#* ]] && continue
    base["${pkg%%:*}"]=1
done < "$base_list"

# --- the runtime stage's apt-get install list ----------------------------------------------
# Join continuation lines, keep the last stage (from its FROM on), split commands on && ; |,
# and take the non-option words after `apt-get install` (dropping =version pins).
runtime_packages() {
    sed -e ':a' -e '/\\$/{N;s/\\\n/ /;ba' -e '}' "$1" \
        | awk 'toupper($1) == "FROM" { stage = "" } { stage = stage $0 "\n" } END { printf "%s", stage }' \
        | grep -E '^[[:space:]]*RUN[[:space:]]' \
        | sed -e 's/&&/\n/g' -e 's/;/\n/g' -e 's/||/\n/g' \
        | awk '{
            for (i = 1; i <= NF; i++) if ($i == "apt-get" && $(i+1) == "install") {
                for (j = i + 2; j <= NF; j++) { if ($j !~ /^-/) print $j }
            }
        }' \
        | sed -e 's/=.*//' -e 's/:.*//' | sort -u
}
mapfile -t installed < <(runtime_packages "$dockerfile")
if [[ ${#installed[@]} -eq 0 ]]; then
    echo "check-runtime-deps: note: the runtime stage installs no packages" >&2
fi

# --- dependency closure of the installed packages -------------------------------------------
package_depends() {  # prints the first alternative of each Depends/Pre-Depends entry
    local p="$1" fields
    if ! fields="$(dpkg-query -W -f='${Depends}, ${Pre-Depends}' "$p" 2>/dev/null)"; then
        fields="$(apt-cache show --no-all-versions "$p" 2>/dev/null \
            | sed -n -e 's/^Depends: //p' -e 's/^Pre-Depends: //p' | paste -sd, -)" || fields=""
    fi
    tr ',' '\n' <<<"$fields" | sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' \
        | sed '/^$/d'
}
declare -A provided_by=()   # package -> why it is there
queue=()
for p in "${installed[@]}"; do provided_by["$p"]="installed by the runtime stage"; queue+=("$p"); done
while [[ ${#queue[@]} -gt 0 ]]; do
    p="${queue[0]}"; queue=("${queue[@]:1}")
    while read -r d; do
        [[ -n "${provided_by[$d]:-}" || -n "${base[$d]:-}" ]] && continue
        provided_by["$d"]="dependency of $p (installed with it)"
        queue+=("$d")
    done < <(package_depends "$p")
done

# --- each library ---------------------------------------------------------------------------
owner_of() {  # the Debian package that ships a library file, trying the merged-/usr aliases
    local path="$1" candidates=() c out
    candidates+=("$path")
    case "$path" in
        /usr/lib/*|/usr/lib64/*) candidates+=("${path#/usr}") ;;
        /lib/*|/lib64/*) candidates+=("/usr$path") ;;
    esac
    local real; real="$(readlink -f "$path" 2>/dev/null || true)"
    if [[ -n "$real" && "$real" != "$path" ]]; then
        candidates+=("$real")
        case "$real" in /usr/lib/*) candidates+=("${real#/usr}") ;; /lib/*) candidates+=("/usr$real") ;; esac
    fi
    for c in "${candidates[@]}"; do
        if out="$(dpkg -S "$c" 2>/dev/null)"; then
            # "libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6" (diversions print other lines)
            out="$(grep -v '^diversion' <<<"$out" | head -n 1)"
            out="${out%%: *}"; out="${out%%,*}"
            echo "${out%%:*}"
            return 0
        fi
    done
    return 1
}

ldd_out="$(ldd "$binary" 2>&1)" || die "ldd failed on $binary: $ldd_out"
if grep -q 'not a dynamic executable' <<<"$ldd_out"; then
    echo "check-runtime-deps: $binary is statically linked: nothing to provide"; exit 0
fi

missing=0
printf '%-28s %-22s %s\n' "LIBRARY" "PACKAGE" "PROVIDED BY"
while read -r line; do
    line="${line#"${line%%[![:space:]]*}"}"
    [[ -z "$line" ]] && continue
    name="${line%% *}"
    case "$name" in linux-vdso.so.*|linux-gate.so.*) continue ;; esac
    if [[ "$line" == *"=> not found"* ]]; then
        printf '%-28s %-22s %s\n' "$name" "?" "NOT FOUND on this machine"; missing=$((missing + 1)); continue
    fi
    if [[ "$line" == *" => "* ]]; then path="${line#* => }"; else path="$name"; fi
    path="${path%% (*}"
    if ! pkg="$(owner_of "$path")"; then
        hint=""
        case "$path" in *swift*) hint=" (a Swift runtime library: build with --static-swift-stdlib)" ;; esac
        printf '%-28s %-22s %s\n' "$name" "?" "NOT COVERED: $path belongs to no Debian package$hint"
        missing=$((missing + 1)); continue
    fi
    if [[ -n "${base[$pkg]:-}" ]]; then
        why="base image (debian:bookworm-slim)"
    elif [[ -n "${provided_by[$pkg]:-}" ]]; then
        why="${provided_by[$pkg]}"
    else
        why="NOT COVERED: add $pkg to the runtime stage's apt-get install"
        missing=$((missing + 1))
    fi
    printf '%-28s %-22s %s\n' "$name" "$pkg" "$why"
done <<<"$ldd_out"

if [[ $missing -gt 0 ]]; then
    echo "check-runtime-deps: FAIL: $missing librar$([[ $missing -eq 1 ]] && echo y || echo ies) of $binary not provided by the runtime image (runtime stage installs: ${installed[*]:-nothing})" >&2
    exit 1
fi
echo "check-runtime-deps: OK: every library of $(basename "$binary") is in debian:bookworm-slim or installed by the runtime stage (${installed[*]:-nothing})"
