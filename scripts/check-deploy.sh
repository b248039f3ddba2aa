#!/usr/bin/env bash
# Checks deploy/ as far as a machine without a Docker engine can:
#
#   1. deploy/nginx.conf passes `nginx -t` (its upstream host names replaced by loopback
#      addresses: they only resolve inside the compose network);
#   2. deploy/docker-compose.yml parses (PyYAML) and is consistent with it: a Redis service, one
#      viewportd service per `server viewportd-N:8080` line of nginx.conf, each with STORE_URL
#      naming the Redis service, a readiness health check on /readyz and a stop grace period
#      longer than the drain, and nginx mounting deploy/nginx.conf and publishing its port.
#
# Usage: scripts/check-deploy.sh      (exit 1 naming what is wrong)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
work="$(mktemp -d -t viewportd-check-deploy.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tmp" "$work/logs"

# --- 1. nginx -t ---------------------------------------------------------------------------
sed -E -e 's/server viewportd-([0-9]+):8080/server 127.0.0.1:1808\1/' \
       -e "s#^pid .*#pid $work/nginx.pid;#" \
       -e "s#^http \\{#http {\\n    client_body_temp_path $work/tmp/body; proxy_temp_path $work/tmp/proxy; fastcgi_temp_path $work/tmp/fastcgi; uwsgi_temp_path $work/tmp/uwsgi; scgi_temp_path $work/tmp/scgi;#" \
       "$repo_root/deploy/nginx.conf" > "$work/nginx.conf"
if "$nginx_bin" -p "$work" -e "$work/error.log" -c "$work/nginx.conf" -t 2>"$work/nginx-t.log"; then
    echo "check-deploy: deploy/nginx.conf: nginx -t ok ($("$nginx_bin" -v 2>&1))"
else
    cat "$work/nginx-t.log" >&2
    echo "check-deploy: deploy/nginx.conf: nginx -t failed" >&2
    exit 1
fi

# --- 2. docker-compose.yml ------------------------------------------------------------------
python3 - "$repo_root/deploy/docker-compose.yml" "$repo_root/deploy/nginx.conf" <<'PY'
import re, sys
import yaml

compose_path, nginx_path = sys.argv[1], sys.argv[2]
problems = []
with open(compose_path) as f:
    compose = yaml.safe_load(f)
nginx = open(nginx_path).read()
services = compose.get("services") or {}
upstreams = re.findall(r"server (viewportd-\d+):8080", nginx)
if not upstreams:
    problems.append("nginx.conf names no viewportd upstream")
redis = [name for name, s in services.items() if "redis" in str(s.get("image", "")) or "valkey" in str(s.get("image", ""))]
if len(redis) != 1:
    problems.append(f"expected one Redis/Valkey service, found {redis}")
for name in upstreams:
    s = services.get(name)
    if s is None:
        problems.append(f"nginx.conf routes to {name}, which docker-compose.yml does not define")
        continue
    env = s.get("environment") or {}
    url = env.get("STORE_URL", "")
    if not redis or not str(url).startswith(f"redis://{redis[0]}:"):
        problems.append(f"{name}: STORE_URL {url!r} does not name the Redis service")
    if "build" not in s and "image" not in s:
        problems.append(f"{name}: no build or image")
    test = " ".join(map(str, (s.get("healthcheck") or {}).get("test", [])))
    if "/readyz" not in test:
        problems.append(f"{name}: the health check does not ask /readyz")
    grace = str(s.get("stop_grace_period", "10s"))
    if not re.fullmatch(r"\d+s", grace) or int(grace[:-1]) < 15:
        problems.append(f"{name}: stop_grace_period {grace} is shorter than the drain (http.drainTimeout 10 s) plus the handover")
extra = [n for n in services if n.startswith("viewportd") and n not in upstreams]
if extra:
    problems.append(f"viewportd services nginx does not route to: {extra}")
proxy = [s for s in services.values() if "nginx" in str(s.get("image", ""))]
if len(proxy) != 1:
    problems.append("expected one nginx service")
else:
    volumes = [str(v) for v in proxy[0].get("volumes", [])]
    if not any(v.startswith("./nginx.conf:/etc/nginx/nginx.conf") for v in volumes):
        problems.append("nginx does not mount ./nginx.conf as /etc/nginx/nginx.conf")
    if not any(str(p).endswith(":8080") for p in proxy[0].get("ports", [])):
        problems.append("nginx does not publish port 8080")
if problems:
    for p in problems:
        print(f"check-deploy: docker-compose.yml: {p}", file=sys.stderr)
    sys.exit(1)
print(f"check-deploy: deploy/docker-compose.yml: {len(services)} services, {len(upstreams)} viewportd behind nginx, Redis {redis[0]}: ok")
PY
