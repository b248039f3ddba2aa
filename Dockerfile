# syntax=docker/dockerfile:1
#
# viewportd container image.
#
#   docker build -t viewportd .
#   docker run --rm -p 8080:8080 viewportd
#
# Configuration: the image carries the repository's config/viewportd.json as
# /app/config/viewportd.json (the service reads config/viewportd.json relative to its
# working directory, /app). Override it by mounting a file over it
# (-v ./my.json:/app/config/viewportd.json:ro), by pointing VIEWPORTD_CONFIG / --config at
# another file, or key by key with environment variables (HTTP_PORT, AUTH_TOKEN, ...) and
# flags (docker run viewportd --http-port 9090), each overriding the one before.

# ---- build stage --------------------------------------------------------------------------
# Official Swift image on Debian 12 (bookworm), the same Debian release as the runtime stage,
# so the libmicrohttpd the binary links against is the one the runtime stage installs.
FROM swift:6.3-bookworm AS build

RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd-dev libhiredis-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src

COPY Package.swift ./
COPY Sources ./Sources
# The OpenAPI document and its module (the ViewportOpenAPI target): embedded in the binary.
COPY openapi ./openapi
# The browser client and its demo page (the ViewportBrowserClient target): embedded too.
COPY clients/js ./clients/js
COPY Tests ./Tests
COPY config ./config

# --strip-debug drops DWARF (80 -> 74 MB) but keeps the symbol table, so the Swift runtime's
# crash backtraces still name functions.
# --static-swift-stdlib links the Swift runtime and Foundation into the binary, so the runtime
# stage needs no Swift toolchain: only libmicrohttpd12, libhiredis0.14 and what debian:bookworm-slim already has
# (libc6, libstdc++6, libgcc-s1; checked by scripts/check-runtime-deps.sh in CI).
# Cache mounts (BuildKit, buildah/podman) keep SwiftPM's scratch directory and its repository
# cache between builds, so a rebuild after a source change compiles only the modules that changed
# and resolves nothing; they are not part of any layer, hence the binary is copied out in the
# same step. A build without the cache (a pruned builder) resolves and compiles everything.
RUN --mount=type=cache,id=viewportd-swiftpm-build,target=/src/.build,sharing=locked \
    --mount=type=cache,id=viewportd-swiftpm-cache,target=/root/.cache/org.swift.swiftpm,sharing=locked \
    swift build -c release --static-swift-stdlib --product viewportd \
    && install -D -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path)/viewportd" /staging/viewportd \
    && strip --strip-debug /staging/viewportd

# ---- runtime stage ------------------------------------------------------------------------
FROM debian:bookworm-slim

# libmicrohttpd12 and libhiredis0.14 (the shared store's client, used when store.url is set)
# are the only packages the binary needs beyond the base image; their own dependencies
# (libgnutls30, ...) are already in debian:bookworm-slim.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd12 libhiredis0.14 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --no-create-home --home-dir /app --shell /usr/sbin/nologin viewportd

WORKDIR /app
COPY --from=build /staging/viewportd /app/viewportd
COPY config/viewportd.json /app/config/viewportd.json

# Numeric ids, so runAsNonRoot-style checks can verify the user without /etc/passwd.
USER 10001:10001

# Listen on every interface inside the container (the file's default may be loopback-only
# elsewhere). Environment variables override the config file, so HTTP_HOST wins over a mounted
# file's http.host; http.port is left to the file (8080) so a mounted file can change it.
ENV HTTP_HOST=0.0.0.0
EXPOSE 8080

# No curl in the slim image (it would add ~10 MB of libraries): bash's /dev/tcp sends a plain
# HTTP/1.0 request and the check passes on a "200" status line. It follows HTTP_PORT when that
# is set (default 8080; a port changed only in a mounted file needs HTTP_PORT set to match, or
# docker run --health-cmd); /healthz needs no token even when auth.token is set.
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/\"${HTTP_PORT:-8080}\" && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]

# Exec form: viewportd is PID 1 and receives SIGTERM itself (graceful drain, exit 0).
ENTRYPOINT ["/app/viewportd"]
