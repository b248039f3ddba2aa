#!/usr/bin/env python3
"""The shared store's CPU under load: runs `scripts/cluster.sh load --no-restart` (a redis-server,
N viewportd instances, nginx, wrk updating C sessions) on a Redis port chosen here, reads Redis'
`INFO commandstats`, `cpu` and `stats` and the instances' session flushes (the sum of
`viewportd_store_flush_batch_size` in their /metrics) every second meanwhile, and prints for the
loaded window (the seconds in which EVALSHA ran): per command its calls, Redis CPU (usec) and
usec per call, and Redis' own CPU (used_cpu_user + used_cpu_sys) per session flush, per EVALSHA
call and per scrolling session.

    scripts/store-cpu.py --binary .build/release/viewportd [--duration 20s] [--connections 32]
    scripts/store-cpu.py --binary /tmp/viewportd-before --binary .build/release/viewportd --runs 3
    scripts/store-cpu.py --binary ... --store-url "$(scripts/redis-cluster.sh url)"

With --store-url (a Redis Cluster from scripts/redis-cluster.sh, say) the instances use that store
instead of a redis-server of their own, and the figures are the sums over its primaries. With
--store-core C the redis-server runs alone on CPU C and the load (instances, nginx, wrk) on the
other CPUs: a store on a core of its own, as in production, instead of one that shares its core
(and its caches) with the load.
"""
import argparse
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def primaries(store_url):
    """The ports of the primaries of the cluster behind `store_url` (redis://host:port,...)."""
    seed = store_url.split("//", 1)[-1].split(",")[0].split("@")[-1]
    out = subprocess.run(["redis-cli", "-p", seed.rsplit(":", 1)[1], "CLUSTER", "NODES"], capture_output=True, text=True, timeout=5).stdout
    return [int(line.split()[1].split("@")[0].rsplit(":", 1)[1]) for line in out.splitlines()
            if "master" in line.split()[2] and "fail" not in line.split()[2]]


def info_all(ports):
    """`info` summed over `ports`; None when one is unreachable."""
    total_commands, total_cpu, total_reads = {}, 0.0, 0
    for port in ports:
        got = info(port)
        if got is None:
            return None
        for name, (calls, usec) in got[0].items():
            c, u = total_commands.get(name, (0, 0))
            total_commands[name] = (c + calls, u + usec)
        total_cpu += got[1]
        total_reads += got[2]
    return total_commands, total_cpu, total_reads


def info(port):
    """INFO commandstats, cpu and stats as {command: (calls, usec)}, cpu seconds, reads processed
    (each a read of a client's socket: about one per round trip); None when unreachable."""
    try:
        # One call (Redis 7 takes several sections), else one per section.
        out = subprocess.run(["redis-cli", "-p", str(port), "INFO", "commandstats", "cpu", "stats"], capture_output=True, text=True,
                             timeout=5).stdout
        if "used_cpu_user:" not in out:
            out = "".join(subprocess.run(["redis-cli", "-p", str(port), "INFO", section], capture_output=True, text=True, timeout=5).stdout
                          for section in ("commandstats", "cpu", "stats"))
    except subprocess.TimeoutExpired:
        return None
    if "used_cpu_user:" not in out:
        return None
    commands, cpu, reads = {}, 0.0, 0
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("cmdstat_"):
            name, _, rest = line[len("cmdstat_"):].partition(":")
            fields = dict(kv.split("=") for kv in rest.split(","))
            commands[name] = (int(fields["calls"]), int(fields["usec"]))
        elif line.startswith("used_cpu_user:") or line.startswith("used_cpu_sys:"):
            cpu += float(line.split(":")[1])
        elif line.startswith("total_reads_processed:"):
            reads = int(line.split(":")[1])
    return commands, cpu, reads


def session_flushes(directory):
    """Sessions the instances' writers have written so far (their flush batch sizes summed): the
    instances of the cluster.sh run whose TMPDIR is `directory`."""
    total = 0.0
    for path in glob.glob(os.path.join(directory, "viewportd-cluster.*", "viewportd-*.port")):
        try:
            port = open(path).read().strip()
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
        except (OSError, ValueError):
            continue
        total += sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith("viewportd_store_flush_batch_size_sum"))
    return total


def stored_snapshot_sizes(port):
    """The stored snapshot's size (HSTRLEN snap) of each session in the store."""
    keys = subprocess.run(["redis-cli", "-p", str(port), "--scan", "--pattern", "*session:*"], capture_output=True, text=True,
                          timeout=10).stdout.split()
    sizes = []
    for key in keys[:64]:
        out = subprocess.run(["redis-cli", "-p", str(port), "HSTRLEN", key, "snap"], capture_output=True, text=True, timeout=5).stdout
        if out.strip().isdigit() and int(out) > 0:
            sizes.append(int(out))
    return sizes


def measure(binary, args):
    """One run of the load with `binary`: prints its figures, returns the summary's row."""
    redis_port = free_port()
    ports = primaries(args.store_url) if args.store_url else [redis_port]
    directory = tempfile.mkdtemp(prefix="store-cpu-")
    samples = []  # (time, commands, cpu, reads processed, session flushes)
    loading = []  # per sample: whether wrk had started
    stop = threading.Event()

    snapshot_sizes = []

    pinned = []

    def pin_store():
        """Moves the store (every thread of each server in `ports`) to CPU `--store-core`."""
        for port in ports:
            out = subprocess.run(["redis-cli", "-p", str(port), "INFO", "server"], capture_output=True, text=True, timeout=5).stdout
            pid = next((line.split(":")[1].strip() for line in out.splitlines() if line.startswith("process_id:")), None)
            if pid:
                subprocess.run(["taskset", "-a", "-pc", str(args.store_core), pid], capture_output=True, check=True)
                pinned.append(pid)

    def sample():
        while not stop.is_set():
            got = info_all(ports)
            if got and args.store_core is not None and not pinned:
                pin_store()
            if got:
                # The instances' counts only grow; once they stop (the end of the run), the last.
                flushes = max(session_flushes(directory), samples[-1][4] if samples else 0)
                samples.append((time.time(), *got, flushes))
                # cluster.sh writes wrk's script once the sessions are open and updated once.
                loading.append(bool(glob.glob(os.path.join(directory, "viewportd-cluster.*", "load.lua"))))
                calls = [s[1].get("evalsha", (0, 0))[0] for s in samples[-2:]]
                if not snapshot_sizes and len(calls) == 2 and calls[1] - calls[0] >= 50:
                    for port in ports:
                        snapshot_sizes.extend(stored_snapshot_sizes(port))
            stop.wait(1.0)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    others = []
    if args.store_core is not None:
        # The load (instances, nginx, wrk) on every other CPU; the store is moved once it runs.
        others = ["taskset", "-c", ",".join(str(c) for c in range(os.cpu_count() or 1) if c != args.store_core)]
    load = subprocess.run(
        others + [os.path.join(ROOT, "scripts/cluster.sh"), "load", "--no-restart", "--settle", "5", "--binary", os.path.abspath(binary),
         "--redis-port", str(redis_port), "--duration", args.duration, "--connections", str(args.connections),
         "--instances", str(args.instances), "--held", str(args.held)] + (["--store-url", args.store_url] if args.store_url else []),
        capture_output=True, text=True, env=dict(os.environ, TMPDIR=directory))
    stop.set()
    sampler.join()
    shutil.rmtree(directory, ignore_errors=True)
    print(f"\n######## {binary}")
    print(load.stdout.strip())
    if load.returncode != 0:
        sys.exit(f"cluster.sh load failed: {load.stderr[-2000:]}")
    # The window: the seconds after wrk started with at least half the highest rate of session
    # flushes (or of EVALSHA calls, when the instances' metrics could not be read): wrk's, not the
    # sessions' setup before it (their opening, first update and handover) or the reads after it.
    evals = [s[4] for s in samples] if samples and samples[-1][4] > 0 else [s[1].get("evalsha", (0, 0))[0] for s in samples]
    rates = [evals[k] - evals[k - 1] for k in range(1, len(samples)) if loading[k - 1]]
    busy = [k for k in range(1, len(samples)) if rates and loading[k - 1] and evals[k] - evals[k - 1] >= max(50, max(rates) / 2)]
    if not busy:
        sys.exit("no second with session flushes: nothing was measured")
    first, last = busy[0] - 1, busy[-1]
    (t0, c0, cpu0, r0, f0), (t1, c1, cpu1, r1, f1) = samples[first], samples[last]
    seconds = t1 - t0
    # The baseline: Redis with the instances running idle (cluster.sh waits 5 s after starting
    # them, before it opens the sessions): the last stretch of seconds without a script call
    # before the window.
    def quiet(k):
        return samples[k][1].get("evalsha", (0, 0))[0] == samples[k - 1][1].get("evalsha", (0, 0))[0] and samples[k][4] == 0
    end = max((k for k in range(1, first + 1) if quiet(k)), default=None)
    baseline = None
    if end is not None:
        start = end
        while start > 1 and quiet(start - 1):
            start -= 1
        if end - start + 1 >= 2:
            (i0, _, icpu0, _, _), (i1, _, icpu1, _, _) = samples[start - 1], samples[end]
            baseline = (icpu1 - icpu0) * 1e6 / (i1 - i0)
            idle = (start - 1, end)
    store = f"cluster, {len(ports)} primaries" if args.store_url else "one redis-server"
    if pinned:
        store += f" on CPU {args.store_core} alone (the load on the others)"
    print(f"\n== Redis during the load ({store}): {seconds:.1f} s, {args.connections} sessions{f' (and {args.held} held)' if args.held else ''}, {args.instances} instances ==")
    print(f"{'command':<14}{'calls':>10}{'usec':>12}{'usec/call':>11}")
    rows = []
    for name in sorted(c1):
        calls = c1[name][0] - c0.get(name, (0, 0))[0]
        usec = c1[name][1] - c0.get(name, (0, 0))[1]
        if calls > 0:
            rows.append((usec, name, calls))
    rows = [r for r in rows if r[1] != "info"]  # this script's own sampling
    for usec, name, calls in sorted(rows, reverse=True):
        print(f"{name:<14}{calls:>10}{usec:>12}{usec / calls:>11.1f}")
    evalsha = c1.get("evalsha", (0, 0))[0] - c0.get("evalsha", (0, 0))[0]
    cpu_us = (cpu1 - cpu0) * 1e6
    reads = (r1 - r0) / seconds
    print("(Redis 7 counts the commands a script calls in their own rows too: evalsha's usec includes them)")
    print(f"Redis CPU (used_cpu_user+sys): {cpu_us / 1e3:.0f} ms in {seconds:.1f} s = {cpu_us / seconds / 1e3:.1f} ms/s; "
          f"socket reads (about one per round trip): {reads:.0f}/s")
    flushes = f1 - f0
    per_flush = cpu_us / flushes if flushes > 0 else float("nan")
    above = float("nan")
    if flushes > 0:
        print(f"session flushes: {flushes:.0f} ({flushes / seconds / args.connections:.1f} per session per second); "
              f"per session flush: {per_flush:.1f} us of Redis CPU")
        if baseline is not None:
            above = (cpu_us / seconds - baseline) * seconds / flushes
            print(f"before the load (Redis and the idle instances, {samples[idle[1]][0] - samples[idle[0]][0]:.1f} s): {baseline / 1e3:.1f} ms/s; "
                  f"above it, per session flush: {above:.1f} us")
    if evalsha > 0:
        print(f"per EVALSHA call: {cpu_us / evalsha:.1f} us of Redis CPU")
    print(f"per scrolling session: {cpu_us / seconds / args.connections / 1e3:.2f} ms of CPU per second "
          f"=> {1e6 / (cpu_us / seconds / args.connections):.0f} such sessions per Redis core")
    if snapshot_sizes:
        print(f"stored snapshots: {len(snapshot_sizes)} sessions, {min(snapshot_sizes)}-{max(snapshot_sizes)} bytes, "
              f"mean {sum(snapshot_sizes) / len(snapshot_sizes):.0f}")
    return (binary, per_flush, above, cpu_us / seconds / 1e3, baseline / 1e3 if baseline is not None else float("nan"), evalsha / seconds,
            reads, flushes / seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, action="append",
                        help="a viewportd binary; given several times, the runs alternate between them (A B A B …)")
    parser.add_argument("--runs", type=int, default=1, help="runs per binary (default 1)")
    parser.add_argument("--duration", default="20s")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--instances", type=int, default=3)
    parser.add_argument("--store-url", default="")
    parser.add_argument("--held", type=int, default=0,
                        help="sessions held besides the scrolling ones (opened, updated once, then left alone: their leases are "
                             "renewed); their cost counts, their renewals are not flushes")
    parser.add_argument("--store-core", type=int, default=None,
                        help="run the store on this CPU alone and the load on the others (a store on a core of its own, as in "
                             "production, instead of sharing both with the load)")
    args = parser.parse_args()
    if args.store_core is not None and (os.cpu_count() or 1) < 2:
        sys.exit("--store-core needs at least 2 CPUs")
    summary = [measure(binary, args) for _ in range(args.runs) for binary in args.binary]
    if len(summary) > 1:
        print(f"\n== Summary, in the order run ({args.connections} sessions{f' and {args.held} held' if args.held else ''}, {args.instances} instances) ==")
        print(f"{'binary':<36}{'us/flush':>9}{'above idle':>11}{'ms/s':>7}{'idle ms/s':>10}{'EVALSHA/s':>10}{'reads/s':>8}{'flushes/s':>10}")
        for binary, per_flush, above, ms, idle, evalsha, reads, flushes in summary:
            print(f"{binary[-36:]:<36}{per_flush:>9.1f}{above:>11.1f}{ms:>7.1f}{idle:>10.1f}{evalsha:>10.0f}{reads:>8.0f}{flushes:>10.0f}")


if __name__ == "__main__":
    main()
