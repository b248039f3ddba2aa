#!/usr/bin/env python3
"""Real-browser test of the browser client (GET /client/viewportd.js) and its demo (GET /demo).

Starts a viewportd binary on a free loopback port, opens /demo in headless Chromium (Debian's
chromium + chromium-driver, driven by Selenium), and scrolls its 100,000-post feed: jumps to
random positions (scrollTop), flings made of real wheel events (Selenium wheel actions, which
Chromium receives as input events), and keyboard End/Home. After each scroll settles (no update
queued or in flight, the last plan's offset is the container's offset) it checks:

  - no blank area: elementFromPoint at a grid of points across the viewport each hit an element
    that shows an item ([data-item-id], displayed): FlashList's blank-area measure;
  - at most 200 item elements ([data-view]) in the DOM, for 100,000 items;
  - the session agrees with the DOM (GET /v1/sessions/{id}): views created = elements the page
    ever created, discarded = elements removed, visible = the shown elements (id and view), the
    pools = the hidden elements, seq = the page's seq, peakViews <= 200;
  - the page reported no error.

It saves a screenshot (default docs/demo.png) and exits 1 on any failure.

Usage: scripts/browser-test.py [--binary PATH] [--seed N] [--jumps N] [--flings N]
                               [--screenshot PATH] [--keep-going]
Needs: chromium, chromium-driver (apt), selenium (pip); scripts/install-deps.sh --browser.
"""
import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_ELEMENTS = 200
GRID = (9, 14)  # sample points across the viewport: columns x rows


def log(*parts):
    print("browser-test:", *parts, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_binary(given):
    if given:
        return given
    for path in (os.environ.get("VIEWPORTD"), f"{REPO}/.build/release/viewportd", f"{REPO}/.build/debug/viewportd"):
        if path and os.access(path, os.X_OK):
            return path
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
        offset: c.offset, scroll: [s.scrollLeft, s.scrollTop]};
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
return {samples, blanks, elements: elements.length, withItem: document.querySelectorAll('[data-item-id]').length,
        shown, hidden, counts: vp.counts, errors: vp.errors, seq: vp.client.seq, stats: vp.client.stats,
        scrollTop: scroller.scrollTop, scrollHeight: scroller.scrollHeight, height};
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

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def settle(self, timeout=15):
        """Waits until no update is queued or in flight and the last plan is at the container's
        offset, twice 150 ms apart (the client sends an idle update 120 ms after the last scroll
        event)."""
        deadline = time.monotonic() + timeout
        stable = 0
        last = None
        while time.monotonic() < deadline:
            state = self.js(SETTLED_JS)
            quiet = state["queued"] == 0 and not state["inFlight"]
            at = abs(state["offset"][0] - state["scroll"][0]) < 0.5 and abs(state["offset"][1] - state["scroll"][1]) < 0.5
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

    def check(self, label, foreign=False):
        """After a foreign writer (another client moved the session), only what a repair can
        restore is checked: the shown elements are the session's visible views, no blank area,
        the same seq."""
        self.settle()
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
        if foreign:
            pass
        elif stats["created"] != counts["elementsCreated"]:
            problems.append(f"session created {stats['created']} views, the page created {counts['elementsCreated']} elements")
        if not foreign and stats["discarded"] != counts["elementsReleased"]:
            problems.append(f"session discarded {stats['discarded']} views, the page removed {counts['elementsReleased']} elements")
        if not foreign and stats["created"] - stats["discarded"] != snap["elements"]:
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
        if abs(state["offset"][1] - snap["scrollTop"]) > 0.5:
            problems.append(f"session offset {state['offset']} != scrollTop {snap['scrollTop']}")
        if snap["errors"]:
            problems.append(f"page errors: {snap['errors'][:3]}")
        log(f"{label:<28} top {snap['scrollTop']:>9.0f}  shown {len(shown):>3}  elements {snap['elements']:>3}  "
            f"created {stats['created']:>4}  reused {stats['reused']:>6}  seq {state['seq']:>5}  "
            f"blank {len(snap['blanks'])}/{snap['samples']}  {'ok' if not problems else 'FAIL'}")
        for problem in problems:
            self.fail(f"{label}: {problem}")
        return snap

    def open_demo(self, query=""):
        self.driver.get(self.server.base + "/demo" + query)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", help="viewportd binary (default: $VIEWPORTD, .build/release, .build/debug)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (printed; replays a run)")
    parser.add_argument("--jumps", type=int, default=12, help="random scrollTop jumps")
    parser.add_argument("--flings", type=int, default=10, help="wheel flings")
    parser.add_argument("--screenshot", default=f"{REPO}/docs/demo.png", help="where to save the screenshot")
    parser.add_argument("--window", default="900,820", help="browser window size W,H")
    parser.add_argument("--keep-going", action="store_true", help="run every check even after a failure")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    rng = random.Random(seed)
    log(f"seed {seed} (replay with --seed {seed})")
    width, height = (int(x) for x in args.window.split(","))

    try:
        import selenium  # noqa: F401
    except ImportError:
        sys.exit("browser-test: selenium is missing (scripts/install-deps.sh --browser)")

    started = time.monotonic()
    server = Server(find_binary(args.binary))
    driver = None
    test = None
    code = 1
    try:
        status, content_type, body = server.get("/client/viewportd.js")
        assert status == 200 and content_type.startswith("text/javascript"), (status, content_type)
        assert b"export async function openSession" in body
        driver = start_browser(width, height)
        test = Test(driver, server, args.keep_going)
        test.open_demo()
        test.check("opened")
        top_max = test.max_top()
        client_height = test.js("return document.getElementById('viewport').clientHeight")
        log(f"content height {top_max + client_height} px, viewport {client_height} px")

        for k in range(args.jumps):
            top = rng.uniform(0, top_max) if k % 4 else rng.choice([0, top_max, top_max / 2])
            test.jump(top)
            test.check(f"jump {k + 1} to {top:.0f}")

        for k in range(args.flings):
            direction = 1 if k % 3 != 2 else -1
            ticks = rng.randint(8, 30)
            dy = direction * rng.choice([120, 240, 400, 800])
            test.wheel(dy, ticks, pause=rng.choice([0, 0.008, 0.016]))
            test.check(f"fling {k + 1}: {ticks}x{dy:+d}")

        test.keys("\ue010")  # End
        test.check("key End")
        test.keys("\ue011")  # Home
        test.check("key Home")

        # The screenshot: a photo post scrolled to by the client's scrollTo (the session picks
        # the offset, the page follows it), a day header pinned.
        photo = f"p{rng.randrange(10, 90)}.{rng.randrange(10)}-0"
        test.js("window.viewportd.client.scrollTo(arguments[0], 'center')", photo)
        snap = test.check(f"scrollTo {photo}")
        centre = test.js("""const e = document.querySelector(`[data-item-id="${arguments[0]}"]`), s = document.getElementById('viewport');
            if (!e) return null; const a = e.getBoundingClientRect(), b = s.getBoundingClientRect();
            return (a.top + a.bottom) / 2 - (b.top + b.top + s.clientHeight) / 2;""", photo)
        if centre is None or abs(centre) > 1:
            test.fail(f"scrollTo {photo} (center): the item is {centre} px from the viewport's centre")
        first_transport = test.js("return window.viewportd.client.transport")
        test.wheel(-120, 2, 0.016)
        snap = test.check("screenshot")
        if args.screenshot:
            os.makedirs(os.path.dirname(os.path.abspath(args.screenshot)), exist_ok=True)
            driver.save_screenshot(args.screenshot)
            log(f"screenshot: {args.screenshot}")
        stats = snap["stats"]

        # A reconnect: a second client attaches to the session (GET state) and adopts the first
        # one's views, then scrolling goes on through it.
        attached = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            (async () => {
              const m = await import('/client/viewportd.js');
              const vp = window.viewportd, first = vp.client;
              await first.close();
              const second = await m.attachSession({session: vp.session, scroller: document.getElementById('viewport'),
                  views: {...vp.views, adopt: first}, onError: (e) => vp.errors.push(String(e))});
              vp.client = second;
              done([second.transport, second.seq, first.seq]);
            })().catch((e) => done('error: ' + e));""")
        if not isinstance(attached, list) or attached[1] != attached[2]:
            test.fail(f"attachSession: {attached}")
        log(f"attached: transport {attached[0]}, seq {attached[1]}")
        test.check("attached")
        for k in range(2):
            test.jump(rng.uniform(0, top_max))
            test.check(f"attached: jump {k + 1}")
        test.wheel(240, 10, 0.008)
        test.check("attached: fling")

        # Another writer moves the session behind the page's back: the page's next update gets
        # a 409 and the client recovers (resync, or without that endpoint, the session's seq and
        # a repair from its state).
        state = json.loads(server.get(f"/v1/sessions/{test.session}")[2])
        for k in (1, 2):
            other = server.post(f"/v1/sessions/{test.session}/viewport",
                                {"offset": [0, rng.uniform(0, top_max)], "seq": state["seq"] + k})
            assert other[0] == 200, other
        test.jump(rng.uniform(0, top_max))
        test.check("after a foreign writer", foreign=True)
        recovered = test.js("return window.viewportd.client.stats")
        log(f"recovered: {recovered['conflicts']} conflicts (409), {recovered['resyncs']} resyncs, {recovered['repaired']} repairs")
        if recovered["conflicts"] < 1:
            test.fail("the page did not see the foreign writer's seq (no 409)")
        test.jump(rng.uniform(0, top_max))
        test.check("next jump", foreign=True)

        # POST only: the fallback when a socket is not possible.
        test.open_demo("?socket=0")
        transport = test.js("return window.viewportd.client.transport")
        if transport != "http":
            test.fail(f"/demo?socket=0 uses {transport}")
        test.check("http: opened")
        for k in range(3):
            test.jump(rng.uniform(0, top_max))
            test.check(f"http: jump {k + 1}")
        test.wheel(400, 12, 0.008)
        test.check("http: fling")

        log(f"{test.checks} checks, {test.total_samples} sample points, {test.blank_samples} blank; "
            f"most view elements in the DOM: {test.max_elements}; page: created {stats['created']}, reused {stats['reused']} "
            f"({stats['rebindFree']} without rebind), {stats['plans']} plans, average round trip {stats['rttAverage']:.2f} ms "
            f"over {first_transport}")
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
    if test is not None and test.failures:
        log(f"{len(test.failures)} failures")
    log(f"{'passed' if code == 0 else 'FAILED'} in {time.monotonic() - started:.1f} s (seed {seed})")
    return code


if __name__ == "__main__":
    sys.exit(main())
