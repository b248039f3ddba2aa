#!/usr/bin/env python3
"""Partitions and slow links between viewportd instances and their shared store, on real
processes: a redis-server and three viewportd instances, each instance in a network namespace of
its own on a bridge, its store traffic through a relay that can delay it, and cuts made with
iptables (DROP, or REJECT with a reset) inside the instance's namespace. Everything it makes
(namespaces, bridge, veths, processes, relays) is removed when it ends, also on failure.

Simulated clients replay sessions (one thread per session: updates with `seq`, failing over to
the next instance on 503 or a timeout with the same `seq`, resyncing on a 409 that asks for it;
every plan applied to a model of the client's views). Redis is sampled every 50 ms. Checks:

- owner: an answer 200 from instance X while the store showed the session not leased to X both
  before the request was sent and after its answer came, at the same epoch or one above it
  leased to another instance (X cannot have held the lease in between: taking or releasing a
  session changes its epoch);
- seq twice: one session's `seq` answered 200 with two different plans (answers a client gave
  up on count: the client retried that seq elsewhere);
- views: a plan that does not fit the client's views (a view it does not have, a handle used
  twice), a 409 for a seq behind the store, or a session whose state differs from the client's
  views at the end.

Scenarios (exit status 1 on a violation):
  --scenario v1       split brain after a release whose reply was lost (0.6 s delay on the link)
  --scenario v2       a seq answered 200 twice: owner cut off while requests for sessions it
                      does not hold wait for the store, the client gives up after 0.3 s and
                      retries elsewhere
  --scenario latency  p99 of the cut instance's answers for sessions it owns, during a 3 s cut
                      and a 3 s slow link (1 s) while other requests need the store, and how
                      soon they are answered there again after a 1 s and a 3 s cut; the 503
                      window of its sessions on the other instances after a 0.3 s cut; /readyz
                      timing around a cut
  --campaign --minutes N --seed S   randomized faults (drops and rejects of 0.3/1/3/10 s, delays
                      of 0.2/0.6/1 s with jitter, flapping, one-way drops, heal after takeover),
                      a table per fault

    sudo scripts/partition-campaign.py --binary .build/debug/viewportd --scenario v1
    sudo scripts/partition-campaign.py --binary .build/debug/viewportd --campaign --minutes 3 --seed 7

Needs root, iproute2, iptables (nft or legacy), redis-server; Python 3 standard library only.
"""
import argparse
import bisect
import collections
import http.client
import json
import os
import queue
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from resp import Resp

PREFIX = "viewportd:"

CELLS = 256  # StoreKeys.cellCount


def crc16(data):
    """CRC16/XMODEM, Redis Cluster's key hash."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def _cell_tags():
    """The hash tag of each cell: the first base-36 number in slot cell * (16384 / CELLS), as
    RedisHashSlot.tag(forSlot:) makes it."""
    wanted = {k * (16384 // CELLS): k for k in range(CELLS)}
    tags = [None] * CELLS
    n, left = 0, CELLS
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    while left:
        x, tag = n, ""
        while True:
            x, r = divmod(x, 36)
            tag = digits[r] + tag
            if x == 0:
                break
        k = wanted.get(crc16(tag.encode()) & 16383)
        if k is not None and tags[k] is None:
            tags[k] = tag
            left -= 1
        n += 1
    return tags


CELL_TAGS = _cell_tags()


def session_key(kind, session):
    """`session:{c}:<id>` or `lease:{c}:<id>` (StoreKeys)."""
    cell = CELL_TAGS[crc16(session.encode()) & (CELLS - 1)]
    return f"{PREFIX}{kind}:{{{cell}}}:{session}"
LEASE = 2.0


def now():
    return time.monotonic()


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def run(*command, check=True):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {result.stderr.strip()}")
    return result


def free_port(host="127.0.0.1"):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def percentile(values, p):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


# MARK: Redis


def text(value):
    return value.decode() if isinstance(value, bytes) else value


class Redis:
    def __init__(self, workdir):
        self.port = free_port()
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.log = open(os.path.join(workdir, "redis.log"), "wb")
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", workdir],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = now() + 10
        while True:
            try:
                c = Resp(self.port)
                if c.call("PING") == "PONG":
                    c.close()
                    break
            except OSError:
                pass
            if now() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class Sampler:
    """Samples every tracked session's record every 50 ms: (sent, received, {id: (lease owner or
    None, epoch, free)})."""

    def __init__(self, port, interval=0.05):
        self.client = Resp(port)
        self.interval = interval
        self.sessions = []
        self.samples = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def track(self, session):
        with self.lock:
            self.sessions.append(session)

    def loop(self):
        while not self.stopping.is_set():
            with self.lock:
                ids = list(self.sessions)
            if ids:
                commands = []
                for s in ids:
                    commands += [("GET", session_key("lease", s)), ("HMGET", session_key("session", s), "epoch", "free")]
                sent = now()
                try:
                    replies = self.client.pipeline(commands)
                except (OSError, ConnectionError):
                    time.sleep(self.interval)
                    continue
                received = now()
                state = {}
                for k, s in enumerate(ids):
                    lease, (epoch, free) = replies[2 * k], replies[2 * k + 1]
                    owner = text(lease).rsplit("|", 1)[0] if lease else None
                    state[s] = (owner, int(epoch) if epoch else None, free == b"1")
                with self.lock:
                    self.samples.append((sent, received, state))
            time.sleep(self.interval)

    def wait_for(self, session, predicate, timeout):
        deadline = now() + timeout
        while now() < deadline:
            with self.lock:
                last = self.samples[-1][2].get(session) if self.samples else None
            if last and predicate(last):
                return last
            time.sleep(0.02)
        return None

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=2)
        self.client.close()


# MARK: Network


class Relay:
    """A TCP relay from `listen` to Redis that delays what it carries (per direction, with
    jitter, order kept): the kernel here has no netem."""

    def __init__(self, host, target_port):
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind((host, 0))
        self.server.listen(64)
        self.port = self.server.getsockname()[1]
        self.target_port = target_port
        self.delay = 0.0
        self.jitter = 0.0
        self.rng = random.Random(1)
        self.stopping = False
        self.sockets = set()
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def set_delay(self, seconds, jitter=0.0):
        self.delay, self.jitter = seconds, jitter

    def accept(self):
        while not self.stopping:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.sockets |= {client, upstream}
            self.pump(client, upstream)
            self.pump(upstream, client)

    def pump(self, source, sink):
        chunks = queue.Queue()

        def read():
            due = 0.0
            while True:
                try:
                    data = source.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    chunks.put((now(), None))
                    return
                delay = self.delay
                if delay > 0 and self.jitter > 0:
                    delay = max(0.0, delay * (1 + self.rng.uniform(-self.jitter, self.jitter)))
                due = max(due, now() + delay)
                chunks.put((due, data))

        def write():
            while True:
                due, data = chunks.get()
                wait = due - now()
                if wait > 0:
                    time.sleep(wait)
                if data is None:
                    try:
                        sink.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    return
                try:
                    sink.sendall(data)
                except OSError:
                    self.close(source, sink)
                    return

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()

    def close(self, *sockets):
        for s in sockets:
            try:
                s.close()
            except OSError:
                pass

    def stop(self):
        self.stopping = True
        self.close(self.server)
        with self.lock:
            self.close(*self.sockets)


class Network:
    """A bridge with the host's address, and a namespace per instance joined to it by a veth."""

    def __init__(self, count):
        tag = os.getpid() % 4000
        self.tag = f"pc{tag}"
        self.subnet = f"10.{200 + tag // 250}.{tag % 250}"
        self.host = f"{self.subnet}.1"
        self.bridge = f"{self.tag}br"
        self.namespaces = []
        self.addresses = []
        self.made_bridge = False
        try:
            run("ip", "link", "add", self.bridge, "type", "bridge")
            self.made_bridge = True
            run("ip", "addr", "add", f"{self.host}/24", "dev", self.bridge)
            run("ip", "link", "set", self.bridge, "up")
            for i in range(count):
                ns, outside, inside = f"{self.tag}n{i}", f"{self.tag}h{i}", f"{self.tag}i{i}"
                run("ip", "netns", "add", ns)
                self.namespaces.append(ns)
                run("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
                run("ip", "link", "set", outside, "master", self.bridge)
                run("ip", "link", "set", outside, "up")
                run("ip", "link", "set", inside, "netns", ns)
                address = f"{self.subnet}.{10 + i}"
                run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{address}/24", "dev", inside)
                run("ip", "netns", "exec", ns, "ip", "link", "set", inside, "up")
                run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
                self.addresses.append(address)
        except Exception:
            self.teardown()
            raise
        self.iptables = self.pick_iptables()

    def pick_iptables(self):
        for candidate in ("iptables", "iptables-nft", "iptables-legacy"):
            if shutil.which(candidate) and run("ip", "netns", "exec", self.namespaces[0], candidate, "-L", "OUTPUT", "-n", check=False).returncode == 0:
                return candidate
        raise RuntimeError("no working iptables (tried iptables, iptables-nft, iptables-legacy)")

    def rules(self, i, port, mode):
        """iptables rules cutting instance i from the store relay at `port`: `drop` (both ways),
        `reject` (a reset both ways), `drop-out` (what it sends), `drop-in` (what it receives)."""
        out = ["OUTPUT", "-p", "tcp", "-d", self.host, "--dport", str(port)]
        into = ["INPUT", "-p", "tcp", "-s", self.host, "--sport", str(port)]
        if mode == "drop":
            return [out + ["-j", "DROP"], into + ["-j", "DROP"]]
        if mode == "reject":
            return [out + ["-j", "REJECT", "--reject-with", "tcp-reset"], into + ["-j", "REJECT", "--reject-with", "tcp-reset"]]
        if mode == "drop-out":
            return [out + ["-j", "DROP"]]
        if mode == "drop-in":
            return [into + ["-j", "DROP"]]
        raise ValueError(mode)

    def cut(self, i, port, mode):
        for rule in self.rules(i, port, mode):
            run("ip", "netns", "exec", self.namespaces[i], self.iptables, "-A", *rule)

    def heal(self, i):
        run("ip", "netns", "exec", self.namespaces[i], self.iptables, "-F", check=False)

    def teardown(self):
        for ns in self.namespaces:
            run("ip", "netns", "exec", ns, getattr(self, "iptables", "iptables"), "-F", check=False)
            run("ip", "netns", "del", ns, check=False)
        self.namespaces = []
        if self.made_bridge:
            run("ip", "link", "del", self.bridge, check=False)
            self.made_bridge = False


# MARK: Instances


class Instance:
    def __init__(self, index, binary, network, store_port, workdir, extra_env):
        self.index = index
        self.name = "ABC"[index] if index < 3 else f"I{index}"
        self.host = network.addresses[index]
        self.port = 8080
        self.relay_port = store_port
        self.logpath = os.path.join(workdir, f"{self.name}.log")
        self.log = open(self.logpath, "wb")
        env = {
            "HTTP_HOST": self.host, "HTTP_PORT": str(self.port), "HTTP_THREADS": "2", "HTTP_CONNECTION_TIMEOUT": "60",
            "STORE_URL": f"redis://{network.host}:{store_port}", "LOG_LEVEL": "info",
        }
        env.update(extra_env)
        assignments = [f"{k}={v}" for k, v in env.items()]
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", network.namespaces[index], "env", *assignments, binary],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=workdir)
        self.instance_id = None
        deadline = now() + 60
        while now() < deadline:
            content = open(self.logpath, "rb").read().decode(errors="replace")
            if "as instance " in content and self.instance_id is None:
                self.instance_id = content.split("as instance ", 1)[1].split()[0]
            if "listening on http://" in content and self.instance_id:
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {content[-2000:]}")
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not start")

    def connection(self, timeout):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def request(instance, method, path, body=None, timeout=5.0):
    """(status, parsed body or text, headers); raises OSError / http.client errors."""
    connection = instance.connection(timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        response = connection.getresponse()
        raw = response.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        return response.status, parsed, dict(response.getheaders())
    finally:
        connection.close()


# MARK: Clients

ITEMS = 2000
ROW = 50
REUSES = ["row", "ad", "row"]


def layout_body():
    return {"items": [{"id": f"i{k}", "rect": [0, k * ROW, 375, ROW], "reuse": REUSES[k % 3]} for k in range(ITEMS)]}


def reuse_of(item):
    return REUSES[int(item[1:]) % 3]


class Book:
    """Every answer and episode, for the checks."""

    def __init__(self):
        self.lock = threading.Lock()
        self.answers = []  # dicts: session, instance, seq, status, plan, sent, received, late, kind
        self.violations = []
        self.events = []

    def answer(self, **entry):
        with self.lock:
            self.answers.append(entry)

    def event(self, kind, count=1):
        with self.lock:
            self.events.append((now(), kind, count))

    def violation(self, kind, detail, at=None):
        with self.lock:
            self.violations.append({"kind": kind, "detail": detail, "at": at if at is not None else now()})


class Client:
    """One session's client: a model of its views, updates with `seq`, failover on 503 or a
    timeout (same seq), resync on a 409 that asks for it."""

    def __init__(self, book, instances, session_id, opened_plan, offset, target, timeout):
        self.book = book
        self.instances = instances
        self.id = session_id
        self.seq = 0
        self.offset = offset
        self.shown = {}
        self.pools = collections.defaultdict(list)
        self.used = set()
        self.target = target
        self.timeout = timeout
        self.stats = collections.Counter()
        self.rng = random.Random(int(session_id[:8], 16))
        self.apply(opened_plan, offset, at=None, expect_seq=0)

    def apply(self, plan, offset, at, expect_seq):
        def broken(why):
            self.book.violation("views", f"session {self.id[:8]} seq {expect_seq}: {why}", at)

        if plan.get("seq") != expect_seq:
            broken(f"plan seq {plan.get('seq')}")
        for key in ("recycle", "discard"):
            for entry in plan.get(key, []):
                if self.shown.get(entry["id"]) != entry["view"]:
                    broken(f"{key} {entry} of a view the client does not show there")
                self.shown.pop(entry["id"], None)
                if key == "recycle":
                    self.pools[reuse_of(entry["id"])].append((entry["view"], entry["id"]))
        for entry in plan.get("reuse", []):
            pool = self.pools[reuse_of(entry["id"])]
            found = [k for k, (view, _) in enumerate(pool) if view == entry["view"]]
            if not found:
                broken(f"reuse {entry} of a view not in the pool")
            else:
                pool.pop(found[0])
            self.shown[entry["id"]] = entry["view"]
        for entry in plan.get("create", []):
            if entry["view"] in self.used:
                broken(f"create {entry}: handle used before")
            self.used.add(entry["view"])
            self.shown[entry["id"]] = entry["view"]
        for entry in plan.get("reuse", []):
            self.used.add(entry["view"])
        self.seq = expect_seq
        self.offset = offset

    def resync_body(self):
        return {
            "seq": self.seq, "offset": [0, self.offset],
            "visible": [{"id": i, "view": v} for i, v in self.shown.items()],
            "pool": {r: [{"view": v, "id": i} for v, i in views] for r, views in self.pools.items() if views},
        }

    def send(self, instance, seq, offset, timeout, extra=None):
        """Sends one update; answers (status, body) or (None, why) after `timeout`. A late answer
        is still recorded when it comes."""
        result = {}
        done = threading.Event()

        def go():
            sent = now()
            try:
                status, body, headers = request(instance, "POST", f"/v1/sessions/{self.id}/viewport",
                                                dict({"offset": [0, offset], "seq": seq}, **(extra or {})), timeout=6)
            except (OSError, http.client.HTTPException) as error:
                result["error"] = str(error)
                done.set()
                return
            received = now()
            late = done.is_set()
            result.update(status=status, body=body, sent=sent, received=received)
            self.book.answer(session=self.id, instance=instance.index, seq=seq, status=status,
                             plan=json.dumps(body, sort_keys=True) if status == 200 else None,
                             sent=sent, received=received, late=late, kind="update")
            done.set()

        worker = threading.Thread(target=go, daemon=True)
        worker.start()
        if not done.wait(timeout):
            done.set()  # from now on an answer is late
            return None, "timeout"
        if "error" in result:
            return None, result["error"]
        return result["status"], result["body"]

    def step(self, y_step=97):
        """One update: the next seq, failing over until answered or 8 tries."""
        seq = self.seq + 1
        offset = (self.offset + y_step) % (ITEMS * ROW - 2000)
        for _ in range(8):
            instance = self.instances[self.target]
            status, body = self.send(instance, seq, offset, self.timeout)
            if status == 200:
                self.apply(body, offset, now(), seq)
                self.stats["answers"] += 1
                return True
            if status == 409 and isinstance(body, dict) and body.get("resync"):
                stored = body.get("seq", 0)
                if stored > self.seq:
                    self.book.violation("views", f"session {self.id[:8]}: 409 for seq {seq} with the store ahead at {stored}")
                    return False
                self.stats["lost"] += self.seq - stored
                self.book.event("lost", self.seq - stored)
                try:
                    rstatus, rbody, _ = request(instance, "POST", f"/v1/sessions/{self.id}/resync", self.resync_body(), timeout=6)
                except (OSError, http.client.HTTPException):
                    rstatus = None
                if rstatus == 200:
                    self.stats["resyncs"] += 1
                    self.book.event("resync")
                else:
                    self.stats["503"] += 1
                    self.target = (self.target + 1) % len(self.instances)
                    time.sleep(0.05)
                continue
            if status == 409:
                self.book.violation("views", f"session {self.id[:8]}: 409 without resync for seq {seq}: {body}")
                return False
            if status == 404:
                self.book.violation("views", f"session {self.id[:8]}: 404 for seq {seq}")
                return False
            # 503, a timeout, a refused connection: another instance (any: back and forth, as
            # a proxy that retries on the next upstream and a client that retries do), same seq.
            self.stats["503" if status == 503 else "timeouts"] += 1
            if status != 503:
                self.book.event("timeout")
            self.target = (self.target + self.rng.randrange(1, len(self.instances))) % len(self.instances)
            time.sleep(0.05)
        return False

    def check_state(self, instance):
        status, state, _ = request(instance, "GET", f"/v1/sessions/{self.id}", timeout=6)
        if status != 200:
            return f"GET answered {status}"
        problems = []
        if state.get("seq") != self.seq:
            problems.append(f"seq {state.get('seq')} != client's {self.seq}")
        visible = {e["id"]: e["view"] for e in state.get("visible", [])}
        if visible != self.shown:
            problems.append("visible views differ from the client's")
        pool = {r: v for r, v in (state.get("pool") or {}).items() if v}
        mine = {r: [v for v, _ in views] for r, views in self.pools.items() if views}
        if pool != mine:
            problems.append("pools differ from the client's")
        return "; ".join(problems) or None


def open_session(book, instances, sampler, on, k, timeout):
    status, layout, _ = request(instances[on], "POST", "/v1/layouts", layout_body(), timeout=30)
    if status not in (200, 201):
        raise RuntimeError(f"layout: {status} {layout}")
    offset = (k * 300) % (ITEMS * ROW - 2000)
    status, opened, _ = request(instances[on], "POST", "/v1/sessions",
                                {"layout": layout["layout"], "viewport": [375, 667], "offset": [0, offset]}, timeout=10)
    if status != 201:
        raise RuntimeError(f"open: {status} {opened}")
    sampler.track(opened["session"])
    return Client(book, instances, opened["session"], opened["plan"], offset, on, timeout)


# MARK: Checks


def check_answers(book, sampler, instances, window=None, explain=False):
    """Owner and seq-twice checks over the recorded answers (those in `window`, by send time)."""
    by_instance_id = {inst.instance_id: inst.index for inst in instances}
    with sampler.lock:
        samples = list(sampler.samples)
    sent_times = [s[0] for s in samples]
    received_times = [s[1] for s in samples]
    found = []
    seen = {}
    for a in book.answers:
        if a["status"] != 200 or (window and not (window[0] <= a["sent"] < window[1])):
            continue
        key = (a["session"], a["seq"])
        if key in seen and seen[key]["plan"] != a["plan"]:
            other = seen[key]
            found.append(("seq twice", f"session {a['session'][:8]} seq {a['seq']}: 200 from {'ABC'[other['instance']]} "
                                       f"and from {'ABC'[a['instance']]} with different plans", a["received"]))
        seen.setdefault(key, a)
        # Samples are sequential: the last one answered before the request was sent, the first
        # one sent after its answer came.
        i = bisect.bisect_right(received_times, a["sent"]) - 1
        j = bisect.bisect_left(sent_times, a["received"])
        if i < 0 or j >= len(samples) or a["session"] not in samples[i][2] or a["session"] not in samples[j][2]:
            continue
        s0, s1 = samples[i][2][a["session"]], samples[j][2][a["session"]]
        between = [s[2][a["session"]] for s in samples[i + 1:j] if a["session"] in s[2]]
        held = lambda state: state[0] is not None and by_instance_id.get(state[0]) == a["instance"]
        describe = lambda st: f"free, epoch {st[1]}" if st[2] else (f"leased to {'ABC'[by_instance_id[st[0]]] if st[0] in by_instance_id else st[0]}, epoch {st[1]}" if st[0] else f"no lease, epoch {st[1]}")
        if explain:
            log(f"  answer: session {a['session'][:8]} seq {a['seq']} 200 from {'ABC'[a['instance']]}; store before: {describe(s0)}, after: {describe(s1)}")
        # X held no lease in between: the epoch did not move, or moved once, to a take by another
        # instance (every take and release moves it).
        unchanged = s0[1] is not None and s0[1] == s1[1]
        taken_by_other = s0[1] is not None and s1[1] == s0[1] + 1 and s1[0] is not None and not held(s1)
        if (unchanged or taken_by_other) and not held(s0) and not held(s1) and not any(held(s) for s in between):
            found.append(("owner", f"session {a['session'][:8]} seq {a['seq']}: 200 from {'ABC'[a['instance']]} "
                                   f"{(a['received'] - a['sent']) * 1000:.0f} ms after it was sent, while the store showed it "
                                   f"{describe(s0)} before and {describe(s1)} after", a["received"]))
    return found


# MARK: Harness


class Cluster:
    def __init__(self, binary, workdir, count=3, extra_env=None):
        self.workdir = workdir
        self.network = None
        self.redis = None
        self.relays = []
        self.instances = []
        self.sampler = None
        self.book = Book()
        try:
            self.network = Network(count)
            self.redis = Redis(workdir)
            self.relays = [Relay(self.network.host, self.redis.port) for _ in range(count)]
            for i in range(count):
                self.instances.append(Instance(i, binary, self.network, self.relays[i].port, workdir, extra_env or {}))
            self.sampler = Sampler(self.redis.port)
        except BaseException:
            self.close()
            raise

    def cut(self, i, mode):
        self.network.cut(i, self.relays[i].port, mode)

    def heal(self, i):
        self.network.heal(i)

    def close(self):
        if self.sampler:
            self.sampler.stop()
        for instance in self.instances:
            try:
                instance.stop()
            except Exception as error:  # keep cleaning up
                log(f"stopping {instance.name}: {error}")
        for relay in self.relays:
            relay.stop()
        if self.redis:
            self.redis.stop()
        if self.network:
            self.network.teardown()


def report(found, book):
    violations = list(book.violations) + [{"kind": k, "detail": d, "at": t} for k, d, t in found]
    for v in violations:
        log(f"VIOLATION ({v['kind']}): {v['detail']}")
    return violations


def session_on_a(cluster):
    """A session opened on A, with seq 1-3 answered by A and written."""
    A = cluster.instances[0]
    client = open_session(cluster.book, cluster.instances, cluster.sampler, 0, 0, timeout=3)
    for _ in range(3):
        seq, offset = client.seq + 1, client.offset + 97
        status, body = client.send(A, seq, offset, 3)
        if status != 200:
            raise RuntimeError(f"seq {seq} on A: {status} {body}")
        client.apply(body, offset, now(), seq)
    time.sleep(0.4)
    return client


def scenario_v1(cluster):
    """A owns S; 0.6 s more round trip on A's link to Redis; B asks for S (A's release reaches
    Redis after B gave up, and A sees no answer within store.timeout); the client then goes back
    and forth between A and B."""
    A, B = cluster.instances[0], cluster.instances[1]
    client = session_on_a(cluster)
    cluster.relays[0].set_delay(0.3)
    log("A's link to Redis delayed by 0.6 s (0.3 s each way)")
    trail = []

    def send(instance):
        seq, offset = client.seq + 1, client.offset + 97
        status, body = client.send(instance, seq, offset, 5)
        if status == 200:
            client.apply(body, offset, now(), seq)
        elif status == 409 and isinstance(body, dict) and body.get("resync"):
            rstatus, _, _ = request(instance, "POST", f"/v1/sessions/{client.id}/resync", client.resync_body(), timeout=6)
            trail.append(f"seq {seq} -> {instance.name}: 409 resync (store at {body.get('seq')}), resync {rstatus}")
            return send(instance)
        trail.append(f"seq {seq} -> {instance.name}: {status}" + (f" ({body.get('detail', '')[:90]})" if isinstance(body, dict) and status != 200 else ""))
        return status

    send(B)
    cluster.sampler.wait_for(client.id, lambda st: st[2] and st[0] is None, 3)
    send(A)
    send(B)
    send(B)
    send(A)
    send(B)
    for line in trail:
        log("  " + line)
    cluster.relays[0].set_delay(0)
    time.sleep(2.5)
    return [client]


def scenario_v2(cluster):
    """A owns S and is cut off (DROP); six GETs of unknown sessions wait for the store on A; the
    client sends seq 4 to A, gives up after 0.3 s and retries on C. An answer from A within its
    first round trip without an answer may be lost when C takes over (the documented window):
    C then answers 409 with resync, and the client resyncs."""
    A, C = cluster.instances[0], cluster.instances[2]
    client = session_on_a(cluster)
    cluster.cut(0, "drop")
    cut_at = now()
    log("A cut off from Redis (DROP both ways)")
    gets = []

    def get(unknown):
        started = now()
        answer = _quiet(request, A, "GET", f"/v1/sessions/{unknown}", None, 6)
        gets.append((answer[0] if answer else None, now() - started, started - cut_at))

    for k in range(6):
        threading.Thread(target=get, args=("%032x" % random.Random(k).getrandbits(128),), daemon=True).start()
    time.sleep(0.1)
    # A taller viewport: the plan creates views (handles differ between instances).
    seq, offset, taller = client.seq + 1, client.offset + 97, {"size": [375, 1334]}
    status, body = client.send(A, seq, offset, 0.3, taller)
    log(f"  seq {seq} -> A: {status if status else body} after {now() - cut_at:.2f} s")
    if status == 200:
        client.apply(body, offset, now(), seq)
        seq, offset = client.seq + 1, client.offset + 97
    deadline = now() + 8
    while now() < deadline:
        status, body = client.send(C, seq, offset, 3, taller)
        if status == 200:
            client.apply(body, offset, now(), seq)
            log(f"  seq {seq} -> C: 200 after {now() - cut_at:.2f} s")
            break
        if status == 409 and isinstance(body, dict) and body.get("resync"):
            rstatus, _, _ = request(C, "POST", f"/v1/sessions/{client.id}/resync", client.resync_body(), timeout=6)
            log(f"  seq {seq} -> C: 409 resync (store at {body.get('seq')}), resync {rstatus} after {now() - cut_at:.2f} s")
            continue
        time.sleep(0.1)
    time.sleep(1.5)
    log("  GETs of unknown sessions on A: " + ", ".join(f"{s} in {d:.2f} s (sent at {t:.2f} s)" for s, d, t in sorted(gets, key=lambda g: g[2])))
    late = [a for a in cluster.book.answers if a["instance"] == 0 and a["seq"] == seq]
    for a in late:
        log(f"  A answered seq {seq}: {a['status']} {(a['received'] - a['sent']):.2f} s after the request{' (the client had given up)' if a['late'] else ''}")
    cluster.heal(0)
    time.sleep(2.5)
    return [client]


def _quiet(function, *args):
    try:
        return function(*args)
    except Exception:
        return None


def final_state_check(cluster, clients):
    for client in clients:
        problem = None
        for attempt in range(20):
            instance = cluster.instances[(client.target + attempt) % len(cluster.instances)]
            try:
                problem = client.check_state(instance)
            except (OSError, http.client.HTTPException) as error:
                problem = str(error)
            if problem is None or "GET answered" not in problem:
                break
            time.sleep(0.3)
        if problem:
            cluster.book.violation("views", f"session {client.id[:8]} at the end: {problem}")


# MARK: Campaign

FAULTS = (
    [("drop", d) for d in (0.3, 1, 3, 10)]
    + [("reject", d) for d in (0.3, 1, 3, 10)]
    + [("delay", d) for d in (0.2, 0.6, 1.0)]
    + [("flap", 5), ("drop-out", 1), ("drop-out", 3), ("drop-in", 1), ("drop-in", 3), ("takeover", 4)]
)


def campaign(cluster, minutes, seed, sessions=18, client_timeout=0.5, hop=0.03):
    rng = random.Random(seed)
    log(f"campaign: {minutes} min, seed {seed}")
    instances = cluster.instances
    clients = [open_session(cluster.book, instances, cluster.sampler, k % len(instances), k, timeout=client_timeout)
               for k in range(sessions)]
    stopping = threading.Event()
    noise_target = [None]

    def drive(client):
        r = random.Random(seed * 1000003 + int(client.id[:8], 16))
        while not stopping.is_set():
            # Now and then a request goes to another instance (a proxy that does not route by
            # session): a handover, also while the owner's link is cut or slow.
            if r.random() < hop:
                client.target = r.randrange(len(instances))
            client.step()
            time.sleep(0.02)

    def noise():
        # Requests that need the store: sessions the instance does not have.
        r = random.Random(seed + 1)
        while not stopping.is_set():
            target = noise_target[0]
            if target is None:
                time.sleep(0.05)
                continue
            _quiet(request, instances[target], "GET", "/v1/sessions/%032x" % r.getrandbits(128), None, 3)
            time.sleep(0.05)

    threads = [threading.Thread(target=drive, args=(c,), daemon=True) for c in clients]
    threads += [threading.Thread(target=noise, daemon=True) for _ in range(6)]
    for t in threads:
        t.start()
    episodes = []
    deadline = now() + minutes * 60
    order = list(FAULTS)
    k = 0
    while now() < deadline:
        if k % len(order) == 0:
            rng.shuffle(order)
        kind, duration = order[k % len(order)]
        k += 1
        victim = rng.randrange(len(instances))
        # Every session back on its first instance (a handover each), so that every fault hits
        # the sessions of the instance it cuts.
        for n, client in enumerate(clients):
            client.target = n % len(instances)
        time.sleep(1.5)
        start = now()
        noise_target[0] = victim
        if kind == "delay":
            cluster.relays[victim].set_delay(duration / 2, jitter=0.3)
            time.sleep(3)
            cluster.relays[victim].set_delay(0)
        elif kind == "flap":
            for _ in range(duration):
                cluster.cut(victim, "drop")
                time.sleep(0.7)
                cluster.heal(victim)
                time.sleep(0.5)
        elif kind == "takeover":
            cluster.cut(victim, "drop")
            time.sleep(duration)
            cluster.heal(victim)
        else:
            cluster.cut(victim, kind)
            time.sleep(duration)
            cluster.heal(victim)
        healed = now()
        noise_target[0] = None
        time.sleep(3.0)
        label = f"{kind} {duration}{'x0.7 s' if kind == 'flap' else ' s'}" + (" (RTT)" if kind == "delay" else "")
        episodes.append((label, instances[victim].name, start, healed, now()))
        log(f"episode {len(episodes)}: {label} on {instances[victim].name}")
    stopping.set()
    for t in threads:
        t.join(timeout=15)
    return clients, episodes


def campaign_table(cluster, clients, episodes):
    found = check_answers(cluster.book, cluster.sampler, cluster.instances)
    rows = []
    print(f"\n{'fault':<22}{'on':<4}{'answers':>8}{'503s':>7}{'t/o':>6}{'resyncs':>8}{'lost':>6}{'p99 ms':>8}{'viol':>6}")
    for label, victim, start, healed, end in episodes:
        inside = [a for a in cluster.book.answers if start <= a["sent"] < end]
        answers = [a for a in inside if a["status"] == 200]
        unavailable = [a for a in inside if a["status"] == 503]
        p99 = percentile([a["received"] - a["sent"] for a in answers], 99) * 1000
        violations = [f for f in found if start <= f[2] < end + 1] + [v for v in cluster.book.violations if start <= v["at"] < end + 1]
        counted = lambda kind: sum(e[2] for e in cluster.book.events if start <= e[0] < end and e[1] == kind)
        rows.append((label, victim, len(answers), len(unavailable), p99, len(violations)))
        print(f"{label:<22}{victim:<4}{len(answers):>8}{len(unavailable):>7}{counted('timeout'):>6}{counted('resync'):>8}"
              f"{counted('lost'):>6}{p99:>8.0f}{len(violations):>6}")
    totals = collections.Counter()
    for c in clients:
        totals.update(c.stats)
    print(f"\nclients: {totals['answers']} answers, {totals['503']} 503s, {totals['timeouts']} timeouts, "
          f"{totals['resyncs']} resyncs, {totals['lost']} updates lost (answered, then not in the store)")
    return found


# MARK: Latency


def bring_back(clients, target):
    """Sends each client's next update to `target` (a handover) until it is answered there."""
    for c in clients:
        c.target = target
        for _ in range(40):
            if c.step() and c.target == target:
                break
            c.target = target


def latency_scenario(cluster):
    """During a 3 s cut and a 3 s slow link (1 s RTT) of A: latency of A's answers for sessions
    it owns while noise requests (unknown sessions) need the store; the 503 window of A's
    sessions on B after a 0.3 s cut; /readyz around a cut."""
    A, B = cluster.instances[0], cluster.instances[1]
    owned = [open_session(cluster.book, cluster.instances, cluster.sampler, 0, k, timeout=5) for k in range(4)]
    results = {}

    def measure(label, fault, heal, seconds=3.0):
        stopping = threading.Event()
        latencies = collections.defaultdict(list)

        def hammer(client):
            while not stopping.is_set():
                seq, offset = client.seq + 1, client.offset + 97
                started = now()
                status, body = client.send(A, seq, offset, 6)
                latencies[status].append(now() - started)
                if status == 200:
                    client.apply(body, offset, now(), seq)
                time.sleep(0.02)

        def noise(k):
            r = random.Random(k)
            while not stopping.is_set():
                _quiet(request, A, "GET", "/v1/sessions/%032x" % r.getrandbits(128), None, 6)

        fault()
        threads = [threading.Thread(target=hammer, args=(c,), daemon=True) for c in owned]
        threads += [threading.Thread(target=noise, args=(k,), daemon=True) for k in range(6)]
        for t in threads:
            t.start()
        time.sleep(seconds)
        stopping.set()
        for t in threads:
            t.join(timeout=10)
        heal()
        healed = now()
        # Once the link is back: how long until each owned session is answered 200 on A again.
        back = {}

        def until_served(client):
            while now() - healed < 8:
                seq, offset = client.seq + 1, client.offset + 97
                status, body = client.send(A, seq, offset, 6)
                if status == 200:
                    client.apply(body, offset, now(), seq)
                    back[client.id] = now() - healed
                    return
                if status == 409 and isinstance(body, dict) and body.get("resync"):
                    _quiet(request, A, "POST", f"/v1/sessions/{client.id}/resync", client.resync_body(), 6)
                    continue
                time.sleep(0.01)

        waiters = [threading.Thread(target=until_served, args=(c,), daemon=True) for c in owned]
        for t in waiters:
            t.start()
        for t in waiters:
            t.join(timeout=10)
        every = [x for values in latencies.values() for x in values]
        results[label] = (len(every), {s: len(v) for s, v in latencies.items()}, percentile(every, 99) * 1000,
                          percentile(latencies.get(200, []), 99) * 1000)
        log(f"{label}: {len(every)} requests for sessions A owns, statuses {dict((s, len(v)) for s, v in latencies.items())}, "
            f"latency p50 {percentile(every, 50) * 1000:.0f} / p90 {percentile(every, 90) * 1000:.0f} / p99 {results[label][2]:.0f} / "
            f"max {max(every) * 1000 if every else 0:.0f} ms (200s: p99 {results[label][3]:.0f} ms); "
            f"answered on A again {', '.join(f'{x:.2f}' for x in sorted(back.values())) or 'never'} s after the heal "
            f"({len(back)} of {len(owned)} sessions)")
        # Back to normal, every session on A again.
        time.sleep(3)
        bring_back(owned, 0)

    measure("cut 3 s", lambda: cluster.cut(0, "drop"), lambda: cluster.heal(0))
    measure("cut 1 s", lambda: cluster.cut(0, "drop"), lambda: cluster.heal(0), seconds=1.0)
    measure("slow link 1 s RTT", lambda: cluster.relays[0].set_delay(0.5), lambda: cluster.relays[0].set_delay(0))
    measure("slow link 0.4 s RTT", lambda: cluster.relays[0].set_delay(0.2), lambda: cluster.relays[0].set_delay(0))
    time.sleep(3)
    bring_back(owned, 0)
    # The 503 window of A's sessions after a 0.3 s cut: the client fails over to B during the
    # cut (B asks A, which does not answer), the cut heals, the client keeps retrying on B.
    time.sleep(1.0)
    windows = []
    for c in owned[:3]:
        cluster.cut(0, "drop")
        cut_at = now()
        healer = threading.Timer(0.3, cluster.heal, args=(0,))
        healer.start()
        first_ok = None
        count = 0
        while now() - cut_at < 8:
            seq, offset = c.seq + 1, c.offset + 97
            status, body = c.send(B, seq, offset, 3)
            if status == 200:
                c.apply(body, offset, now(), seq)
                first_ok = now() - (cut_at + 0.3)
                break
            if status == 409 and isinstance(body, dict) and body.get("resync"):
                request(B, "POST", f"/v1/sessions/{c.id}/resync", c.resync_body(), timeout=6)
                continue
            count += 1
            time.sleep(0.02)
        healer.join()
        windows.append(first_ok)
        log(f"0.3 s cut of A: session {c.id[:8]} answered on B {first_ok if first_ok is None else f'{first_ok:.2f}'} s after the cut healed ({count} 503s before)")
        time.sleep(3)
        bring_back([c], 0)
        time.sleep(1)
    results["503 window"] = windows
    # /readyz around a 2 s cut (dropped, then refused with a reset).
    time.sleep(1)

    def readyz():
        try:
            return request(A, "GET", "/readyz", None, 2)[0]
        except (OSError, http.client.HTTPException):
            return None

    for mode in ("drop", "reject"):
        cluster.cut(0, mode)
        cut_at = now()
        down = None
        while now() - cut_at < 4:
            if readyz() == 503:
                down = now() - cut_at
                break
            time.sleep(0.01)
        time.sleep(max(0, 2 - (now() - cut_at)))
        cluster.heal(0)
        healed = now()
        up = None
        while now() - healed < 6:
            if readyz() == 200:
                up = now() - healed
                break
            time.sleep(0.01)
        results[f"readyz {mode}"] = (down, up)
        log(f"/readyz, {mode}: 503 {down if down is None else f'{down:.2f}'} s after the cut, 200 again {up if up is None else f'{up:.2f}'} s after it healed")
        time.sleep(2)
    return owned, results


# MARK: Main


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--scenario", choices=["v1", "v2", "latency"])
    parser.add_argument("--campaign", action="store_true")
    parser.add_argument("--minutes", type=float, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--client-timeout", type=float, default=0.5, help="seconds a client waits before it retries elsewhere")
    parser.add_argument("--hop", type=float, default=0.03, help="share of a client's updates sent to a random instance")
    parser.add_argument("--keep", help="copy the logs to this directory")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (network namespaces, iptables)")
    if not args.scenario and not args.campaign:
        sys.exit("give --scenario or --campaign")
    binary = os.path.abspath(args.binary)
    workdir = tempfile.mkdtemp(prefix="partition-campaign-")
    cluster = None
    status = 0

    def interrupted(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    try:
        cluster = Cluster(binary, workdir)
        log(f"redis on 127.0.0.1:{cluster.redis.port}; instances " + ", ".join(
            f"{i.name}={i.host}:{i.port} (store via relay :{i.relay_port})" for i in cluster.instances) + f"; iptables: {cluster.network.iptables}")
        if args.scenario == "latency":
            clients, results = latency_scenario(cluster)
            final_state_check(cluster, clients)
            found = check_answers(cluster.book, cluster.sampler, cluster.instances)
        elif args.scenario:
            clients = scenario_v1(cluster) if args.scenario == "v1" else scenario_v2(cluster)
            final_state_check(cluster, clients)
            found = check_answers(cluster.book, cluster.sampler, cluster.instances, explain=True)
        else:
            clients, episodes = campaign(cluster, args.minutes, args.seed, client_timeout=args.client_timeout, hop=args.hop)
            time.sleep(2)
            final_state_check(cluster, clients)
            found = campaign_table(cluster, clients, episodes)
        violations = report(found, cluster.book)
        label = args.scenario or "campaign"
        if violations:
            log(f"{label}: FAIL, {len(violations)} violation(s)")
            status = 1
        else:
            log(f"{label}: PASS, no violation ({sum(1 for a in cluster.book.answers if a['status'] == 200)} answers 200 checked)")
    except KeyboardInterrupt:
        log("interrupted")
        status = 130
    finally:
        if cluster:
            cluster.close()
        if args.keep:
            shutil.copytree(workdir, args.keep, dirs_exist_ok=True)
        shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(status)


if __name__ == "__main__":
    main()
