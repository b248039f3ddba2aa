#!/usr/bin/env python3
"""Real-browser test of the browser client (GET /client/viewportd.js) and its demo (GET /demo).

Starts a viewportd binary on a free loopback port, opens /demo in headless Chromium (Debian's
chromium + chromium-driver, driven by Selenium), and scrolls its 100,000-post feed, whose text
posts are stack items measured as they render: jumps to random positions (scrollTop), flings
made of real wheel events (Selenium wheel actions, which Chromium receives as input events),
scrolls by script a step every animation frame (at most a few messages queued at once), slow scrolls up into unmeasured posts, and keyboard End/Home. After each scroll settles (no
message queued or in flight, the last plan's offset is the container's offset, twice 150 ms
apart) it checks:

  - no blank area: elementFromPoint at a grid of points across the viewport each hit an element
    that shows an item ([data-item-id], displayed): FlashList's blank-area measure;
  - at most 200 item elements ([data-view]) in the DOM, for 100,000 items;
  - the session agrees with the DOM (GET /v1/sessions/{id}): views created = elements the page
    ever created, discarded = elements removed, visible = the shown elements (id and view), the
    pools = the hidden elements, seq = the page's seq, peakViews <= 200;
  - measured rects: the session's layout (GET /v1/sessions/{id}/layout, with the sizes measured
    so far), laid out by a model of the documented rules (docs/guides/generated-layouts.md, docs/guides/stacks.md), places every shown element where the page
    shows it and with its rendered height (within 0.5 px): every measurement reached the session;
  - the page reported no error.

And while measurements are answered (the page's _applyPlan is wrapped): the first post on screen
keeps its screen position through every measurement batch, and when every item a batch measured
lay above the viewport, every post on screen keeps its position (within 1 px).

Over a delay proxy (DelayProxy, 80 ms round trip; scripts/latency-bench.py uses it too), /demo
is swept at a constant speed down and up, on the socket and by POST: several messages are in
flight on the socket, plans are applied in seq order one after the other, the DOM is the
session's after settling (the checks above), no view handle is created twice, updates carry
`rtt` exactly when the server takes it, and every dragging update carries a velocity.

It saves a screenshot (default docs/demo.png) and exits 1 on any failure.

--scenario cluster runs the recovery test (--scenario all, the default, runs both): it starts a
redis-server, two viewportd instances sharing it and an nginx of its own on loopback (not
scripts/cluster.sh); the page is opened through nginx, scrolls, and the
instance that owns its session is killed (kill -9) while the page scrolls on. The page must see
503s until the dead instance's lease runs out, then a 409 with "resync": true, send again the
edits the session lost, post /resync with its views and continue: the DOM matches the session
again (the checks above), and no view handle is created twice (handles created after the
resync are above every earlier one). When the kill finds nothing unwritten (the instance had
just flushed), the instance is started again and the kill repeated (at most 3 times).

Usage: scripts/browser-test.py [--binary PATH | --base URL] [--seed N] [--jumps N] [--flings N]
                               [--screenshot PATH] [--window W,H] [--keep-going]
                               [--scenario all|demo|cluster]
Needs: chromium, chromium-driver (apt), selenium (pip); scripts/install-deps.sh --browser;
the cluster scenario also redis-server and nginx (scripts/install-deps.sh --load).
"""
import argparse
import asyncio
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_ELEMENTS = 200
GRID = (9, 14)  # sample points across the viewport: columns x rows


def log(*parts):
    print("browser-test:", *parts, flush=True)


def near(a, b, within):
    """Whether points a and b are less than `within` apart on both axes."""
    return abs(a[0] - b[0]) < within and abs(a[1] - b[1]) < within


def rounding_bound(offset):
    """How far from where `align` puts it an item scrolled to may be: the browser holds the
    container's offset and the item's position in 32-bit floats (their spacing is 2^(e - 23) at
    [2^e, 2^(e + 1)): 0.125 px at 1M, 1 px past 8.4M), half a spacing off each, rounds the
    offset to whole pixels, and lays out in 1/64 px."""
    spacing = 2.0 ** (math.floor(math.log2(offset)) - 23) if offset >= 1 else 0
    return 0.5 + spacing + 1 / 64


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_binary(given):
    if given:
        return given
    if os.environ.get("VIEWPORTD"):
        return os.environ["VIEWPORTD"]
    # The newer build: a release binary left from an earlier build serves an older module.
    built = [p for p in (f"{REPO}/.build/release/viewportd", f"{REPO}/.build/debug/viewportd") if os.access(p, os.X_OK)]
    if built:
        return max(built, key=os.path.getmtime)
    sys.exit("browser-test: no viewportd binary (build one, or pass --binary)")


class Server:
    def __init__(self, binary):
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="viewportd-browser-", suffix=".log", delete=False)
        env = dict(os.environ, HTTP_HOST="127.0.0.1", HTTP_PORT=str(self.port), LOG_LEVEL="info")
        self.process = subprocess.Popen([binary], cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"viewportd exited with {self.process.returncode}: {self.tail()}")
            with open(self.log.name, encoding="utf-8", errors="replace") as f:
                if "listening on http://" in f.read():
                    return
            time.sleep(0.05)
        raise RuntimeError("viewportd did not log 'listening on http://' within 30 s")

    def post(self, path, body):
        request = urllib.request.Request(self.base + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=10) as r:
            return r.status, r.headers.get("Content-Type"), r.read()

    def delete(self, path):
        request = urllib.request.Request(self.base + path, method="DELETE")
        try:
            with urllib.request.urlopen(request, timeout=10) as r:
                return r.status
        except urllib.error.HTTPError as error:
            return error.code

    def tail(self):
        with open(self.log.name, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-20:])

    def stop(self):
        """SIGTERM; the process must exit 0 (docs/api.md "Running and configuration")."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                return None
        os.unlink(self.log.name)
        return self.process.returncode


class Running(Server):
    """A viewportd already running at `base` (--base): nothing is started or stopped."""

    def __init__(self, base):
        self.base = base.rstrip("/")

    def tail(self):
        return ""

    def stop(self):
        return 0


class DelayProxy:
    """A TCP proxy on loopback that holds every chunk `rtt`/2 seconds in each direction, in order.
    Runs its own asyncio loop in a thread; `rtt` may change between pages."""

    def __init__(self, upstream_port, client_file=None):
        self.upstream_port = upstream_port
        self.client_file = client_file
        self.rtt = 0.0
        self.port = free_port()
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError("the delay proxy did not start")
        self.base = f"http://127.0.0.1:{self.port}"

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._accept, "127.0.0.1", self.port))
        self.ready.set()
        self.loop.run_forever()

    def stop(self):
        async def shutdown():
            # Connections cut short here are not errors.
            self.loop.set_exception_handler(lambda loop, context: None)
            self.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        try:
            asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)

    async def _accept(self, reader, writer):
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.close()
            return
        for w in (writer, up_writer):
            sock = w.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(self._pipe(reader, up_writer, writer), self._pipe(up_reader, writer, None),
                             return_exceptions=True)
        for w in (writer, up_writer):
            w.close()

    async def _pipe(self, reader, writer, reply_to):
        """Reads chunks from `reader` and writes each to `writer` rtt/2 after it was read."""
        queue = asyncio.Queue()

        async def deliver():
            while True:
                at, data = await queue.get()
                if data is None:
                    break
                wait = at - self.loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()

        delivering = asyncio.ensure_future(deliver())
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if reply_to is not None and self.client_file and data.startswith(b"GET /client/viewportd.js"):
                    # The module under edit, answered by the proxy (after the round trip).
                    with open(self.client_file, "rb") as f:
                        body = f.read()
                    await asyncio.sleep(self.rtt)
                    reply_to.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nCache-Control: no-store\r\n"
                                   b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
                    await reply_to.drain()
                    reply_to.close()
                    break
                queue.put_nowait((self.loop.time() + self.rtt / 2, data))
        finally:
            queue.put_nowait((0, None))
            await delivering


NGINX_CONF = """
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_max_body_size 128m;
    client_body_buffer_size 64m;
    client_body_temp_path {dir}/tmp/body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' ''; }}
    server {{
        listen 127.0.0.1:{port};
{locations}
    }}
}}
"""

NGINX_LOCATION = """        location /{name}/ {{
            proxy_pass http://127.0.0.1:{upstream}/;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            proxy_buffering off;
            proxy_next_upstream off;
            proxy_connect_timeout 2s;
            proxy_read_timeout 1h;
        }}"""


class Cluster(Server):
    """The recovery setup: a redis-server, two viewportd instances sharing it (store.url) and an
    nginx in front that only gives the page one origin for both (viewportd sends no CORS
    headers): /a/... is instance a, /b/... instance b, nothing else (no routing, no retries).
    The page talks to one instance (its client's base URL, /a/ or /b/); the test reads the
    session through that same instance (`current`), kills it with SIGKILL and starts it again."""

    NAMES = ("a", "b")

    def __init__(self, binary):
        for tool in ("redis-server", "redis-cli"):
            if shutil.which(tool) is None:
                raise RuntimeError(f"{tool} is missing (apt-get install redis-server; scripts/install-deps.sh --load)")
        self.nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.access(self.nginx, os.X_OK):
            raise RuntimeError("nginx is missing (apt-get install nginx; scripts/install-deps.sh --load)")
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="viewportd-browser-cluster-")
        os.chmod(self.dir, 0o755)  # nginx's workers may run as another user
        self.processes = {}
        self.logs = {}
        self.ports = {name: free_port() for name in self.NAMES}
        self.current = "a"
        started = time.monotonic()
        self.redis_port = free_port()
        self.spawn("redis", ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--protected-mode", "no", "--loglevel", "warning"])
        deadline = time.monotonic() + 15
        while self.redis_cli("PING") != "PONG":
            if time.monotonic() > deadline or self.processes["redis"].poll() is not None:
                raise RuntimeError(f"redis-server did not start: {self.tail()}")
            time.sleep(0.05)
        for name in self.NAMES:
            self.start(name)
        self.front_port = free_port()
        os.makedirs(os.path.join(self.dir, "tmp"), exist_ok=True)
        os.chmod(os.path.join(self.dir, "tmp"), 0o777)
        locations = "\n".join(NGINX_LOCATION.format(name=name, upstream=self.ports[name]) for name in self.NAMES)
        config = os.path.join(self.dir, "nginx.conf")
        with open(config, "w", encoding="utf-8") as f:
            f.write(NGINX_CONF.format(dir=self.dir, port=self.front_port, locations=locations))
        self.spawn("nginx", [self.nginx, "-p", self.dir, "-e", os.path.join(self.dir, "nginx-error.log"), "-c", config,
                             "-g", "daemon off;"])
        self.wait_http(f"http://127.0.0.1:{self.front_port}/a/healthz", "nginx")
        log(f"cluster: redis-server on {self.redis_port}, viewportd a on {self.ports['a']} and b on {self.ports['b']} "
            f"(store.leaseTimeout 2 s, store.flushInterval 0.5 s), nginx on {self.front_port} (/a/, /b/) "
            f"in {time.monotonic() - started:.1f} s")

    @property
    def base(self):
        """The instance the page talks to, through the front."""
        return f"http://127.0.0.1:{self.front_port}/{self.current}"

    def spawn(self, name, argv, env=None):
        out = open(os.path.join(self.dir, f"{name}.log"), "ab")
        self.logs[name] = out.name
        self.processes[name] = subprocess.Popen(argv, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)

    def redis_cli(self, *command):
        result = subprocess.run(["redis-cli", "-p", str(self.redis_port), *command], capture_output=True, text=True, timeout=10)
        return result.stdout.strip()

    def wait_http(self, url, what, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(url, timeout=1) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not answer {url} within {timeout} s: {self.tail()}")
            time.sleep(0.05)

    def start(self, name):
        """Starts instance `name` on its port (again, after a kill)."""
        env = dict(os.environ, HTTP_HOST="127.0.0.1", HTTP_PORT=str(self.ports[name]), LOG_LEVEL="info",
                   STORE_URL=f"redis://127.0.0.1:{self.redis_port}",
                   # A flush a quarter lease apart (the most allowed): a kill during scrolling
                   # finds updates not yet written far more often than with the default 0.1 s.
                   STORE_LEASE_TIMEOUT="2", STORE_FLUSH_INTERVAL="0.5")
        self.spawn(name, [self.binary], env)
        self.wait_http(f"http://127.0.0.1:{self.ports[name]}/healthz", f"viewportd {name}")

    def pid(self, name):
        return self.processes[name].pid

    def kill(self, name):
        """kill -9 of instance `name`; returns once it is gone."""
        process = self.processes[name]
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def owner(self, session):
        """The instance holding the session's lease (viewportd:lease:{cell}:<id> =
        <host>-<pid>-<random>|<epoch>, docs/operations/store.md), or the raw value when it is none
        of ours."""
        keys = self.redis_cli("--scan", "--pattern", f"viewportd:lease:*:{session}").split()
        value = self.redis_cli("GET", keys[0]) if keys else ""
        parts = value.split("|")[0].rsplit("-", 2)
        pid = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None
        for name in self.NAMES:
            if self.processes[name].poll() is None and self.processes[name].pid == pid:
                return name
        return value

    def tail(self):
        out = []
        for name, path in self.logs.items():
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    out.append(f"{name}: " + "".join(f.readlines()[-8:]))
            except OSError:
                pass
        return "\n".join(out)

    def stop(self):
        """SIGTERM to the instances (each must exit 0), then nginx and redis."""
        code = 0
        for name in ("nginx", *self.NAMES, "redis"):
            process = self.processes.get(name)
            if process is None or process.poll() is not None:
                continue
            process.send_signal(signal.SIGQUIT if name == "nginx" else signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if name in self.NAMES and process.returncode != 0:
                log(f"viewportd {name} exited with {process.returncode} after SIGTERM")
                code = process.returncode or 1
        shutil.rmtree(self.dir, ignore_errors=True)
        return code


def layout_rects(layout, wanted):
    """Rects of the `wanted` items of a layout in the sections form (GET /v1/sessions/{id}/layout),
    by docs/guides/generated-layouts.md and docs/guides/stacks.md: sections follow each other along y, `spacing`
    apart, inside `insets`; an items section's rects are relative to its origin and it ends at its
    items' largest bottom; a one-lane stack's items follow each other, `spacing` apart, each with
    its size or else the stack's estimate. Only what the demo uses (axis y, one lane)."""
    if layout.get("axis", "y") != "y":
        raise AssertionError(f"layout axis {layout.get('axis')}: the model knows only y")
    top, left = layout.get("insets", [0, 0, 0, 0])[:2]
    y = top
    rects = {}
    for k, section in enumerate(layout["sections"]):
        if k > 0:
            y += layout.get("spacing", 0)
        if "items" in section:
            end = 0
            for item in section["items"]:
                x0, y0, w, h = item["rect"]
                if item["id"] in wanted:
                    rects[item["id"]] = [left + x0, y + y0, w, h]
                end = max(end, y0 + h)
            y += end
        elif "stack" in section:
            stack = section["stack"]
            if stack.get("lanes", 1) != 1:
                raise AssertionError("the model knows one-lane stacks only")
            at = 0
            for n, item in enumerate(stack["items"]):
                size = item.get("size", stack.get("estimate"))
                if n > 0:
                    at += stack.get("spacing", 0)
                if item["id"] in wanted:
                    rects[item["id"]] = [left, y + at, size[0], size[1]]
                at += size[1]
            y += at
        else:
            raise AssertionError(f"section {section.get('id')}: the model knows items and stack sections only")
    return rects


def start_browser(width, height):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={width},{height}", "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    chromium = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if os.path.exists(p)), None)
    if chromium:
        options.binary_location = chromium
    driver_path = next((p for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver") if os.path.exists(p)), None)
    service = Service(executable_path=driver_path) if driver_path else Service()
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_script_timeout(30)
    return driver


# JavaScript run in the page. `vp` is window.viewportd (set by /demo).
SETTLED_JS = """
const vp = window.viewportd, c = vp.client, s = document.getElementById('viewport');
return {queued: c._queue.length, inFlight: !!c._inFlight, seq: c.seq,
        offset: c.offset, scroll: [s.scrollLeft, s.scrollTop], meant: c._containerOffset()};
"""

SNAPSHOT_JS = """
const [cols, rows] = arguments[0];
const vp = window.viewportd, scroller = document.getElementById('viewport');
const box = scroller.getBoundingClientRect();
const width = scroller.clientWidth, height = scroller.clientHeight;
const blanks = [];
let samples = 0;
for (let i = 0; i < cols; i++) {
  for (let j = 0; j < rows; j++) {
    const x = box.left + (i + 0.5) * width / cols, y = box.top + (j + 0.5) * height / rows;
    samples += 1;
    const hit = document.elementFromPoint(x, y);
    const item = hit && hit.closest('[data-item-id]');
    if (!item || getComputedStyle(item).display === 'none') {
      blanks.push([Math.round(x), Math.round(y), hit ? hit.id || hit.className || hit.tagName : null]);
    }
  }
}
const elements = [...document.querySelectorAll('[data-view]')];
const shown = [], hidden = [];
for (const e of elements) {
  if (e.style.display === 'none') hidden.push(Number(e.dataset.view));
  else shown.push([e.dataset.itemId, Number(e.dataset.view)]);
}
const content = document.getElementById('content').getBoundingClientRect();
const boxes = {};
for (const e of elements) {
  if (e.style.display === 'none') continue;
  const b = e.getBoundingClientRect();
  boxes[e.dataset.itemId] = [b.left - content.left, b.top - content.top, b.width, b.height, e.classList.contains('day')];
}
return {samples, blanks, elements: elements.length, withItem: document.querySelectorAll('[data-item-id]').length,
        shown, hidden, boxes, counts: vp.counts, errors: vp.errors, seq: vp.client.seq, stats: vp.client.stats,
        scrollTop: scroller.scrollTop, scrollHeight: scroller.scrollHeight, height,
        meant: vp.client._containerOffset()};
"""

# Wraps the page's client (once per client): every plan that answers a measurement batch is
# applied between two readings of the posts' screen positions. The first post on screen must not
# move; when every item the batch measured lay above the viewport, no post on screen may move.
INSTRUMENT_JS = """
const vp = window.viewportd, c = vp.client;
vp.jumps ??= {anchorBatches: 0, aboveBatches: 0, clamped: 0, violations: [], conflicts: []};
if (c.__instrumented) return true;
c.__instrumented = true;
const record = vp.jumps;
const scroller = document.getElementById('viewport');
const positions = (client) => {
  const top = scroller.getBoundingClientRect().top;
  const out = new Map();
  for (const v of client.shownViews()) {
    if (!v.rect || v.view.classList.contains('day')) continue;
    out.set(v.id, {screen: v.view.getBoundingClientRect().top - top, rect: v.rect});
  }
  return out;
};
const apply = c._applyPlan;
c._applyPlan = function (plan, seq, message) {
  if (message?.kind !== 'patch') { apply.call(this, plan, seq, message); return; }
  const scrollTop = scroller.scrollTop, height = scroller.clientHeight;
  const before = positions(this);
  // After client.scrollTo (until the user scrolls), the item scrolled to is the one kept still.
  const target = this._scrollTarget;
  apply.call(this, plan, seq, message);
  const after = positions(this);
  const onScreen = [...before].filter(([id, b]) => b.rect[1] < scrollTop + height && b.rect[1] + b.rect[3] > scrollTop && after.has(id));
  if (onScreen.length === 0) return;
  // Where the content's end (or start) stops the container, it cannot keep the screen still.
  if (scroller.scrollTop <= 0 || scroller.scrollTop >= scroller.scrollHeight - height - 0.5) { record.clamped += 1; return; }
  const resized = message.body.resize ?? [];
  const above = resized.length > 0 && resized.every((r) => { const b = before.get(r.id); return b && b.rect[1] + b.rect[3] <= scrollTop; });
  onScreen.sort((a, b) => a[1].rect[1] - b[1].rect[1]);
  const kept = onScreen.find(([id]) => id === target);
  const [firstId, first] = kept ?? onScreen[0];
  record.anchorBatches += 1;
  const shift = after.get(firstId).screen - first.screen;
  // The item scrolled to is kept still from the unrounded offset (at rest): the container is
  // rounded to a whole pixel before the edit and again after it, half a pixel each way, and the
  // browser holds both the offset and the item's position in 32-bit floats (their spacing at the
  // offset, each) and lays out in 1/64 px. Anything else on screen moves from where the
  // container is: one rounding, within 1 px.
  const spacing = scrollTop >= 1 ? 2 ** (Math.floor(Math.log2(scrollTop)) - 23) : 0;
  const bound = kept ? 1 + 2 * spacing + 1 / 64 : 1;
  if (Math.abs(shift) > bound) {
    record.violations.push(`seq ${plan.seq}: ${kept ? 'the item scrolled to' : 'the first post on screen'}, ${firstId}, moved ${shift.toFixed(2)} px on screen (a batch of ${resized.length} sizes) top ${scrollTop} -> ${scroller.scrollTop} max ${scroller.scrollHeight - height} rect ${first.rect} -> ${this._views.get(this._shownByItem.get(firstId))?.rect} offset ${JSON.stringify(plan.offset)} resized ${JSON.stringify(resized.map(r => [r.id, before.get(r.id)?.rect?.[1], r.size[1]]))}`);
  }
  if (above && !kept) {
    record.aboveBatches += 1;
    for (const [id, b] of onScreen) {
      const d = after.get(id).screen - b.screen;
      if (Math.abs(d) > 1) {
        record.violations.push(`seq ${plan.seq}: ${id} moved ${d.toFixed(2)} px on screen when only items above the viewport were measured`);
        break;
      }
    }
  }
};
const recover = c._recover;
c._recover = function (problem) {
  record.conflicts.push({status: problem.status, seq: problem.seq, resync: problem.resync === true, pageSeq: this.seq});
  return recover.call(this, problem);
};
return true;
"""


class Test:
    def __init__(self, driver, server, keep_going):
        self.driver = driver
        self.server = server
        self.keep_going = keep_going
        self.failures = []
        self.blank_samples = 0
        self.total_samples = 0
        self.max_elements = 0
        self.checks = 0
        self.violations_seen = 0
        self.rect_checks = 0
        self.rect_seconds = 0.0
        self.handles_at_kill = 0

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def js_async(self, script, *args):
        return self.driver.execute_async_script(script, *args)

    def settle(self, timeout=15):
        """Waits until no update is queued or in flight and the last plan is at the container's
        offset, twice 150 ms apart (the client sends an idle update 120 ms after the last scroll
        event). The container's offset is the one the page gave it, unrounded (the browser holds
        whole pixels, and past a million points its 32-bit floats lose the fraction: 0.55 px off
        at 2.8M), while the container is within a pixel of it; else where the container is."""
        deadline = time.monotonic() + timeout
        stable = 0
        last = None
        while time.monotonic() < deadline:
            state = self.js(SETTLED_JS)
            quiet = state["queued"] == 0 and not state["inFlight"]
            at = near(state["offset"], state["meant"], 0.5) and near(state["meant"], state["scroll"], 1)
            if quiet and at and state == last:
                stable += 1
                if stable >= 2:
                    return state
            else:
                stable = 0
            last = state
            time.sleep(0.15)
        raise AssertionError(f"did not settle within {timeout} s: {last}")

    def fail(self, what):
        self.failures.append(what)
        log("FAIL:", what)
        if not self.keep_going:
            raise AssertionError(what)

    def check(self, label, foreign=False, resynced=False, timeout=15):
        """After a foreign writer (another client moved the session), only what a repair can
        restore is checked: the shown elements are the session's visible views, no blank area,
        the same seq. After a resync (the page told the session its views) the pools are
        checked too, but the session's counters are what it had before its instance died."""
        self.settle(timeout)
        snap = self.js(SNAPSHOT_JS, list(GRID))
        status, _, body = self.server.get(f"/v1/sessions/{self.session}")
        state = json.loads(body)
        self.checks += 1
        self.total_samples += snap["samples"]
        self.blank_samples += len(snap["blanks"])
        self.max_elements = max(self.max_elements, snap["elements"])
        problems = []
        if snap["blanks"]:
            problems.append(f"{len(snap['blanks'])}/{snap['samples']} sample points are blank: {snap['blanks'][:5]}")
        if snap["elements"] > MAX_ELEMENTS or snap["withItem"] > MAX_ELEMENTS:
            problems.append(f"{snap['elements']} view elements ({snap['withItem']} showing items) > {MAX_ELEMENTS}")
        counts, stats = snap["counts"], state["stats"]
        exact = not foreign and not resynced
        if not exact:
            pass
        elif stats["created"] != counts["elementsCreated"]:
            problems.append(f"session created {stats['created']} views, the page created {counts['elementsCreated']} elements")
        if exact and stats["discarded"] != counts["elementsReleased"]:
            problems.append(f"session discarded {stats['discarded']} views, the page removed {counts['elementsReleased']} elements")
        if exact and stats["created"] - stats["discarded"] != snap["elements"]:
            problems.append(f"session has {stats['created'] - stats['discarded']} views alive, the DOM {snap['elements']}")
        if stats["peakViews"] > MAX_ELEMENTS:
            problems.append(f"peakViews {stats['peakViews']} > {MAX_ELEMENTS}")
        visible = sorted((e["id"], e["view"]) for e in state["visible"])
        shown = sorted(tuple(x) for x in snap["shown"])
        if visible != shown:
            missing = sorted(set(visible) - set(shown))[:5]
            extra = sorted(set(shown) - set(visible))[:5]
            problems.append(f"visible != shown elements: missing {missing}, extra {extra}")
        pooled = sorted(v for views in state["pool"].values() for v in views)
        if not foreign and pooled != sorted(snap["hidden"]):
            problems.append(f"pool {pooled[:10]}… != hidden elements {sorted(snap['hidden'])[:10]}…")
        if state["seq"] != snap["seq"]:
            problems.append(f"session seq {state['seq']} != page seq {snap['seq']}")
        if abs(state["offset"][1] - snap["meant"][1]) > 0.5 or abs(snap["meant"][1] - snap["scrollTop"]) >= 1:
            problems.append(f"session offset {state['offset']} != the page's {snap['meant']} (scrollTop {snap['scrollTop']})")
        problems += self.check_rects(state, snap)
        jumps = self.js("return window.viewportd.jumps ?? null")
        if jumps and len(jumps["violations"]) > self.violations_seen:
            problems += jumps["violations"][self.violations_seen:]
            self.violations_seen = len(jumps["violations"])
        if snap["errors"]:
            problems.append(f"page errors: {snap['errors'][:3]}")
        log(f"{label:<28} top {snap['scrollTop']:>9.0f}  shown {len(shown):>3}  elements {snap['elements']:>3}  "
            f"created {stats['created']:>4}  reused {stats['reused']:>6}  seq {state['seq']:>5}  "
            f"edits {state.get('edits', 0):>4}  blank {len(snap['blanks'])}/{snap['samples']}  {'ok' if not problems else 'FAIL'}")
        for problem in problems:
            self.fail(f"{label}: {problem}")
        return snap

    def check_rects(self, state, snap):
        """The session's layout (GET /v1/sessions/{id}/layout, its sizes as measured so far)
        places every shown element where the page shows it, with its rendered height (within
        0.5 px). Pinned day headers are compared by size only (they sit at their pinned rect)."""
        started = time.monotonic()
        _, _, body = self.server.get(f"/v1/sessions/{self.session}/layout")
        rects = layout_rects(json.loads(body), set(snap["boxes"]))
        problems = []
        for item, box in snap["boxes"].items():
            rect = rects.get(item)
            if rect is None:
                problems.append(f"{item} is shown but is not in the session's layout")
                continue
            x, y, w, h, day = box
            if abs(h - rect[3]) > 0.5 or abs(w - rect[2]) > 0.5:
                problems.append(f"{item}: rendered {w:.2f} x {h:.2f}, the session's rect {rect}")
            elif not day and (abs(y - rect[1]) > 0.5 or abs(x - rect[0]) > 0.5):
                problems.append(f"{item}: shown at ({x:.2f}, {y:.2f}), the session's rect {rect}")
            self.rect_checks += 1
        self.rect_seconds += time.monotonic() - started
        return problems[:5]

    def instrument(self):
        self.js(INSTRUMENT_JS)

    def open_demo(self, query="", base=None):
        self.driver.get((base or self.server.base) + "/demo" + query)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ready = self.js("return window.viewportd && (window.viewportd.ready || window.viewportd.errors.length > 0)")
            if ready:
                break
            time.sleep(0.1)
        errors = self.js("return window.viewportd ? window.viewportd.errors : ['no window.viewportd']")
        if errors:
            raise AssertionError(f"the demo did not open a session: {errors}")
        self.session = self.js("return window.viewportd.session")
        if not isinstance(self.session, str) or len(self.session) < 32:
            raise AssertionError(f"window.viewportd.session is {self.session!r}")
        self.violations_seen = 0
        self.instrument()
        log(f"demo open: session {self.session}, transport {self.js('return window.viewportd.client.transport')}")

    def max_top(self):
        return self.js("const s = document.getElementById('viewport'); return s.scrollHeight - s.clientHeight")

    def jump(self, top):
        self.js("document.getElementById('viewport').scrollTop = arguments[0]", top)

    def wheel(self, dy, ticks, pause):
        """A fling of real wheel events over the viewport: `ticks` events of `dy` pixels."""
        from selenium.webdriver.common.actions.action_builder import ActionBuilder

        viewport = self.driver.find_element("id", "viewport")
        builder = ActionBuilder(self.driver, duration=0)
        for _ in range(ticks):
            # x, y: from the element's centre.
            builder.wheel_action.scroll(x=0, y=0, delta_x=0, delta_y=dy, duration=0, origin=viewport)
            builder.wheel_action.pause(pause)
        builder.perform()

    def keys(self, key):
        from selenium.webdriver.common.action_chains import ActionChains

        self.js("document.getElementById('viewport').focus()")
        ActionChains(self.driver).send_keys(key).perform()


def demo_scenario(test, server, rng, args, driver):
    """The single-instance run: jumps, flings, slow scrolls up, keys, scrollTo, a reattach, a
    foreign writer, the POST fallback. Answers a summary line."""
    test.open_demo()
    test.check("opened")
    top_max = test.max_top()
    client_height = test.js("return document.getElementById('viewport').clientHeight")
    log(f"content height {top_max + client_height} px (estimates and measured sizes), viewport {client_height} px")

    for k in range(args.jumps):
        top = rng.uniform(0, test.max_top()) if k % 4 else rng.choice([0, test.max_top(), test.max_top() / 2])
        test.jump(top)
        test.check(f"jump {k + 1} to {top:.0f}")

    for k in range(args.flings):
        direction = 1 if k % 3 != 2 else -1
        ticks = rng.randint(8, 30)
        dy = direction * rng.choice([120, 240, 400, 800])
        test.wheel(dy, ticks, pause=rng.choice([0, 0.008, 0.016]))
        test.check(f"fling {k + 1}: {ticks}x{dy:+d}")

    # A scroll by script, one step a frame (Chromium fires scrollend after each: every frame is a
    # gesture, drag-begin then idle). Queued behind the request in flight, those must collapse,
    # not pile up two a frame and drain at one a frame (piled up, 624 were
    # queued after 600 frames, 12 s behind the container).
    for k, step in enumerate((30, 400)):
        queued = test.js_async("""const done = arguments[arguments.length - 1], step = arguments[0];
            const s = document.getElementById('viewport'), c = window.viewportd.client; let n = 0, most = 0;
            (function tick() {
                s.scrollTop += (Math.floor(n / 150) % 2 ? -step : step);
                most = Math.max(most, c._queue.length);
                if (++n < 300) requestAnimationFrame(tick); else done([most, c._queue.length]);
            })();""", step)
        started = time.monotonic()
        test.check(f"script scroll {k + 1}: 300 frames of {step} px")
        settled_in = time.monotonic() - started
        log(f"script scroll {k + 1}: at most {queued[0]} messages queued, {queued[1]} at the end; settled in {settled_in:.2f} s")
        # Updates collapse; measurement edits between them stay (a few a frame at 400 px).
        if queued[0] > 20 or settled_in > 5:
            test.fail(f"script scroll {k + 1} ({step} px a frame): {queued[0]} messages queued at once, settled in {settled_in:.1f} s "
                      "(merged updates keep it at a few, settled in well under a second)")

    # Slow scrolls up from a fresh position: the posts above enter the buffer at their estimate
    # and are measured before they reach the screen; nothing on screen may move.
    for k in range(3):
        test.jump(rng.uniform(test.max_top() * 0.1, test.max_top() * 0.9))
        test.check(f"slow up {k + 1}: jump")
        test.wheel(-60, 12, pause=0.05)
        test.check(f"slow up {k + 1}: 12x-60")

    test.keys("\ue010")  # End
    test.check("key End")
    test.keys("\ue011")  # Home
    test.check("key Home")

    # scrollTo a text post far from here, not measured yet: the session places it at its
    # estimated height, the measurements around it (its own too) move it, and the client sends
    # the scrollTo again until they stop: it ends where `align` puts it (before, one aligned at
    # its end was left off screen when it grew, and one centred was off by what it grew).
    for align in ("end", "center"):
        post = f"p{rng.randrange(10, 90) * 1000 + 25 * rng.randrange(40) + rng.randrange(5, 20)}"
        test.js("window.viewportd.client.scrollTo(arguments[0], arguments[1])", post, align)
        test.check(f"scrollTo {post} ({align})")
        where = test.js(PLACEMENT_JS, post)
        off = None if where is None else where[1] if align == "end" else where[2]
        bound = rounding_bound(test.js("return document.getElementById('viewport').scrollTop"))
        if where is None or where[0] == "photo" or abs(off) > bound:
            test.fail(f"scrollTo {post} ({align}): [reuse, px from the viewport's end, from its centre, rounds] = {where}")
        else:
            log(f"scrollTo {post} ({align}): {off:+.3f} px from where it belongs (at most {bound:.3f}), after {where[3]} scrollTo(s) again")

    # The screenshot: a photo post scrolled to by the client's scrollTo (the session picks the
    # offset, the page follows it), a day header pinned.
    # Every 25th post of a day (k % 25 == 24) is a photo: its height is in the layout, not measured.
    photo = f"p{rng.randrange(10, 90) * 1000 + 25 * rng.randrange(40) + 24}"
    test.js("window.viewportd.client.scrollTo(arguments[0], 'center')", photo)
    snap = test.check(f"scrollTo {photo}")
    where = test.js(PLACEMENT_JS, photo)
    centre = None if where is None else [where[0], where[2]]
    # The page rounds the container to whole pixels once (half a point, more where the browser's
    # 32-bit floats lose the fraction past a million points); edits that moved it since start from
    # the offset the page meant, not from the rounded one, so roundings do not add up.
    bound = rounding_bound(snap["scrollTop"])
    if centre is None or centre[0] != "photo" or abs(centre[1]) > bound:
        test.fail(f"scrollTo {photo} (center): [reuse, px from the viewport's centre] = {centre}")
    else:
        log(f"scrollTo {photo} (center): its centre {centre[1]:+.3f} px from the viewport's (at most {bound:.3f})")
    first_transport = test.js("return window.viewportd.client.transport")
    test.wheel(-120, 2, 0.016)
    snap = test.check("screenshot")
    if args.screenshot:
        os.makedirs(os.path.dirname(os.path.abspath(args.screenshot)), exist_ok=True)
        driver.save_screenshot(args.screenshot)
        log(f"screenshot: {args.screenshot}")
    stats = snap["stats"]
    jumps = test.js("return window.viewportd.jumps")
    log(f"measurement batches answered: {jumps['anchorBatches']} with a post on screen (its first post kept its place), "
        f"{jumps['aboveBatches']} measuring only items above the viewport (no post on screen moved), "
        f"{jumps['clamped']} where the container was at the content's start or end")
    if jumps["aboveBatches"] < 1:
        test.fail("no measurement batch measured only items above the viewport: the no-jump check did not run")

    # A reconnect: a second client attaches to the session (GET state) and adopts the first
    # one's views, then scrolling goes on through it.
    attached = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        (async () => {
          const m = await import('/client/viewportd.js');
          const vp = window.viewportd, first = vp.client;
          await first.close();
          const second = await m.attachSession({session: vp.session, scroller: document.getElementById('viewport'),
              views: {...vp.views, adopt: first}, measure: (id, reuse) => reuse === 'post',
              onError: (e) => vp.errors.push(String(e))});
          vp.client = second;
          done([second.transport, second.seq, first.seq]);
        })().catch((e) => done('error: ' + e));""")
    if not isinstance(attached, list) or attached[1] != attached[2]:
        test.fail(f"attachSession: {attached}")
    log(f"attached: transport {attached[0]}, seq {attached[1]}")
    test.instrument()
    test.check("attached")
    for k in range(2):
        test.jump(rng.uniform(0, test.max_top()))
        test.check(f"attached: jump {k + 1}")
    test.wheel(240, 10, 0.008)
    test.check("attached: fling")

    # Another writer moves the session behind the page's back: the page's next update gets a
    # 409 and the client recovers (resync at the session's seq).
    state = json.loads(server.get(f"/v1/sessions/{test.session}")[2])
    for k in (1, 2):
        other = server.post(f"/v1/sessions/{test.session}/viewport",
                            {"offset": [0, rng.uniform(0, test.max_top())], "seq": state["seq"] + k})
        assert other[0] == 200, other
    test.jump(rng.uniform(0, test.max_top()))
    test.check("after a foreign writer", foreign=True)
    recovered = test.js("return window.viewportd.client.stats")
    log(f"recovered: {recovered['conflicts']} conflicts (409), {recovered['resyncs']} resyncs, {recovered['repaired']} repairs")
    if recovered["conflicts"] < 1:
        test.fail("the page did not see the foreign writer's seq (no 409)")
    test.jump(rng.uniform(0, test.max_top()))
    test.check("next jump", foreign=True)

    # POST only: the fallback when a socket is not possible.
    test.open_demo("?socket=0")
    transport = test.js("return window.viewportd.client.transport")
    if transport != "http":
        test.fail(f"/demo?socket=0 uses {transport}")
    test.check("http: opened")
    for k in range(3):
        test.jump(rng.uniform(0, test.max_top()))
        test.check(f"http: jump {k + 1}")
    test.wheel(400, 12, 0.008)
    test.check("http: fling")

    pipeline_checks(test, server)

    own_page_checks(test, server, driver)

    return (f"most view elements in the DOM: {test.max_elements}; page: created {stats['created']}, reused {stats['reused']} "
            f"({stats['rebindFree']} without rebind), {stats['patches']} measurement batches, {stats['plans']} plans, "
            f"{stats['reconciled']} idle updates for container moves the client had not sent, "
            f"average round trip {stats['rttAverage']:.2f} ms over {first_transport}")


# Where the item `arguments[0]` is shown: [its reuse identifier, px from its bottom to the
# viewport's, px from its centre to the viewport's, how many times the client sent its last
# scrollTo again]; null when it is not shown.
PLACEMENT_JS = """
const e = document.querySelector(`[data-item-id="${arguments[0]}"]`), s = document.getElementById('viewport');
if (!e) return null;
const a = e.getBoundingClientRect(), b = s.getBoundingClientRect();
return [e.dataset.reuse, a.bottom - (b.top + s.clientHeight), (a.top + a.bottom) / 2 - (b.top + b.top + s.clientHeight) / 2,
        window.viewportd.client._realigned];
"""


# A page of one's own (a 600 x 500 scroller and its content, the module imported from viewportd's
# origin): `args[0]` is what to do, the callback's value what happened.
OWN_PAGE_JS = """
const done = arguments[arguments.length - 1];
(async () => {
  const vd = await import('/client/viewportd.js');
  document.body.innerHTML = '<div id="list" style="position:absolute;left:0;top:0;width:600px;height:500px;overflow:auto;overflow-anchor:none"><div id="content" style="position:relative"></div></div>';
  const scroller = document.getElementById('list'), content = document.getElementById('content');
  const views = vd.domViews(content, {render: (el, e) => { el.textContent = e.id; }});
  const settle = async (c) => { for (let k = 0; k < 3; k++) { await c.flush(); await new Promise((r) => setTimeout(r, 150)); } };
  const rect = (id) => { const e = content.querySelector(`[data-item-id="${id}"]`);
    if (!e || e.style.display === 'none') return null;
    const a = e.getBoundingClientRect(), b = scroller.getBoundingClientRect(); return [a.left - b.left, a.top - b.top]; };
  const task = arguments[0];
  if (task.kind === 'loop') {
    // Six pages side by side, looped: a scrollTo across the wrap comes with a recenter.
    const c = await vd.openSession({layout: task.layout, scroller, views, session: task.session});
    scroller.scrollLeft = 3000;
    await settle(c);
    const out = [];
    for (const id of task.targets) {
      c.scrollTo(id, 'start');
      await settle(c);
      out.push([id, rect(id), scroller.scrollLeft]);
      scroller.scrollLeft = 3000;
      await settle(c);
    }
    done(out);
  } else if (task.kind === 'chat') {
    // A measured stack (rendered heights 30-90 px against a 40 px estimate) read at its end; new
    // messages come with anchor "end". Over POST, the first PATCH answers 500 (a proxy's error):
    // its sizes must still reach the session.
    const heights = (id) => 30 + (Number(id.slice(1)) * 37) % 61;
    const measured = vd.domViews(content, {measure: true, render: (el, e) => {
      el.textContent = e.id; el.style.minHeight = el.style.maxHeight = (e.id.startsWith('n') ? 50 : heights(e.id)) + 'px'; }});
    const realFetch = window.fetch; let failed = 0, lost = [];
    window.fetch = (url, init) => (init?.method === 'PATCH' && failed === 0 && ++failed
                                   && (lost = JSON.parse(init.body).resize.map((r) => r.id)))
      ? Promise.resolve(new Response('{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"proxy"}', {status: 500}))
      : realFetch(url, init);
    const errors = [];
    const c = await vd.openSession({layout: task.layout, scroller, views: measured, measure: true, socket: false,
                                    onError: (e) => errors.push(String(e))});
    await settle(c);
    await new Promise((r) => setTimeout(r, 1500));  // the failed sizes go again after a second
    await settle(c);
    c.scrollTo('m59', 'end');
    await settle(c);
    const out = {failed, lost: lost.length, errors, ends: []};
    for (let k = 1; k <= 3; k++) {
      c.patch({insert: [{at: 'end', section: 's', items: [{id: 'n' + k, size: [600, 50]}]}], anchor: 'end'});
      await settle(c);
      const r = rect('n' + k);
      out.ends.push([scroller.scrollHeight - scroller.clientHeight - scroller.scrollTop, r && r[1] + 50 - scroller.clientHeight]);
    }
    const layout = await (await realFetch(`/v1/sessions/${c.session}/layout`)).json();
    out.wrong = layout.sections[0].stack.items.filter((i) => i.id.startsWith('m') && i.size && i.size[1] !== heights(i.id)).length;
    out.unmeasured = layout.sections[0].stack.items.filter((i) => lost.includes(i.id) && !i.size).length;
    window.fetch = realFetch;
    done(out);
  } else if (task.kind === 'open') {
    const c = await vd.openSession({layout: task.layout, scroller, views});
    c.scrollTo(task.target, 'start');
    await settle(c);
    c.close();
    done([c.session, scroller.scrollTop, rect(task.target)]);
  } else {
    // A reload: the page attaches with its scroller; domViews sizes the content to the state's
    // contentSize before the container goes to the session's offset.
    const c = await vd.attachSession({session: task.session, scroller, views});
    await settle(c);
    done([scroller.scrollTop, c.offset, rect(task.target)]);
  }
})().catch((e) => done('error: ' + e));
"""


# Records what the client sends and applies (its private methods wrapped, once per client): the
# seq of every plan applied, the most messages in flight at once, the `rtt` updates carried,
# the dragging updates and those of them without a velocity.
PIPELINE_JS = """
const c = window.viewportd.client, record = {seqs: [], most: 0, rtts: [], updates: 0, refused: 0, dragging: 0, still: []};
window.viewportd.pipeline = record;
const apply = c._applyPlan;
c._applyPlan = function (plan, seq, message) { record.seqs.push(plan.seq); return apply.call(this, plan, seq, message); };
const pipelined = c._sendPipelined;
c._sendPipelined = function (message) {
  pipelined.call(this, message);
  record.most = Math.max(record.most, this._flight.length);
};
const body = c._body;
c._body = function (message, seq) {
  const b = body.call(this, message, seq);
  if (message.kind === 'update') { record.updates += 1; if (b.rtt !== undefined) record.rtts.push(b.rtt); }
  // A dragging update without a velocity stops the session's look-ahead for its plan.
  if (message.kind === 'update' && b.phase === 'dragging') {
    record.dragging += 1;
    if (!b.velocity) record.still.push(b.seq);
  }
  record.most = Math.max(record.most, this._flight.length + (this._sending ? 1 : 0));
  return b;
};
return true;
"""

# Scrolls the container at a constant speed, one step a frame, for `seconds`.
SWEEP_JS = """
const [speed, seconds] = arguments, done = arguments[arguments.length - 1];
const s = document.getElementById('viewport'), start = s.scrollTop;
let t0 = null;
const frame = (ts) => {
  t0 ??= ts;
  const t = (ts - t0) / 1000;
  s.scrollTop = start + speed * t;
  if (t < seconds) requestAnimationFrame(frame); else done(s.scrollTop);
};
requestAnimationFrame(frame);
"""


def rtt_accepted(server):
    """Whether the server takes `rtt` on updates (docs/api.md "Round trips")."""
    layout = {"sections": [{"id": "r", "reuse": "row", "list": {"count": 100, "size": [300, 48]}}]}
    status, opened = server.post("/v1/sessions", {"layout": layout, "viewport": [300, 600]})
    if status != 201:
        raise AssertionError(f"POST /v1/sessions: {status} {opened}")
    status, _ = server.post(f"/v1/sessions/{opened['session']}/viewport", {"offset": [0, 100], "velocity": [0, 900], "rtt": 0.05})
    server.delete(f"/v1/sessions/{opened['session']}")
    return status == 200


def pipeline_checks(test, server):
    """Over a delay proxy (80 ms round trip), /demo scrolled at a constant speed down and up
    (updates every frame, measurement edits among them; scrolling up measures posts above the
    screen, whose anchor moves the content under updates already in flight): on the socket,
    several messages are in flight at once; every plan is applied in seq order, one seq after
    the other; after settling the DOM is the session's (the usual checks) and no view handle was
    created twice; updates carry the measured round trip (`rtt`) when the server takes it, and
    stop carrying it when it does not; every dragging update carries a velocity (also the one
    that tells the session where an edit's anchor moved the container). By POST (?socket=0), one request at a time."""
    port = int(server.base.rsplit(":", 1)[1].split("/")[0])
    proxy = DelayProxy(port)
    proxy.rtt = 0.08
    accepted = rtt_accepted(server)
    try:
        for query, label in (("", "pipelined"), ("?socket=0", "pipelined, http")):
            test.open_demo(query, base=proxy.base)
            test.js(PIPELINE_JS)
            test.jump(test.max_top() * 0.4)
            test.check(f"{label}: jump", timeout=30)
            for speed in (4000, -3000):
                test.js_async(SWEEP_JS, speed, 1.5)
                test.check(f"{label}: sweep at {speed:+d} px/s", timeout=30)
            record = test.js("return window.viewportd.pipeline")
            transport = test.js("return window.viewportd.client.transport")
            seqs = record["seqs"]
            out_of_order = [(a, b) for a, b in zip(seqs, seqs[1:]) if b != a + 1]
            if not seqs or out_of_order:
                test.fail(f"{label}: plans applied out of seq order: {out_of_order[:5]} ({len(seqs)} plans)")
            if transport == "socket" and record["most"] < 3:
                test.fail(f"{label}: at most {record['most']} messages in flight on the socket over an 80 ms round trip")
            if transport == "http" and record["most"] > 1:
                test.fail(f"{label}: {record['most']} requests in flight by POST")
            rtts = record["rtts"]
            if accepted and (len(rtts) < record["updates"] // 2 or not all(0.06 <= r <= 0.5 for r in rtts[-5:])):
                test.fail(f"{label}: the server takes rtt, and {len(rtts)} of {record['updates']} updates carried it, the last {rtts[-5:]}")
            if not record["dragging"] or record["still"]:
                test.fail(f"{label}: {len(record['still'])} of {record['dragging']} dragging updates went without a velocity "
                          f"(seq {record['still'][:5]}): the session looks ahead only with one")
            if not accepted and rtts and test.js("return window.viewportd.client._rttField"):
                test.fail(f"{label}: the server refuses rtt and the client still sends it")
            problems, created = handles_problems(test, None)
            for problem in problems:
                test.fail(f"{label}: {problem}")
            log(f"{label} ({transport}, 80 ms round trip): {len(seqs)} plans in seq order, at most {record['most']} in flight, "
                f"{len(rtts)}/{record['updates']} updates carried rtt (last {rtts[-1] if rtts else None} s; the server "
                f"{'takes' if accepted else 'refuses'} it), {created} view handles, none twice")
    finally:
        proxy.stop()


def own_page_checks(test, server, driver):
    """The client on a page of one's own: a loop session's scrollTo across the wrap (its plan
    recenters: the container goes to the offset after it, not before), attachSession after a
    reload (the container goes to the session's offset, not the session to the page's top), and
    a chat: a measurement edit that failed (500) is sent again, and edits with anchor "end" keep
    the newest message at the bottom (the client had kept the old first line still)."""
    driver.get(server.base + "/healthz")
    pages = {"axis": "x", "sections": [{"id": "p", "reuse": "page", "pages": {"count": 6, "size": [600, 500], "axis": "x"}}]}
    looped = test.js_async(OWN_PAGE_JS, {"kind": "loop", "layout": pages, "targets": ["p-2", "p-0", "p-4"],
                                         "session": {"buffer": 0, "loop": True, "paging": {"mode": "page"}}})
    if not isinstance(looped, list) or any(r[1] is None or abs(r[1][0]) > 1 for r in looped):
        test.fail(f"loop session: scrollTo(id, 'start') from scrollLeft 3000: [id, its rect's [left, top] in the scroller, scrollLeft] = {looped}")
    else:
        log(f"loop session: scrollTo across the wrap: {looped}")
    driver.get(server.base + "/healthz")
    chat = {"sections": [{"id": "s", "reuse": "msg", "stack": {"items": [{"id": f"m{i}"} for i in range(60)], "estimate": [600, 40]}}]}
    chatted = test.js_async(OWN_PAGE_JS, {"kind": "chat", "layout": chat})
    if not isinstance(chatted, dict) or chatted["failed"] < 1 or chatted["lost"] < 1 or chatted["wrong"] or chatted["unmeasured"] \
            or any(end[1] is None or abs(end[0]) > 1 or abs(end[1]) > 1 for end in chatted["ends"]):
        test.fail(f"chat: {chatted} (ends: [px from the end, the new message's bottom from the viewport's])")
    else:
        log(f"chat: a measurement edit answered 500 went again ({len(chatted['errors'])} error reported); "
            f"three messages at the end with anchor end: {chatted['ends']}")
    rows = {"sections": [{"id": "r", "reuse": "row", "list": {"count": 100000, "size": [600, 48]}}]}
    opened = test.js_async(OWN_PAGE_JS, {"kind": "open", "layout": rows, "target": "r-300"})
    driver.get(server.base + "/healthz")
    attached = test.js_async(OWN_PAGE_JS, {"kind": "attach", "session": opened[0] if isinstance(opened, list) else "",
                                           "target": "r-300"})
    if not isinstance(attached, list) or abs(attached[0] - 14400) > 1 or abs(attached[1][1] - 14400) > 1 or attached[2] is None \
            or abs(attached[2][1]) > 1:
        test.fail(f"attachSession after a reload at r-300 (offset 14400): opened {opened}, attached [scrollTop, offset, r-300's rect] = {attached}")
    else:
        log(f"attachSession after a reload: scrollTop {attached[0]}, offset {attached[1]}, r-300 at {attached[2]}")


def handles_problems(test, before_max):
    """Every element the page created has its own handle; those created after `before_max` was
    read are above it."""
    handles = test.js("return window.viewportd.counts.handles")
    problems = []
    if len(handles) != len(set(handles)):
        twice = sorted({h for h in handles if handles.count(h) > 1})[:10]
        problems.append(f"view handles created twice: {twice}")
    if before_max is not None:
        k = test.handles_at_kill
        low = [h for h in handles[k:] if h <= before_max]
        if low:
            problems.append(f"handles created after the kill at or below {before_max}, the highest before it: {low[:10]}")
    return problems, len(handles)


def cluster_scenario(test, cluster, rng, args):
    """kill -9 of the instance the page talks to while the page scrolls, then the page's client
    is pointed at the other instance (client.setBase): it must get 502s (nothing behind /a/),
    then 503s from the other instance until the dead one's lease runs out, then a 409 with
    "resync": true, send again the edits the session lost, post /resync with its views and go on
    with no blank area, the DOM matching the session again, and no view handle used twice."""
    test.open_demo()
    test.check("cluster: opened")
    for k in range(2):
        test.jump(rng.uniform(0, test.max_top()))
        test.check(f"cluster: jump {k + 1}")
    recovered = None
    for attempt in range(1, 4):
        victim = cluster.current
        other = "b" if victim == "a" else "a"
        owner = cluster.owner(test.session)
        if owner != victim:
            test.fail(f"the session's lease is held by {owner!r}, not by viewportd {victim}, the instance the page talks to")
        test.handles_at_kill = test.js("return window.viewportd.counts.handles.length")
        before_max = test.js("return Math.max(0, ...window.viewportd.counts.handles)")
        conflicts_before = len(test.js("return window.viewportd.jumps.conflicts"))
        # Scroll on, a little every frame, into posts not measured yet: updates and measurements
        # are answered up to the kill, and more are sent while the instance is gone.
        test.js("""const s = document.getElementById('viewport');
            window.viewportd.autoscroll = setInterval(() => { s.scrollTop += 9; }, 16);""")
        time.sleep(rng.uniform(0.3, 0.6))
        seq_at_kill = test.js("return window.viewportd.client.seq")
        cluster.kill(victim)
        killed_at = time.monotonic()
        log(f"attempt {attempt}: kill -9 viewportd {victim} (pid {cluster.pid(victim)}) at page seq {seq_at_kill}, while the page scrolls")
        cluster.current = other
        test.js("window.viewportd.client.setBase(arguments[0])", f"/{other}/")
        time.sleep(0.5)
        test.js("clearInterval(window.viewportd.autoscroll)")
        test.settle(timeout=40)
        recovery = time.monotonic() - killed_at
        conflicts = test.js("return window.viewportd.jumps.conflicts")[conflicts_before:]
        stats = test.js("return window.viewportd.client.stats")
        base = test.js("return window.viewportd.client.base")
        if not base.endswith(f"/{other}/"):
            test.fail(f"the client's base is {base} after setBase('/{other}/')")
        log(f"attempt {attempt}: settled {recovery:.1f} s after the kill, talking to {base}; 409s {conflicts}; "
            f"{stats['unavailable']} tries answered 502/503 or refused, {stats['resyncs']} resyncs, {stats['replayed']} edits sent again")
        if any(c["resync"] and c["status"] == 409 for c in conflicts):
            recovered = (before_max, stats)
            break
        log(f"attempt {attempt}: the kill found nothing unwritten (no 409 with resync); viewportd {victim} starts again")
        cluster.start(victim)
        test.check(f"cluster: attempt {attempt} continued", resynced=True)
    if recovered is None:
        test.fail("three kills and no 409 with \"resync\": true")
        return "no resync"
    before_max, stats = recovered
    if stats["resyncs"] < 1:
        test.fail("the page got a 409 with resync but did not resync")
    test.check("cluster: recovered", resynced=True)
    if cluster.owner(test.session) != cluster.current:
        test.fail(f"after the recovery the session's lease is held by {cluster.owner(test.session)!r}, not {cluster.current}")
    problems, created = handles_problems(test, before_max)
    for problem in problems:
        test.fail(f"cluster: {problem}")
    for k in range(2):
        test.jump(rng.uniform(0, test.max_top()))
        test.check(f"cluster: after, jump {k + 1}", resynced=True)
    test.wheel(-240, 10, 0.008)
    test.check("cluster: after, fling up", resynced=True)
    problems, created = handles_problems(test, before_max)
    for problem in problems:
        test.fail(f"cluster: {problem}")
    transport = test.js("return window.viewportd.client.transport")
    return (f"recovered on viewportd {cluster.current} with {stats['resyncs']} resync(s), {stats['replayed']} edits sent again, "
            f"{stats['unavailable']} tries answered 502/503; {created} view handles created, none twice, "
            f"none at or below {before_max} after the kill; transport {transport} at the end")


def run_scenario(name, args, rng, width, height):
    """Starts what the scenario needs (a viewportd, or the cluster), a browser, and runs it.
    Answers (exit code, failures)."""
    if args.base:
        server = Running(args.base)
    else:
        binary = find_binary(args.binary)
        server = Cluster(binary) if name == "cluster" else Server(binary)
    driver = None
    test = None
    code = 1
    try:
        status, content_type, body = server.get("/client/viewportd.js")
        assert status == 200 and content_type.startswith("text/javascript"), (status, content_type)
        assert b"export async function openSession" in body
        driver = start_browser(width, height)
        test = Test(driver, server, args.keep_going)
        summary = cluster_scenario(test, server, rng, args) if name == "cluster" else demo_scenario(test, server, rng, args, driver)
        log(f"{name}: {test.checks} checks, {test.total_samples} sample points, {test.blank_samples} blank; "
            f"{test.rect_checks} element rects compared with the session's layout ({test.rect_seconds:.1f} s to read it); {summary}")
        code = 0 if not test.failures else 1
    except AssertionError as error:
        log(f"FAIL: {error}")
        code = 1
    except Exception as error:  # a browser or server that could not start
        log(f"ERROR: {type(error).__name__}: {error}")
        code = 1
    finally:
        if driver is not None:
            driver.quit()
        tail = server.tail() if code else ""
        exit_code = server.stop()
        if exit_code != 0:
            log(f"FAIL: viewportd exited with {exit_code} after SIGTERM")
            code = 1
        if code and tail:
            print("--- viewportd log ---\n" + tail, file=sys.stderr)
    # An exception (a scroll that did not settle) stops the scenario: it counts as a failure.
    failures = max(len(test.failures) if test is not None else 0, 1 if code else 0)
    return code, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", help="viewportd binary (default: $VIEWPORTD, else the newer of .build/release and .build/debug)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (printed; replays a run)")
    parser.add_argument("--jumps", type=int, default=12, help="random scrollTop jumps")
    parser.add_argument("--flings", type=int, default=10, help="wheel flings")
    parser.add_argument("--screenshot", default=f"{REPO}/docs/demo.png", help="where to save the screenshot")
    parser.add_argument("--window", default="900,820", help="browser window size W,H")
    parser.add_argument("--keep-going", action="store_true", help="run every check even after a failure")
    parser.add_argument("--scenario", choices=("all", "demo", "cluster"), default="all",
                        help="demo: one viewportd, the measured feed; cluster: redis-server, two viewportd sharing it, "
                             "kill -9 of the page's instance and the 409 resync on the other; all (default): both")
    parser.add_argument("--base", help="the demo scenario against a viewportd already running at this URL (for example "
                                       "behind a proxy that serves the module and the demo from the working tree)")
    args = parser.parse_args()
    if args.base and args.scenario == "cluster":
        parser.error("--base runs the demo scenario only")
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    log(f"seed {seed} (replay with --seed {seed})")
    width, height = (int(x) for x in args.window.split(","))

    try:
        import selenium  # noqa: F401
    except ImportError:
        sys.exit("browser-test: selenium is missing (scripts/install-deps.sh --browser)")

    started = time.monotonic()
    scenarios = ["demo", "cluster"] if args.scenario == "all" and not args.base else [args.scenario if args.scenario != "all" else "demo"]
    results = []
    for k, name in enumerate(scenarios):
        log(f"scenario {name}")
        results.append((name, *run_scenario(name, args, random.Random(seed + k), width, height)))
    code = 0
    for name, scenario_code, failures in results:
        log(f"scenario {name}: {'passed' if scenario_code == 0 else f'FAILED ({failures} failures)'}")
        code = code or scenario_code
    log(f"{'passed' if code == 0 else 'FAILED'} in {time.monotonic() - started:.1f} s (seed {seed})")
    return code


if __name__ == "__main__":
    sys.exit(main())
