#!/usr/bin/env bash
# A Redis Cluster on loopback for development and CI: 3 primaries and 3 replicas
# (`redis-server --cluster-enabled yes` on free ports, each with its own directory), created with
# `redis-cli --cluster create --cluster-replicas 1`, ready once every node says cluster_state:ok.
#
#   scripts/redis-cluster.sh start [--dir DIR] [--primaries N] [--node-timeout MS]
#       start it (default DIR ${TMPDIR:-/tmp}/viewportd-redis-cluster, 3 primaries, 1000 ms) and
#       print the seed URL, redis://127.0.0.1:PORT1,127.0.0.1:PORT2,127.0.0.1:PORT3
#   scripts/redis-cluster.sh status [--dir DIR]   each node's port, role and cluster_state
#   scripts/redis-cluster.sh url [--dir DIR]      the seed URL again
#   scripts/redis-cluster.sh stop [--dir DIR]     stop every node and remove DIR
set -euo pipefail

command="${1:-}"; [[ $# -gt 0 ]] && shift
dir="${TMPDIR:-/tmp}/viewportd-redis-cluster" primaries=3 node_timeout=1000
while [[ $# -gt 0 ]]; do
    case "$1" in
        --dir) dir="$2"; shift 2 ;;
        --primaries) primaries="$2"; shift 2 ;;
        --node-timeout) node_timeout="$2"; shift 2 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "redis-cluster: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

log() { echo "redis-cluster: $*" >&2; }
die() { echo "redis-cluster: error: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
ports() { cat "$dir"/*/port 2>/dev/null || true; }

seed_url() {
    local url="" p
    for p in $(ports | head -n 3); do url="${url:+$url,}127.0.0.1:$p"; done
    [[ -n "$url" ]] || die "no cluster in $dir"
    echo "redis://$url"
}

cmd_stop() {
    local pidfile pid i
    for pidfile in "$dir"/*/pid; do
        [[ -f "$pidfile" ]] || continue
        pid="$(cat "$pidfile")"
        kill -CONT "$pid" 2>/dev/null || true
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pidfile in "$dir"/*/pid; do
        [[ -f "$pidfile" ]] || continue
        pid="$(cat "$pidfile")"
        for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    done
    rm -rf "$dir"
}

cmd_start() {
    [[ ! -d "$dir" ]] || die "$dir exists: stop the cluster there first (scripts/redis-cluster.sh stop --dir $dir)"
    command -v redis-server >/dev/null || die "redis-server not found (scripts/install-deps.sh)"
    mkdir -p "$dir"
    trap 'cmd_stop' EXIT
    local k port bus nodes=() i
    for k in $(seq 1 $((2 * primaries))); do
        port="$(free_port)" bus="$(free_port)"
        mkdir -p "$dir/$k"
        echo "$port" > "$dir/$k/port"
        # --cluster-port (Redis 7.0+): the bus port would be port + 10000, possibly past 65535.
        redis-server --port "$port" --cluster-port "$bus" --bind 127.0.0.1 --cluster-enabled yes \
            --cluster-config-file nodes.conf --cluster-node-timeout "$node_timeout" --cluster-require-full-coverage no --dir "$dir/$k" \
            --save "" --appendonly no --protected-mode no --loglevel warning --daemonize no \
            > "$dir/$k/redis.log" 2>&1 &
        echo $! > "$dir/$k/pid"
        nodes+=("127.0.0.1:$port")
    done
    for k in $(seq 1 $((2 * primaries))); do
        port="$(cat "$dir/$k/port")"
        for i in $(seq 1 100); do redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break; sleep 0.1; done
        redis-cli -p "$port" PING 2>/dev/null | grep -q PONG || die "node on $port did not start: $(cat "$dir/$k/redis.log")"
    done
    redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes > "$dir/create.log" 2>&1 \
        || die "redis-cli --cluster create failed: $(cat "$dir/create.log")"
    for i in $(seq 1 300); do
        local ok=1
        for port in $(ports); do
            redis-cli -p "$port" CLUSTER INFO 2>/dev/null | grep -q '^cluster_state:ok' || ok=0
            # Each primary's replica has finished its first sync.
            if redis-cli -p "$port" ROLE 2>/dev/null | head -n 1 | grep -q master; then
                redis-cli -p "$port" INFO replication | grep -q '^slave0:.*state=online' || ok=0
            fi
        done
        [[ $ok == 1 ]] && break
        sleep 0.1
    done
    [[ $ok == 1 ]] || die "the cluster did not reach cluster_state:ok with its replicas online"
    trap - EXIT
    log "$((2 * primaries)) nodes in $dir"
    seed_url
}

cmd_status() {
    local port
    for port in $(ports); do
        printf '%s %s %s\n' "$port" "$(redis-cli -p "$port" ROLE 2>/dev/null | head -n 1 || echo down)" \
            "$(redis-cli -p "$port" CLUSTER INFO 2>/dev/null | grep '^cluster_state' | tr -d '\r' || echo unreachable)"
    done
}

case "$command" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    url) seed_url ;;
    *) echo "usage: scripts/redis-cluster.sh start|status|url|stop [options] (see --help)" >&2; exit 2 ;;
esac
