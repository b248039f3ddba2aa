#!/usr/bin/env bash
# Builds the Dockerfile with podman and runs the image for real; brings deploy/docker-compose.yml
# up with podman-compose. No registry is needed: the base images the Dockerfile and the compose
# file name are stand-ins made here from Debian's mirror.
#
#   scripts/image-test.sh [image|compose|all|bases] [--rebuild-bases] [--keep-image]
#     bases    make the stand-in base images (only the missing or outdated ones):
#                debian:bookworm-slim  debootstrap --variant=minbase bookworm, slimmed like the
#                                      official image (same package set), imported;
#                swift:6.3-bookworm    that base + swift.org's Debian 12 dependencies + this
#                                      machine's toolchain (/opt/swift);
#                redis:7-alpine        that base + Debian's redis-server, the upstream command;
#                nginx:1.27-alpine     that base + Debian's nginx, the upstream command.
#              Each carries a label with a digest of its recipe (and of what it is made from), so
#              an existing image is reused across runs and rebuilt when missing or outdated.
#     image    bases, then `podman build --pull=never` of the Dockerfile as it is (the Swift
#              package mirror /opt/swift-packages and the machine's git insteadOf rule mounted
#              into the build), and runs the image: the listening line, /healthz, the README
#              walkthrough's first three requests, the process's user (the image's non-root one),
#              `podman healthcheck run`, configuration by environment and by a mounted file,
#              SIGTERM -> exit 0 within the grace; prints the image's size.
#     compose  bases and the image (a cached build), then `podman-compose up` of
#              deploy/docker-compose.yml: three viewportd, Redis and nginx; docs/operations/store.md's cluster
#              walkthrough through nginx; `scripts/cluster.sh load --url` through nginx while one
#              instance is stopped with `podman stop`: no error, no update lost; then `down`.
#     all      image, then compose (the default).
#   --rebuild-bases  remake the stand-ins even when current.
#   --keep-image     leave the built image (localhost/viewportd:image-test) and the compose
#                    project's containers in place on failure, for a look.
#
# Podman runs with a containers.conf of its own (CONTAINERS_CONF): no default ulimits (runc
# cannot raise RLIMIT_NOFILE/NPROC here), the runc runtime (crun refuses hybrid cgroup v1
# mounts), host networking for builds, cgroupfs and file events (no systemd). Without systemd
# podman starts no health-check timers: the checks here run `podman healthcheck run` themselves.
# Needs root and scripts/install-deps.sh --image.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command="all" rebuild_bases=0 keep=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        image|compose|all|bases) command="$1"; shift ;;
        --rebuild-bases) rebuild_bases=1; shift ;;
        --keep-image) keep=1; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "image-test: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

log() { echo "image-test: $*" >&2; }
fail() { echo "image-test: FAIL: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (podman builds as root here)"
for tool in podman debootstrap curl python3; do command -v "$tool" >/dev/null || [[ -x "/usr/sbin/$tool" ]] \
    || fail "$tool is missing (scripts/install-deps.sh --image)"; done
export PATH="$PATH:/usr/sbin"

image=localhost/viewportd:image-test
label=org.viewportd.image-test.recipe
work="$(mktemp -d -t viewportd-image-test.XXXXXX)"
containers=()  # to remove on exit
project=""     # the compose project to bring down on exit
status=0
cleanup() {
    local c
    if [[ $keep -eq 1 && $status -ne 0 ]]; then
        log "kept for a look: ${containers[*]:-} ${project:+compose project $project}"
    else
        for c in "${containers[@]}"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
        if [[ -n "$project" ]]; then compose down -v >/dev/null 2>&1 || true; fi
    fi
    rm -rf "$work"
}
trap 'status=$?; cleanup' EXIT
trap 'exit 130' INT TERM

cat > "$work/containers.conf" <<'EOF'
[containers]
default_ulimits = []
netns = "host"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
export CONTAINERS_CONF="$work/containers.conf"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
digest() { sha256sum | cut -c1-16; }
image_label() { podman image inspect --format "{{index .Labels \"$label\"}}" "$1" 2>/dev/null || true; }
recipe_of() {  # a stand-in's recipe digest, a real image's id
    local have; have="$(image_label "$1")"
    if [[ -z "$have" || "$have" == "<no value>" ]]; then podman image inspect --format '{{.Id}}' "$1"; else echo "$have"; fi
}

# current NAME RECIPE_DIGEST: the image exists and was made from this recipe. An image without the
# label (a real one, pulled from a registry) counts as current.
current() {
    local have
    [[ $rebuild_bases -eq 0 ]] || return 1
    podman image exists "$1" || return 1
    have="$(image_label "$1")"
    [[ "$have" == "<no value>" || -z "$have" || "$have" == "$2" ]]
}

# --- stand-in base images ------------------------------------------------------------------
debian_image=docker.io/library/debian:bookworm-slim
swift_image=docker.io/library/swift:6.3-bookworm
redis_image=docker.io/library/redis:7-alpine
nginx_image=docker.io/library/nginx:1.27-alpine

# What debian:bookworm-slim does beyond minbase (debuerreotype's slimming): no documentation,
# manual pages or translations, apt lists and caches removed after every install; the same
# sources (bookworm, -updates, -security).
slim_recipe() {
    cat <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
}
debian_sources() {
    cat <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
}

make_debian() {
    local recipe rootfs="$work/rootfs"
    recipe="$({ echo "debootstrap --variant=minbase bookworm"; slim_recipe; debian_sources; } | digest)"
    if current "$debian_image" "$recipe"; then log "$debian_image: present"; return; fi
    log "$debian_image: debootstrap --variant=minbase bookworm (a few minutes)"
    debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
        || { tail -n 20 "$work/debootstrap.log" >&2; fail "debootstrap failed"; }
    slim_recipe > "$rootfs/etc/dpkg/dpkg.cfg.d/docker"
    printf '%s\n' 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
        'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
        'Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";' > "$rootfs/etc/apt/apt.conf.d/docker-clean"
    rm -f "$rootfs/etc/apt/sources.list"
    debian_sources > "$rootfs/etc/apt/sources.list.d/debian.sources"
    find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$rootfs"/usr/share/{man,info,groff,linda,lintian}/* "$rootfs"/var/lib/apt/lists/* \
        "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/log/*.log
    find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
    : > "$rootfs/etc/resolv.conf"; : > "$rootfs/etc/hostname"
    tar -C "$rootfs" --numeric-owner -c . \
        | podman import --change 'CMD ["bash"]' --change "LABEL $label=$recipe" - "$debian_image" >/dev/null 2>"$work/import.log" \
        || { cat "$work/import.log" >&2; fail "podman import failed"; }
    rm -rf "$rootfs"
    log "$debian_image: imported ($(podman image inspect --format '{{.Size}}' "$debian_image" | numfmt --to=iec))"
}

# build_standin NAME RECIPE_EXTRA [PODMAN_BUILD_ARGS...] < Containerfile: builds NAME from the
# Containerfile on stdin unless it is current (the recipe digest covers the Containerfile, the
# base image's recipe (its id when it is a real one) and RECIPE_EXTRA).
build_standin() {
    local name="$1" extra="$2" recipe file="$work/Containerfile.$RANDOM"
    shift 2
    cat > "$file"
    recipe="$({ cat "$file"; recipe_of "$debian_image"; echo "$extra"; } | digest)"
    if current "$name" "$recipe"; then log "$name: present"; return; fi
    log "$name: building the stand-in"
    podman build --pull=never --network host --label "$label=$recipe" -t "$name" -f "$file" "$@" "$work" \
        >"$work/build-standin.log" 2>&1 || { tail -n 30 "$work/build-standin.log" >&2; fail "building $name failed"; }
    log "$name: built ($(podman image inspect --format '{{.Size}}' "$name" | numfmt --to=iec))"
}

make_bases() {
    make_debian
    # swift:6.3-bookworm installs the toolchain into / (swift at /usr/bin/swift).
    local toolchain
    toolchain="$(/opt/swift/usr/bin/swift --version 2>&1 | head -n 1)" || fail "no Swift toolchain at /opt/swift"
    build_standin "$swift_image" "$toolchain" -v /opt/swift:/toolchain:ro <<EOF
FROM $debian_image
RUN apt-get update \\
    && apt-get install -y --no-install-recommends $(bash "$repo_root/scripts/install-deps.sh" --swift-packages) \\
    && rm -rf /var/lib/apt/lists/*
RUN cp -a /toolchain/usr/. /usr/ && swift --version
CMD ["bash"]
EOF
    # The upstream image's entrypoint drops to the redis user and its redis-server is built with
    # protected mode off (Debian's is on: it would refuse the other containers).
    build_standin "$redis_image" "" <<EOF
FROM $debian_image
RUN apt-get update \\
    && apt-get install -y --no-install-recommends redis-server \\
    && rm -rf /var/lib/apt/lists/* \\
    && mkdir -p /data && chown redis:redis /data \\
    && printf '%s\\n' '#!/bin/sh' 'set -e' \\
        'if [ "\${1#-}" != "\$1" ]; then set -- redis-server "\$@"; fi' \\
        'if [ "\$1" = redis-server ]; then shift; set -- redis-server --protected-mode no "\$@"; fi' \\
        'if [ "\$1" = redis-server ] && [ "\$(id -u)" = 0 ]; then chown -R redis:redis . 2>/dev/null || true; exec setpriv --reuid=redis --regid=redis --init-groups "\$@"; fi' \\
        'exec "\$@"' > /usr/local/bin/docker-entrypoint.sh \\
    && chmod +x /usr/local/bin/docker-entrypoint.sh
VOLUME /data
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
EOF
    build_standin "$nginx_image" "" <<EOF
FROM $debian_image
RUN apt-get update \\
    && apt-get install -y --no-install-recommends nginx-light \\
    && rm -rf /var/lib/apt/lists/* \\
    && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
EOF
}

# --- the image -------------------------------------------------------------------------------
build_image() {
    # The machine's git rules that send github.com to the package mirror, as the build's system
    # git configuration.
    { git config --system --get-regexp '^url\.' || true; git config --global --get-regexp '^url\.' || true; } \
        | while read -r key value; do
            git config --file "$work/gitconfig" --add "$key" "$value"
        done
    touch "$work/gitconfig"
    local mounts=(-v "$work/gitconfig:/etc/gitconfig:ro")
    [[ -d /opt/swift-packages ]] && mounts+=(-v /opt/swift-packages:/opt/swift-packages:ro)
    log "podman build --pull=never -t $image . (the release build is the long part)"
    local started=$SECONDS
    # --format docker: OCI image configs have no health check, podman's default format would drop
    # the HEALTHCHECK.
    podman build --pull=never --format docker --network host "${mounts[@]}" -t "$image" -f "$repo_root/Dockerfile" "$repo_root" \
        >"$work/build.log" 2>&1 || { tail -n 60 "$work/build.log" >&2; fail "podman build failed"; }
    log "built $image in $((SECONDS - started)) s"
    # Earlier builds' layers that no tag names any more, once they are a week old (the recent ones
    # are the layer cache).
    podman image prune -f --filter until=168h >/dev/null 2>&1 || true
    log "image size: $(podman image inspect --format '{{.Size}}' "$image") bytes ($(podman image inspect --format '{{.Size}}' "$image" | numfmt --to=iec))"
}

# wait_for_log CONTAINER PATTERN SECONDS
wait_for_log() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        podman logs "$1" 2>&1 | grep -q -- "$2" && return 0
        [[ "$(podman inspect --format '{{.State.Running}}' "$1" 2>/dev/null)" == true ]] || break
        sleep 0.1
    done
    podman logs "$1" 2>&1 | tail -n 30 >&2
    return 1
}

# run_container NAME [PODMAN RUN ARGS...]: started detached on the default bridge network
run_container() {
    local name="$1"; shift
    containers+=("$name")
    # (podman's complaint that it cannot reach systemd for the health-check timer goes to the log)
    podman run -d --name "$name" --network podman "$@" >/dev/null 2>>"$work/podman.log" \
        || { cat "$work/podman.log" >&2; fail "podman run $name failed"; }
}

# The README walkthrough's first three requests (LazyScrollView's home page): its answers as the
# README gives them (ids, counts, the plans' views). Through nginx (cluster) the session moves to
# the instance its id hashes to, and views created after a move are numbered a block higher.
walkthrough() {  # walkthrough single|cluster BASE_URL [CURL ARGS...]
    python3 - "$@" <<'PY'
import json, subprocess, sys
mode, base, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
def call(method, path, body):
    out = subprocess.run(["curl", "-sS", "--max-time", "10", "-X", method, "-H", "Content-Type: application/json",
                          *extra, "--data-binary", json.dumps(body), "-w", "\n%{http_code}", base + path],
                         check=True, capture_output=True, text=True).stdout
    text, code = out.rsplit("\n", 1)
    return int(code), json.loads(text)
rects = {"0/0": [25, 15, 156, 150], "0/1": [194, 15, 156, 150], "0/2": [25, 180, 156, 150],
         "0/3": [194, 180, 156, 150], "1/0": [5, 360, 177.5, 150], "1/1": [192.5, 426, 84, 84],
         "1/2": [192.5, 360, 177.5, 56], "1/3": [286.5, 426, 83.5, 84], "2/0": [25, 530, 325, 150],
         "2/1": [25, 695, 325, 150], "2/2": [25, 860, 325, 150]}
items = [{"id": i, "rect": r, "reuse": "tile" if i.startswith("1/") else "card"} for i, r in rects.items()]
code, layout = call("POST", "/v1/layouts", {"items": items})
assert code in (200, 201) and layout == {"layout": "a793af0eb48c508b85521be0cc2683d4", "items": 11,
                                         "contentSize": [370, 1010]}, (code, layout)
code, opened = call("POST", "/v1/sessions", {"layout": layout["layout"], "viewport": [375, 300], "buffer": 20})
plan = opened["plan"]
assert code == 201 and plan["seq"] == 0 and [c["id"] for c in plan["create"]] == ["0/0", "0/1", "0/2", "0/3"], (code, opened)
code, plan = call("POST", f"/v1/sessions/{opened['session']}/viewport", {"offset": [0, 400], "seq": 1})
assert code == 200 and plan["seq"] == 1 and plan["offset"] == [0, 400], (code, plan)
assert plan["recycle"] == [{"id": f"0/{k}", "view": k + 1} for k in range(4)], plan
assert [(r["id"], r["view"], r["rebind"]) for r in plan["reuse"]] == [("2/0", 4, True), ("2/1", 3, True)], plan
first = plan["create"][0]
assert first["id"] == "1/0" and first["reuse"] == "tile" and first["rect"] == [5, 360, 177.5, 150], plan
assert first["view"] == 5 if mode == "single" else first["view"] > 4, plan
print(f"README walkthrough: layout {layout['layout']} (11 items), session opened (plan 0 creates 0/0-0/3), "
      f"plan 1 at [0,400] recycles views 1-4, reuses 4 and 3 for 2/0 and 2/1, creates 1/0 as view {first['view']}")
PY
}

test_image() {
    local name="viewportd-image-test-$$" port cfg_port out rc pid_status started
    [[ "$(podman image inspect --format '{{.Config.User}}' "$image")" == "10001:10001" ]] \
        || fail "the image's USER is $(podman image inspect --format '{{.Config.User}}' "$image"), not 10001:10001"

    # 1. Defaults: the image's config file, HTTP_HOST=0.0.0.0, port 8080 published on loopback.
    port="$(free_port)"
    run_container "$name" -p "127.0.0.1:$port:8080" "$image"
    wait_for_log "$name" 'listening on http://0.0.0.0:8080' 30 || fail "no 'listening on http://0.0.0.0:8080' line"
    log "$(podman logs "$name" 2>&1 | grep -m1 -o 'listening on http://[^ ]*')"
    out="$(curl -sS --max-time 5 "http://127.0.0.1:$port/healthz")" || fail "GET /healthz: no answer"
    python3 -c 'import json,sys; assert json.loads(sys.argv[1])["status"] == "ok"' "$out" || fail "GET /healthz: $out"
    log "GET /healthz -> $out"
    pid_status="$(podman exec "$name" sh -c 'grep -E "^(Uid|Gid):" /proc/1/status')"
    [[ "$(awk '/^Uid:/ { print $2 }' <<<"$pid_status")" == 10001 && "$(awk '/^Gid:/ { print $2 }' <<<"$pid_status")" == 10001 ]] \
        || fail "viewportd does not run as 10001:10001: $pid_status"
    log "viewportd is PID 1 as uid/gid 10001 (the image's USER)"
    walkthrough single "http://127.0.0.1:$port" >&2 || fail "the README walkthrough's first three requests"
    podman healthcheck run "$name" >/dev/null 2>&1 || fail "podman healthcheck run $name: unhealthy"
    log "podman healthcheck run: healthy"

    # SIGTERM (podman stop sends the image's stop signal, SIGTERM) -> exit 0 within the grace.
    started=$SECONDS
    podman stop -t 30 "$name" >/dev/null 2>>"$work/podman.log"
    rc="$(podman inspect --format '{{.State.ExitCode}}' "$name")"
    [[ "$rc" == 0 ]] || { podman logs "$name" 2>&1 | tail -n 20 >&2; fail "exit code $rc after SIGTERM (want 0)"; }
    (( SECONDS - started < 30 )) || fail "SIGTERM took $((SECONDS - started)) s (the grace is 30 s)"
    log "SIGTERM -> exit 0 in $((SECONDS - started)) s"
    podman rm -f "$name" >/dev/null 2>>"$work/podman.log"

    # 2. Configuration by environment: AUTH_TOKEN and HTTP_PORT; the health check follows HTTP_PORT.
    port="$(free_port)"
    run_container "$name-env" -p "127.0.0.1:$port:9090" -e HTTP_PORT=9090 -e AUTH_TOKEN=env-token "$image"
    wait_for_log "$name-env" 'listening on http://0.0.0.0:9090' 30 || fail "HTTP_PORT=9090: no listening line naming port 9090"
    [[ "$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/sessions/nope")" == 401 ]] \
        || fail "AUTH_TOKEN from the environment not in force (no 401 without the token)"
    walkthrough single "http://127.0.0.1:$port" -H "Authorization: Bearer env-token" >/dev/null \
        || fail "the walkthrough with the environment's token"
    podman healthcheck run "$name-env" >/dev/null 2>&1 || fail "podman healthcheck run with HTTP_PORT=9090: unhealthy"
    log "configuration by environment: HTTP_PORT=9090, AUTH_TOKEN in force, health check follows HTTP_PORT"
    podman rm -f -t 30 "$name-env" >/dev/null 2>>"$work/podman.log"

    # 3. Configuration by a mounted file over /app/config/viewportd.json.
    python3 - "$repo_root/config/viewportd.json" "$work/mounted.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config.setdefault("auth", {})["token"] = "file-token"
json.dump(config, open(sys.argv[2], "w"), indent=2)
PY
    chmod 0644 "$work/mounted.json"
    port="$(free_port)"
    run_container "$name-file" -p "127.0.0.1:$port:8080" -v "$work/mounted.json:/app/config/viewportd.json:ro" "$image"
    wait_for_log "$name-file" 'listening on http://0.0.0.0:8080' 30 || fail "with a mounted config file: no listening line"
    [[ "$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/sessions/nope")" == 401 ]] \
        || fail "the mounted file's auth.token is not in force (no 401 without it)"
    [[ "$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer file-token' "http://127.0.0.1:$port/v1/sessions/nope")" == 404 ]] \
        || fail "the mounted file's auth.token is not accepted (no 404 with it)"
    log "configuration by a mounted file: its auth.token in force (401 without, 404 with)"
    podman rm -f -t 30 "$name-file" >/dev/null 2>>"$work/podman.log"
    log "image: OK"
}

# --- the compose file ----------------------------------------------------------------------
# (bounded: podman-compose up waits without end for a container that failed to start)
compose() { timeout 300 podman-compose --project-name "$project" -f "$repo_root/deploy/docker-compose.yml" -f "$work/compose.override.yml" "$@"; }

# healthy_within CONTAINER SECONDS: runs the container's own health check until it passes
healthy_within() {
    local i
    for ((i = 0; i < $2; i++)); do
        podman healthcheck run "$1" >/dev/null 2>&1 && return 0
        sleep 1
    done
    return 1
}

test_compose() {
    local port k c
    project="viewportd-it-$$"
    port="$(free_port)"
    # The one change to the deployment: nginx published on a free loopback port instead of 8080,
    # which may be taken on a shared machine (an override file; deploy/ stays as it is).
    cat > "$work/compose.override.yml" <<EOF
services:
  nginx:
    ports: !override
      - "127.0.0.1:$port:8080"
EOF
    podman tag "$image" localhost/viewportd:local
    log "podman-compose up -d (project $project, nginx on 127.0.0.1:$port)"
    compose up -d --no-build >"$work/compose-up.log" 2>&1 || { tail -n 40 "$work/compose-up.log" >&2; fail "podman-compose up failed"; }
    for c in redis viewportd-1 viewportd-2 viewportd-3; do
        healthy_within "${project}_${c}_1" 60 || { podman logs "${project}_${c}_1" 2>&1 | tail -n 20 >&2; fail "$c not healthy within 60 s"; }
    done
    log "redis and viewportd-1..3 healthy (their compose health checks: redis-cli ping, /readyz)"
    for ((k = 0; k < 100; k++)); do curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
    curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$port/healthz" || { podman logs "${project}_nginx_1" 2>&1 | tail >&2; fail "nginx does not answer"; }

    # The cluster walkthrough through nginx: a session opened, updated, its instance stopped
    # (SIGTERM hands it over), updated again elsewhere, the instance started again.
    walkthrough cluster "http://127.0.0.1:$port" >&2 || fail "the walkthrough through nginx"
    python3 - "http://127.0.0.1:$port" "$project" <<'PY' >&2 || fail "the cluster walkthrough through nginx"
import json, subprocess, sys
base, project = sys.argv[1:]
def call(method, path, body=None):
    args = ["curl", "-sS", "--max-time", "15", "-X", method, "-w", "\n%{http_code}", base + path]
    if body is not None:
        args[4:4] = ["-H", "Content-Type: application/json", "--data-binary", json.dumps(body)]
    text, code = subprocess.run(args, check=True, capture_output=True, text=True).stdout.rsplit("\n", 1)
    return int(code), json.loads(text)
items = [{"id": str(i), "rect": [0, 50 * i, 375, 50], "reuse": "row"} for i in range(1000)]
code, layout = call("POST", "/v1/layouts", {"items": items})
assert code in (200, 201), (code, layout)
code, opened = call("POST", "/v1/sessions", {"layout": layout["layout"], "viewport": [375, 667]})
assert code == 201, (code, opened)
sid = opened["session"]
for seq in range(1, 6):
    code, plan = call("POST", f"/v1/sessions/{sid}/viewport", {"offset": [0, 100 * seq], "seq": seq})
    assert code == 200 and plan["seq"] == seq, (code, plan)
# Which instance holds it: the one whose /metrics counts its updates is not reachable from here,
# so stop each in turn and check the session goes on through nginx every time.
for k in (1, 2, 3):
    name = f"{project}_viewportd-{k}_1"
    subprocess.run(["podman", "stop", "-t", "30", name], check=True, capture_output=True)
    state = subprocess.run(["podman", "inspect", "--format", "{{.State.ExitCode}}", name], check=True, capture_output=True, text=True).stdout.strip()
    assert state == "0", f"{name} exited {state} after SIGTERM"
    seq += 1
    code, plan = call("POST", f"/v1/sessions/{sid}/viewport", {"offset": [0, 100 * seq], "seq": seq})
    assert code == 200 and plan["seq"] == seq, (f"after stopping viewportd-{k}", code, plan)
    subprocess.run(["podman", "start", name], check=True, capture_output=True)
    for _ in range(60):
        if subprocess.run(["podman", "healthcheck", "run", name], capture_output=True).returncode == 0:
            break
        subprocess.run(["sleep", "1"])
    else:
        raise SystemExit(f"{name} not healthy again within 60 s")
code, state = call("GET", f"/v1/sessions/{sid}")
assert code == 200 and state["seq"] == seq and state["stats"]["updates"] == seq, (code, state)
print(f"cluster walkthrough through nginx: session {sid[:8]}… updated across a podman stop (exit 0) and start of each instance: {seq} updates, none lost")
PY

    # Under load: wrk through nginx while one instance is stopped (scripts/cluster.sh's check).
    bash "$repo_root/scripts/cluster.sh" load --url "http://127.0.0.1:$port" --duration 15s \
        --disrupt "podman stop -t 30 ${project}_viewportd-2_1 >/dev/null" >&2 || fail "cluster load through the compose project's nginx"
    [[ "$(podman inspect --format '{{.State.ExitCode}}' "${project}_viewportd-2_1")" == 0 ]] \
        || fail "viewportd-2 did not exit 0 after podman stop under load"

    compose down -v >"$work/compose-down.log" 2>&1 || { tail -n 20 "$work/compose-down.log" >&2; fail "podman-compose down failed"; }
    project=""
    log "compose: OK (up, walkthrough, podman stop under load, down)"
}

started=$SECONDS
make_bases
log "stand-in base images ready in $((SECONDS - started)) s"
case "$command" in
    bases) ;;
    image) build_image; test_image ;;
    compose) build_image; test_compose ;;
    all) build_image; test_image; test_compose ;;
esac
log "OK in $((SECONDS - started)) s"
