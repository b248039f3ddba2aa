#!/usr/bin/env python3
"""Blank area of the browser client over a network's round trip (docs/guides/round-trips.md).

Starts a viewportd binary on a free loopback port and a delay proxy in front of it (asyncio, on
loopback: every chunk read from either side is held RTT/2 before it is written on, the WebSocket
upgrade and its frames included), then opens pages through the proxy in headless Chromium
(chromium + chromium-driver, driven by Selenium, as scripts/browser-test.py does):

  - minimal: the minimal page of docs/guides/browser-client.md (100,000 rows of 48 px, `buffer: 250`);
  - demo: GET /demo (100,000 posts in measured stacks, lazy load).

For each page and RTT, the page's scroll container is driven at a constant speed, frame by frame
(requestAnimationFrame sets scrollTop = start + v·t), for 2 s. Each frame, right after the
container moved (what the frame paints), a sampler takes the share of the viewport's height that
no shown item element ([data-item-id]) covers: FlashList's blank area. A cell is its mean over
the frames. Jumps: from rest, scrollTop jumps far; "screen full after" is the time from the frame
that jumped to the first frame with no blank (gaps under 1 px are rounding), the median over the
jumps. The sampler also records the materialized reach: the extent of the shown views' rects (the
day headers of /demo aside) in viewport heights, the largest over every frame (the bound is 2.5,
plus the items that straddle the region's two ends).

Usage: scripts/latency-bench.py [--binary PATH ...] [--rtt 0,50,100,150] [--speeds 1500,4000,8000]
                                [--pages minimal,demo] [--jumps N] [--seconds S] [--quick]
                                [--client FILE] [--window W,H] [--buffer N]
  --binary twice or more: each binary is measured in turn, its table printed, side by side in
  one sitting. --quick (CI): RTT 100 ms, 4,000 px/s, both pages, 3 jumps; exits 1 when a mean
  blank passes --bound (default 45 %: a client without pipelining and look-ahead leaves 60-90 %
  there, this one 1-5 % on a quiet machine and up to ~30 % on a 2-core machine at load 17), the
  reach passes 2.5 viewports, a jump stays blank for 5 s, or the page reports an error.
  --client FILE: the proxy answers GET /client/viewportd.js with FILE (a client being edited,
  without rebuilding the binary); repeated, the n-th goes with the n-th --binary ('-': none).
Needs: chromium, chromium-driver (apt), selenium (pip): scripts/install-deps.sh --browser.
"""
import argparse
import importlib.util
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("browser_test", os.path.join(HERE, "browser-test.py"))
browser_test = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser_test)

FRAME_MS = 1000 / 60


def log(*parts):
    print("latency-bench:", *parts, file=sys.stderr, flush=True)


# The minimal page of docs/guides/browser-client.md, built in a page of the proxy's origin (it must share viewportd's).
MINIMAL_JS = """
const done = arguments[arguments.length - 1];
(async () => {
  document.head.innerHTML = '<meta charset="utf-8">';
  document.body.style.margin = '0';
  document.body.innerHTML = '<div id="list" style="height: 100vh; overflow: auto"><div id="content" style="position: relative"></div></div>';
  const { openSession, domViews } = await import('/client/viewportd.js');
  const scroller = document.getElementById('list');
  const views = domViews(document.getElementById('content'), {
    render: (element, entry) => { element.textContent = `row ${entry.id}`; },
  });
  const errors = [];
  const client = await openSession({
    layout: {sections: [{id: 'row', reuse: 'row', list: {count: 100000, size: [scroller.clientWidth, 48]}}]},
    scroller, views, session: {buffer: arguments[0]},
    onError: (e) => errors.push(String(e)),
  });
  views.contentSize(client.contentSize);
  window.viewportd = {client, errors, ready: true, session: client.session};
  done(true);
})().catch((e) => done('error: ' + e));
"""

# The sampler: blank share of the viewport's height (union of the shown items' spans), the
# materialized reach in viewport heights, and how many elements show items.
SAMPLER_JS = """
window.__blank = (s) => {
  const box = s.getBoundingClientRect(), h = s.clientHeight, top = box.top;
  const spans = [];
  let lo = Infinity, hi = -Infinity, shown = 0;
  // The reach: from the highest bottom to the lowest top of the shown views' rects (the session's
  // region reaches at least that far: every shown item intersects it; a row or a post short of
  // its whole extent).
  for (const v of window.viewportd.client.shownViews()) {
    if (!v.rect || v.view.dataset.reuse === 'day') continue;
    lo = Math.min(lo, v.rect[1] + v.rect[3]);
    hi = Math.max(hi, v.rect[1]);
  }
  for (const e of s.querySelectorAll('[data-item-id]')) {
    if (e.style.display === 'none') continue;
    const b = e.getBoundingClientRect();
    shown += 1;
    const a = Math.max(b.top - top, 0), z = Math.min(b.bottom - top, h);
    if (z > a) spans.push([a, z]);
  }
  spans.sort((p, q) => p[0] - q[0]);
  // Gaps under a pixel are the browser's rounding (past 4M px its 32-bit floats hold half
  // pixels), not blank.
  let blank = 0, end = 0;
  for (const [a, z] of spans) {
    if (z <= end) continue;
    if (a - end >= 1) blank += a - end;
    end = z;
  }
  if (h - end >= 1) blank += h - end;
  return [blank, hi > lo ? (hi - lo) / h : 0, shown];
};
"""

MOTION_JS = """
const [id, start, speed, seconds] = arguments, done = arguments[arguments.length - 1];
const s = document.getElementById(id), h = s.clientHeight;
const c = window.viewportd.client;
let t0 = null, frames = 0, sum = 0, worst = 0, reach = 0, blankFrames = 0, shown = 0, lag = 0;
const frame = (ts) => {
  if (t0 === null) t0 = ts;
  const t = (ts - t0) / 1000;
  s.scrollTop = start + speed * t;
  const [blank, r, n] = window.__blank(s);
  // How far behind the container the last plan applied is, in ms of motion.
  lag += (s.scrollTop - c.offset[1]) / speed * 1000;
  frames += 1; sum += blank / h; worst = Math.max(worst, blank / h); reach = Math.max(reach, r);
  shown = Math.max(shown, n);
  if (blank >= 1) blankFrames += 1;
  if (t < seconds) requestAnimationFrame(frame);
  else done({frames, mean: sum / frames, worst, reach, blankFrames, shown, fps: (frames - 1) / t, end: s.scrollTop, lag: lag / frames});
};
requestAnimationFrame(frame);
"""

JUMP_JS = """
const [id, target, timeout] = arguments, done = arguments[arguments.length - 1];
const s = document.getElementById(id);
let t0 = null, frames = 0, reach = 0;
const frame = (ts) => {
  if (t0 === null) { t0 = ts; s.scrollTop = target; }
  const [blank, r] = window.__blank(s);
  reach = Math.max(reach, r);
  if (blank === 0) { done({ms: ts - t0, frames, reach}); return; }
  frames += 1;
  if (ts - t0 > timeout) { done({ms: null, frames, reach}); return; }
  requestAnimationFrame(frame);
};
requestAnimationFrame(frame);
"""

SETTLED_JS = """
const c = window.viewportd.client, s = document.getElementById(arguments[0]);
return [c._queue.length === 0 && !c._inFlight, c.offset[1], s.scrollTop];
"""


class Bench:
    def __init__(self, driver, proxy, args):
        self.driver = driver
        self.proxy = proxy
        self.args = args

    def js(self, script, *a):
        return self.driver.execute_script(script, *a)

    def js_async(self, script, *a):
        return self.driver.execute_async_script(script, *a)

    def open(self, page):
        base = f"http://127.0.0.1:{self.proxy.port}"
        if page == "minimal":
            self.driver.get(base + "/healthz")
            result = self.js_async(MINIMAL_JS, self.args.buffer)
            if result is not True:
                raise RuntimeError(f"the minimal page did not open: {result}")
            self.scroller = "list"
        else:
            self.driver.get(base + "/demo" + ("" if self.args.buffer == 250 else f"?buffer={self.args.buffer}"))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if self.js("return !!(window.viewportd && (window.viewportd.ready || window.viewportd.errors.length))"):
                    break
                time.sleep(0.1)
            errors = self.js("return window.viewportd ? window.viewportd.errors : ['no window.viewportd']")
            if errors:
                raise RuntimeError(f"/demo did not open: {errors}")
            self.scroller = "viewport"
        self.js(SAMPLER_JS)

    def settle(self, timeout=20):
        """Until nothing is queued or in flight and the session is at the container's offset,
        twice 100 ms apart."""
        deadline = time.monotonic() + timeout
        stable = 0
        while time.monotonic() < deadline:
            quiet, session, at = self.js(SETTLED_JS, self.scroller)
            stable = stable + 1 if quiet and abs(session - at) < 1 else 0
            if stable >= 3:
                return
            time.sleep(0.1)
        raise RuntimeError(f"the page did not settle within {timeout} s")

    def rest_at(self, top):
        self.js("document.getElementById(arguments[0]).scrollTop = arguments[1]", self.scroller, top)
        time.sleep(0.2)
        self.settle()
        time.sleep(0.3)
        self.settle()

    def motion(self, start, speed):
        self.rest_at(start)
        return self.js_async(MOTION_JS, self.scroller, start, speed, self.args.seconds)

    def jumps(self, count, rng):
        out = []
        top_max = self.js("const s = document.getElementById(arguments[0]); return s.scrollHeight - s.clientHeight", self.scroller)
        for _ in range(count):
            self.rest_at(rng.uniform(0.05, 0.45) * top_max)
            target = rng.uniform(0.55, 0.95) * top_max
            out.append(self.js_async(JUMP_JS, self.scroller, target, 5000))
        return out


def pct(x):
    return f"{100 * x:.1f} %"


def measure_binary(binary, client, args, rng_seed):
    """Runs every cell against one binary. Answers rows: (page, rtt, {speed: motion}, [jumps])."""
    import random

    server = browser_test.Server(binary)
    proxy = browser_test.DelayProxy(server.port, client)
    width, height = (int(x) for x in args.window.split(","))
    driver = browser_test.start_browser(width, height)
    driver.set_script_timeout(60)
    rows = []
    try:
        for page in args.pages:
            for rtt in args.rtt:
                proxy.rtt = rtt / 1000
                bench = Bench(driver, proxy, args)
                bench.open(page)
                rng = random.Random(rng_seed + rtt)
                cells = {}
                for speed in args.speeds:
                    # A start far from either end, the same for every binary.
                    cells[speed] = bench.motion(150000 + 20000 * args.speeds.index(speed), speed)
                jumps = bench.jumps(args.jumps, rng) if args.jumps else []
                errors = bench.js("return window.viewportd.errors")
                transport = bench.js("return window.viewportd.client.transport")
                rows.append((page, rtt, cells, jumps, errors, transport))
                line = "  ".join(f"{s}: {pct(m['mean'])} (worst {pct(m['worst'])}, lag {m['lag']:.0f} ms, reach {m['reach']:.2f}, {m['fps']:.0f} fps)"
                                 for s, m in cells.items())
                log(f"{os.path.basename(binary)}{'+' + os.path.basename(client) if client else ''} {page} RTT {rtt} ms [{transport}]: {line}; jumps "
                    f"{[None if j['ms'] is None else round(j['ms']) for j in jumps]}{'; errors ' + str(errors[:2]) if errors else ''}")
    finally:
        driver.quit()
        proxy.stop()
        server.stop()
    return rows


def table(label, rows, speeds):
    out = [f"{label}", "",
           "| page | RTT | " + " | ".join(f"{s:,} px/s" for s in speeds) + " | jump: screen full after (median) | reach (viewports) "
           "| lag, ms (each speed) |",
           "|---|---|" + "---|" * len(speeds) + "---|---|---|"]
    for page, rtt, cells, jumps, errors, transport in rows:
        done = [j["ms"] for j in jumps if j["ms"] is not None]
        if jumps:
            median = statistics.median(done) if len(done) == len(jumps) else None
            jump = (f"{median:.0f} ms = RTT + {(median - rtt) / FRAME_MS:.1f} frames" if median is not None
                    else f"{len(jumps) - len(done)}/{len(jumps)} not full in 5 s")
        else:
            jump = "-"
        reach = max([m["reach"] for m in cells.values()] + [j["reach"] for j in jumps])
        lags = " / ".join(f"{cells[s]['lag']:.0f}" for s in speeds)
        out.append(f"| {page} | {rtt} ms | " + " | ".join(pct(cells[s]["mean"]) for s in speeds) + f" | {jump} | {reach:.2f} | {lags} |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", action="append", help="viewportd binary (repeat to compare; default as browser-test.py)")
    parser.add_argument("--rtt", default="0,50,100,150", help="round trips in ms")
    parser.add_argument("--speeds", default="1500,4000,8000", help="scroll speeds in px/s")
    parser.add_argument("--pages", default="minimal,demo")
    parser.add_argument("--jumps", type=int, default=5, help="jumps per page and RTT")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds of motion per cell")
    parser.add_argument("--window", default="900,820", help="browser window W,H")
    parser.add_argument("--client", action="append",
                        help="serve this file as /client/viewportd.js (through the proxy); repeated, the n-th goes with "
                             "the n-th --binary ('-': the binary's own)")
    parser.add_argument("--buffer", type=float, default=250, help="the pages' buffer, points on each side (default 250)")
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="CI: RTT 100 ms, 4,000 px/s, both pages, 3 jumps, bounds")
    parser.add_argument("--bound", type=float, default=45.0, help="--quick: the largest mean blank, in percent")
    args = parser.parse_args()
    if args.quick:
        args.rtt, args.speeds, args.jumps = "100", "4000", 3
    args.rtt = [int(x) for x in args.rtt.split(",")]
    args.speeds = [int(x) for x in args.speeds.split(",")]
    args.pages = args.pages.split(",")
    binaries = args.binary or [browser_test.find_binary(None)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        sys.exit("latency-bench: selenium is missing (scripts/install-deps.sh --browser)")
    started = time.monotonic()
    clients = [None if c == "-" else c for c in (args.client or [])]
    clients += [None] * (len(binaries) - len(clients))
    results = []
    for binary, client in zip(binaries, clients):
        label = binary + (f" serving {client}" if client else "")
        results.append((label, measure_binary(binary, client, args, args.seed)))
    print(f"Mean blank area over {args.seconds:g} s of constant-speed scrolling, buffer {args.buffer:g}, window {args.window}, "
          f"{os.cpu_count()} cores, {time.monotonic() - started:.0f} s in all.\n")
    for binary, rows in results:
        print(table(binary, rows, args.speeds) + "\n")
    if not args.quick:
        return 0
    failed = []
    for binary, rows in results:
        for page, rtt, cells, jumps, errors, transport in rows:
            for speed, m in cells.items():
                if m["mean"] * 100 > args.bound:
                    failed.append(f"{page} RTT {rtt} ms {speed} px/s: mean blank {pct(m['mean'])} > {args.bound} %")
                if m["reach"] > 2.5:
                    failed.append(f"{page} RTT {rtt} ms {speed} px/s: items reach {m['reach']:.2f} viewports > 2.5")
            if any(j["reach"] > 2.5 for j in jumps):
                failed.append(f"{page} RTT {rtt} ms: after a jump items reach {max(j['reach'] for j in jumps):.2f} viewports > 2.5")
            if any(j["ms"] is None for j in jumps):
                failed.append(f"{page} RTT {rtt} ms: a jump left blank for 5 s")
            if errors:
                failed.append(f"{page} RTT {rtt} ms: page errors {errors[:2]}")
    for f in failed:
        log("FAIL:", f)
    log("passed" if not failed else "FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
