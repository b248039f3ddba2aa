// viewportd.js: the browser client of viewportd (API v1, see docs/api.md).
//
// An ES module with no build step and no dependencies, served by viewportd at
// GET /client/viewportd.js. It opens (POST /v1/sessions) or attaches to (GET /v1/sessions/{id}) a
// session, sends viewport updates over the session's WebSocket (POST /v1/sessions/{id}/viewport
// when a socket is not possible), keeps `seq`, and applies every plan to views that the
// application provides through callbacks, exactly as the plan says:
//
//   recycle  -> hide(view, entry)          the view goes into its pool, kept
//   discard  -> release(view, entry)       the view is gone
//   reuse    -> bind(view, entry) only when entry.rebind is true, then show(view, entry)
//   create   -> create(entry) returns a new view showing entry.id at entry.rect
//   move, pin, unpin -> move/pin/unpin(view, entry), each falling back to show(view, entry)
//   recenter -> recenter(delta), or every shown view moved by delta
//   load     -> load(view or null, {id, view}); enter(entries), leave(ids), prefetch(ids),
//               cancelPrefetch(ids), contentSize(size) (after a stack edit): all optional
//
// Entries passed to callbacks: {id, view (the handle), reuse, rect, rebind?, selected?, pinned?,
// hold?}.
//
// recycle and discard are applied before reuse and create (a view recycled in a plan may be
// reused by the same plan). Round trips (docs/guides/round-trips.md): on the socket, what was
// queued goes out once per animation frame without waiting for the answers before it (up to
// MAX_IN_FLIGHT messages in flight, `seq` orders them, the socket answers in order), so a plan
// is one round trip old when it lands, and measurement edits never hold scroll updates back.
// Updates carry `rtt`, the measured round trip (an average of answer times), once the server
// takes it: the session then materializes ahead by what the viewport covers in that time. By
// POST (no socket), one request is in flight (HTTP/1.1 has no pipelining in fetch, and
// concurrent requests on several connections would reach the server out of seq order): the
// next goes as soon as the answer lands, updates and edits take turns, and `rtt` is twice the
// round trip (a plan must last until the next one lands). Offsets given meanwhile are coalesced
// into the next update.
//
// Measuring (`measure`, docs/api.md "Stacks and edits"): the views a plan brings are measured in
// the task that applied it, and one shorter than its rect (an estimate) holds the rect's height
// (`entry.hold`: domViews gives it that min-height) until a plan gives it its size, so a jump fills
// the screen in one round trip; a ResizeObserver watches the shown views of stack items after that;
// sizes that differ from the rect go out as {"patch": {"resize": [...], "anchor": "visible"}} on
// the socket (PATCH /v1/sessions/{id}/layout without one), merged per item and at most one
// message per frame. The answer's `move` entries put the views in place, its `contentSize`
// sizes the content, and the scroll container moves by the offset the anchor shifted, in the same
// task: what is on screen does not move.
//
// Recovery (docs/api.md "Many instances, one store"): a 503 (an instance died and its lease has not run
// out, a shutdown), a refused request or one not answered within 10 s is tried again after
// Retry-After, with the same seq (setBase sends what is in flight to the new base at once). A 404
// or a 401 closes the client (onError gets it once). A 409
// with "resync": true (the session was restored from the store, behind this page) first sends
// again the edits the session lost, then POST /v1/sessions/{id}/resync with the views this page
// really has, and goes on at this page's seq. Any other 409 (another writer moved the session)
// resyncs at the session's seq; against a server without /resync, the page takes the session's
// seq and repairs its views from GET /v1/sessions/{id}.

const PHASES = new Set(["drag-begin", "dragging", "drag-end", "decelerating", "idle"]);
/// Phases whose updates may be merged into a queued update of the same phase.
const MERGEABLE = new Set(["dragging", "decelerating", "idle"]);
/// Phases of a gesture under way, which a queued idle that ends it replaces.
const GESTURE = new Set(["drag-begin", "dragging", "decelerating"]);
/// Messages in flight at once on the socket (a frame's update and edits each frame, over a
/// round trip of up to half a second at 60 frames a second).
const MAX_IN_FLIGHT = 64;
/// The round-trip estimate (sent as `rtt`): an average of answer times and of their deviation
/// from it (TCP's SRTT and RTTVAR, RFC 6298); what goes out is their sum (the deviation at least
/// a frame), at most RTT_MAX_S.
const RTT_GAIN = 0.125;
const RTT_DEVIATION_GAIN = 0.25;
const RTT_MAX_S = 5;
const FRAME_MS = 1000 / 60;
const SOCKET_OPEN_TIMEOUT_MS = 3000;
const SOCKET_RETRY_MS = 2000;
const IDLE_AFTER_MS = 120;
/// After a scrollend event, the scroll is at rest unless another scroll event comes within this
/// long: Chromium ends every scroll set by script (a scrollbar dragged, an animation) at once,
/// and a scroll that goes on frame after frame is one motion, with a velocity (the look-ahead
/// needs it), not a rest every frame.
const SCROLLEND_REST_MS = 50;
/// A 503 or a refused request is tried again for this long (an instance's lease runs out in
/// store.leaseTimeout, 2 s by default), waiting Retry-After (at most RETRY_MAX_MS) between tries.
const UNAVAILABLE_GIVE_UP_MS = 30000;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;
/// A request or socket message not answered within this long is given up and tried again (same
/// seq): an instance that stopped answering without closing (frozen, cut off) does not hold
/// the client until a proxy's timeout.
const ANSWER_TIMEOUT_MS = 10000;
/// A measurement edit that failed (5xx, no answer) is measured and sent again after this long,
/// doubling up to REMEASURE_MAX_MS while it keeps failing.
const REMEASURE_MIN_MS = 1000;
const REMEASURE_MAX_MS = 30000;
/// Edits remembered for a resync (those the session lost are sent again): the last this many.
const PATCH_LOG = 1024;
/// A measured size differs from the rect when it is off by more than this (CSS pixels; layout
/// works in 1/64 px).
const MEASURE_EPSILON = 0.01;
/// How many times a scrollTo goes again after the edits answered since (see _realign).
const REALIGN_LIMIT = 8;

/// An edit's anchor: "visible" unless it says otherwise (docs/api.md "Stacks and edits").
function anchorOf(body) { return body.anchor ?? "visible"; }

/// The base URL of the viewportd that served this module ("…/client/viewportd.js" -> "…/").
function defaultBase() {
    try { return new URL("..", import.meta.url).href; } catch { return location.origin + "/"; }
}

function nextFrame(callback) {
    if (typeof requestAnimationFrame === "function" && typeof document !== "undefined" && document.visibilityState !== "hidden") {
        requestAnimationFrame(() => callback());
    } else {
        setTimeout(callback, 16);
    }
}

function now() { return typeof performance !== "undefined" ? performance.now() : Date.now(); }

function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

/// How long to wait before trying a 503 again: its Retry-After (seconds), within bounds.
function retryDelay(problem) {
    const seconds = Number(problem?.retryAfter);
    const ms = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000;
    return Math.min(RETRY_MAX_MS, Math.max(RETRY_MIN_MS, ms));
}

/// An error answered by viewportd: the problem object (RFC 9457) and its status.
export class ViewportdError extends Error {
    constructor(problem, context) {
        super(`${context}: ${problem.status} ${problem.title ?? ""}: ${problem.detail ?? ""}`.trim());
        this.problem = problem;
        this.status = problem.status;
    }
}

function isProblem(body) {
    return body !== null && typeof body === "object" && typeof body.status === "number" && typeof body.type === "string";
}

/// Talks HTTP to one viewportd: JSON in, JSON (or a problem) out.
class HTTP {
    constructor(base, token) {
        this.base = HTTP.normalize(base);
        this.token = token ?? null;
        /** The AbortControllers of requests in flight: setBase aborts them. */
        this._pending = new Set();
    }

    /// Ends every request in flight (they throw, and are tried again where `base` says now).
    abort() {
        for (const controller of this._pending) controller.abort();
        this._pending.clear();
    }

    /// An absolute base URL ending in "/" (a relative one is taken from the page's location).
    static normalize(base) {
        let url = String(base);
        if (typeof location !== "undefined") url = new URL(url, location.href).href;
        return url.endsWith("/") ? url : url + "/";
    }

    url(path) { return new URL(path.replace(/^\//, ""), this.base).href; }

    /// Answers {status, body}; body is the parsed JSON (a problem object for errors), or null.
    /// With `timeout` (ms), a request not answered by then is aborted (it throws). Opening a
    /// session has none: an inline layout may take long to upload.
    async request(method, path, body, timeout = 0) {
        const headers = {};
        if (body !== undefined) headers["Content-Type"] = "application/json";
        if (this.token) headers["Authorization"] = "Bearer " + this.token;
        const controller = new AbortController();
        this._pending.add(controller);
        const timer = timeout > 0 ? setTimeout(() => controller.abort(), timeout) : null;
        let response, text;
        try {
            response = await fetch(this.url(path), {
                method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: controller.signal,
            });
            text = await response.text();
        } finally {
            clearTimeout(timer);
            this._pending.delete(controller);
        }
        let parsed = null;
        if (text.length > 0) {
            try { parsed = JSON.parse(text); } catch { parsed = { status: response.status, type: "about:blank", detail: text }; }
        }
        if (isProblem(parsed) && response.headers.has("Retry-After")) parsed.retryAfter = response.headers.get("Retry-After");
        return { status: response.status, body: parsed };
    }

    socketURL(session) {
        const url = new URL(`v1/sessions/${encodeURIComponent(session)}/socket`, this.base);
        url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
        return url.href;
    }
}

/// Opens a session (POST /v1/sessions) and applies its opening plan.
///
/// options:
///   layout     a layout id or an inline layout (docs/api.md "Layouts", docs/guides/generated-layouts.md)
///   viewport   [w, h]; or give `scroller` and its client size is used
///   session    other fields of the POST body: offset, buffer, insets, pool, paging, lazyLoad, …
///   views      the callbacks (see the top of this file; domViews() makes them for DOM elements)
///   scroller   an element to follow: its scroll offset and size become updates (bindScroller)
///   base       viewportd's URL (default: where this module was served from)
///   token      auth.token, sent as "Authorization: Bearer" and as the socket subprotocol
///   socket     false to use POST only (default true)
///   rtt        false never to send the measured round trip on updates (default: sent while the
///              server takes it; docs/guides/round-trips.md)
///   measure    true, or a function(id, reuse) -> bool: measure shown views (of stack items) and
///              send their sizes; `element(view)` finds a view's element when views are not
///              elements
///   resync     false to turn off automatic resync after a 409 (default true)
///   onPlan(plan, client), onError(error, client): optional observers (onPlan runs once the plan
///   is applied and the scroll container has followed its offset)
export async function openSession(options) {
    const http = new HTTP(options.base ?? defaultBase(), options.token);
    const viewport = options.viewport ?? (options.scroller ? [options.scroller.clientWidth, options.scroller.clientHeight] : null);
    if (!viewport) throw new TypeError("openSession: give viewport or scroller");
    const body = { ...(options.session ?? {}), layout: options.layout, viewport };
    if (options.scroller && body.offset === undefined) body.offset = [options.scroller.scrollLeft, options.scroller.scrollTop];
    const answer = await http.request("POST", "/v1/sessions", body);
    if (answer.status !== 201) throw new ViewportdError(answer.body ?? { status: answer.status }, "POST /v1/sessions");
    const client = new ViewportClient(http, answer.body.session, options);
    client.layout = answer.body.layout;
    client.contentSize = answer.body.contentSize;
    client.viewport = viewport;
    if (client.contentSize) client._cb.contentSize?.(client.contentSize);
    // Following the container first: measurements of the opening plan's views may be answered
    // before the socket is open, and their anchor moves the container.
    if (options.scroller) client.bindScroller(options.scroller);
    client._applyPlan(answer.body.plan, 0);
    await client._connect();
    return client;
}

/// Attaches to an existing session (GET /v1/sessions/{id}): continues at its `seq`.
///
/// A page that still holds the session's views passes them as `views.adopt`: the previous
/// ViewportClient of the session (after its close(): everything it knew is kept), or a Map (or
/// object) of view handle -> the application's view. A page without them (a reload) gets its
/// views back by a resync with no views (the next update creates every one); when the server has
/// no resync endpoint, `create` is called for each visible item, with `rect` from
/// `options.rectOf(id)` when given (the state carries no rects). The state's `contentSize` goes
/// to `views.contentSize`; with `scroller`, the container then goes to the session's offset.
/// Same options as openSession, plus `session`: the session id.
export async function attachSession(options) {
    const http = new HTTP(options.base ?? defaultBase(), options.token);
    const id = options.session;
    const answer = await http.request("GET", `/v1/sessions/${encodeURIComponent(id)}`);
    if (answer.status !== 200) throw new ViewportdError(answer.body ?? { status: answer.status }, `GET /v1/sessions/${id}`);
    const state = answer.body;
    const client = new ViewportClient(http, id, { ...options, session: undefined });
    client.layout = state.layout;
    client.viewport = state.viewport;
    client.offset = state.offset;
    client.seq = state.seq;
    // The layout's content size as edited (a server before it was in the state: none).
    client.contentSize = state.contentSize ?? null;
    if (client.contentSize) client._cb.contentSize?.(client.contentSize);
    const adopt = options.views?.adopt;
    if (adopt) {
        client._adoptState(state, adopt instanceof Map || adopt instanceof ViewportClient
            ? adopt : new Map(Object.entries(adopt).map(([k, v]) => [Number(k), v])));
    } else if (!(await client._resyncWith(state.seq, [], {}))) {
        for (const entry of state.visible) {
            client._create({ id: entry.id, view: entry.view, rect: options.rectOf?.(entry.id) ?? null });
        }
    }
    await client._connect();
    if (options.scroller) {
        client.bindScroller(options.scroller);
        // The page (a reload) scrolls to where the session is, not the session to where a fresh
        // page is (its top), once its content is sized (views.contentSize, from the state; a page
        // without that callback sizes it before attaching). Content not sized clamps it: the
        // session then follows the page.
        client._scrollContainerTo(client.offset);
    }
    // The attached state has no rects: an update at the current offset brings the views' places.
    client.scroll(client.offset, { phase: "idle" });
    return client;
}

/// One session, seen from the page: its views, its seq, its transport.
export class ViewportClient {
    constructor(http, session, options) {
        const views = options.views ?? {};
        for (const name of ["create", "bind", "show", "hide", "release"]) {
            if (typeof views[name] !== "function") throw new TypeError(`views.${name} must be a function`);
        }
        this._http = http;
        this._cb = views;
        this._options = options;
        /** The session id. */
        this.session = session;
        this.layout = null;
        this.contentSize = null;
        this.viewport = null;
        this.offset = [0, 0];
        /** The seq of the last plan applied. */
        this.seq = 0;
        /** "socket" or "http": how updates go out now. */
        this.transport = "http";
        /** Counted on this page: what the plans asked for, and the traffic. */
        this.stats = {
            created: 0, reused: 0, rebindFree: 0, recycled: 0, discarded: 0, moved: 0, plans: 0,
            messages: 0, alive: 0, shown: 0, rtt: 0, rttAverage: 0, plansPerSecond: 0, repaired: 0,
            conflicts: 0, resyncs: 0, patches: 0, replayed: 0, unavailable: 0, errors: 0, reconciled: 0,
        };
        /** handle -> {view, id, reuse, rect, shown, pinned}. */
        this._views = new Map();
        /** item id -> handle, for shown views. */
        this._shownByItem = new Map();
        /** reuse identifier -> handles in the pool, oldest first. */
        this._pools = new Map();
        this._queue = [];
        /** Messages sent on the socket and not yet answered, oldest first: {message, seq,
         *  started, result}. */
        this._flight = [];
        /** The message sent one at a time (by POST, a scrollTo, after a failure), or null. */
        this._sending = null;
        /** A pipelined message failed: those behind it are answered 409 (their seq does not
         *  follow) and go again, after it, once the pipeline is empty. */
        this._broken = false;
        this._failed = [];
        /** The next message goes one at a time (it failed in the pipeline: _send recovers). */
        this._serialNext = false;
        /** The last kind sent one at a time: updates and edits take turns by POST. */
        this._lastSerialKind = null;
        /** Round-trip estimate in ms (null until an answer), its mean deviation, and whether
         *  updates carry it as `rtt` (until the server refuses the field). */
        this._srtt = null;
        this._rttDeviation = 0;
        this._rttField = options.rtt !== false;
        this._pumpScheduled = false;
        this._socket = null;
        this._socketWaiters = [];
        this._socketRetryAt = options.socket === false ? Infinity : 0;
        this._planTimes = [];
        this._idleWaiters = [];
        this._closed = false;
        this._measure = options.measure ?? false;
        /** item id -> the size last sent for it. */
        this._measured = new Map();
        /** Edits the session applied, {seq, body}, oldest first: sent again after a resync. */
        this._patchLog = [];
        /** The highest seq of an edit that fell out of the log. */
        this._patchLogFloor = 0;
        /** [x, y] the scroll container was set to by this client: its scroll event is ours. */
        this._expectedScroll = null;
        /** {exact, at}: the unrounded offset this client last gave the container, and where the
         *  browser put it (whole pixels). */
        this._exactScroll = null;
        /** The item of the last scrollTo, until the user scrolls: edits keep it still, and the
         *  scrollTo goes again after them (_realign) with the same align. */
        this._scrollTarget = null;
        this._scrollAlign = "auto";
        /** How many times the last scrollTo went again after edits. */
        this._realigned = 0;
        this._observer = null;
        this._resyncEndpoint = true;
        if (this._measure && typeof ResizeObserver === "function") {
            this._observer = new ResizeObserver((entries) => this._measured_(entries));
        }
    }

    // MARK: Updates

    /// Queues a viewport update: offset [x, y] and optional {velocity, phase, size, select}.
    /// Consecutive updates of the same phase (dragging, decelerating, idle) are coalesced.
    scroll(offset, { velocity, phase = "idle", size, select } = {}) {
        if (!PHASES.has(phase)) throw new TypeError(`phase must be one of ${[...PHASES].join(", ")}`);
        const update = { offset: [offset[0], offset[1]], phase };
        if (velocity) update.velocity = [velocity[0], velocity[1]];
        if (size) update.size = [size[0], size[1]];
        if (select !== undefined) update.select = select;
        this._enqueue({ kind: "update", body: update });
    }

    /// Queues an update that scrolls to an item: align "start" | "center" | "end" | "auto".
    /// The plan's offset is where the session went; a bound scroller follows it.
    scrollTo(id, align = "auto", { size, select } = {}) {
        const update = { scrollTo: { id, align }, phase: "idle" };
        if (size) update.size = size;
        if (select !== undefined) update.select = select;
        this._enqueue({ kind: "update", body: update, follow: true });
    }

    /// After an edit answered while the item of the last scrollTo is still the target (the user
    /// has not scrolled since): the item was placed at its estimated size, and the measurements
    /// that came in since (its own, those of the items around it) may have left it off its
    /// `align` (an item aligned at its end that grew, or one the edit's anchor moved off screen):
    /// the scrollTo goes again, as TanStack Virtual's scrollToIndex does, until the measurements
    /// stop (each round measures fewer new items) or REALIGN_LIMIT rounds. Not after an edit
    /// that removed the item.
    _realign(message) {
        const id = this._scrollTarget;
        if (id === null || !this._scroller || this._closed) return;
        if (message.body.remove?.includes(id)) { this._scrollTarget = null; return; }
        if (this._realigned >= REALIGN_LIMIT) return;
        if (this._queue.some((m) => m.follow)) return;
        this._realigned += 1;
        this._enqueue({ kind: "update", body: { scrollTo: { id, align: this._scrollAlign }, phase: "idle" }, follow: true, realign: true });
    }

    /// Queues a stack edit (docs/api.md "Stacks and edits": resize, insert, remove, anchor).
    patch(body) { this._enqueue({ kind: "patch", body: { ...body } }); }

    /// Talks to another viewportd from now on: one sharing the store with the first (docs/api.md
    /// "Many instances, one store"), for example when the one in use stopped answering. The
    /// socket is closed and opened again there; a message being tried again (after a 502, 503 or
    /// a refused connection) goes there on its next try, with the same seq. The session may
    /// answer 503 until the lease of an instance that died runs out, then 409 with "resync" if
    /// that instance had not written everything: the client recovers (see the top of this file).
    setBase(base) {
        this._http.base = HTTP.normalize(base);
        const socket = this._socket;
        this._socket = null;
        this.transport = "http";
        this._socketRetryAt = this._options.socket === false ? Infinity : 0;
        // A message waiting on the old instance (which may never answer, nor close) goes again
        // at once, to the new one.
        this._socketLost?.(socket);
        this._http.abort();
        if (socket) { try { socket.close(1000); } catch { /* closed */ } }
    }

    /// The base URL requests go to.
    get base() { return this._http.base; }

    /// The message in flight (the oldest one), or null.
    get _inFlight() { return this._sending ?? this._flight[0]?.message ?? null; }

    /// Resolves once nothing is queued or in flight.
    flush() {
        if ((this._queue.length === 0 || this._closed) && !this._inFlight) return Promise.resolve();
        return new Promise((resolve) => this._idleWaiters.push(resolve));
    }

    _enqueue(message) {
        if (this._closed) return;
        const last = this._queue[this._queue.length - 1];
        if (last && ViewportClient._mergeable(last, message)) {
            ViewportClient._merge(last, message);
            // The merged update may now merge with the one before it (an idle after an idle:
            // a scroll by script ends a "gesture" every frame, drag-begin then idle, and those
            // collapse into one idle while a request is in flight instead of queueing two
            // messages a frame that drain at one a frame).
            while (this._queue.length >= 2) {
                const before = this._queue[this._queue.length - 2];
                const after = this._queue[this._queue.length - 1];
                if (!ViewportClient._mergeable(before, after)) break;
                ViewportClient._merge(before, after);
                this._queue.pop();
            }
        } else if (last && message.kind === "patch" && last.kind === "patch" && !message.body.insert && !message.body.remove
            && !last.body.insert && !last.body.remove && anchorOf(message.body) === anchorOf(last.body)) {
            const sizes = new Map((last.body.resize ?? []).map((r) => [r.id, r]));
            for (const r of message.body.resize ?? []) sizes.set(r.id, r);
            last.body.resize = [...sizes.values()];
        } else {
            this._queue.push(message);
        }
        this._schedule();
    }

    /// Whether queued update `a` can take the place of `b`, queued after it: the same phase
    /// (dragging, decelerating, idle), or `b` is the idle that ends the gesture `a` is part of
    /// (a gesture that began and ended while waiting is sent as where it ended).
    static _mergeable(a, b) {
        if (a.kind !== "update" || b.kind !== "update" || a.follow || b.follow) return false;
        if (a.body.phase === b.body.phase) return MERGEABLE.has(b.body.phase);
        return b.body.phase === "idle" && GESTURE.has(a.body.phase);
    }

    /// `into` becomes `from` (offset, phase, velocity), keeping a `size` or `select` either had.
    static _merge(into, from) {
        const size = from.body.size ?? into.body.size;
        const select = "select" in from.body ? from.body.select : into.body.select;
        into.body = from.body;
        if (size) into.body.size = size;
        if (select !== undefined) into.body.select = select;
    }

    _schedule() {
        if (this._pumpScheduled || this._queue.length === 0 || this._closed) return;
        this._pumpScheduled = true;
        nextFrame(() => { this._pumpScheduled = false; this._pump(); });
    }

    /// Sends what is queued: on the socket, everything, without waiting for answers (in order,
    /// up to MAX_IN_FLIGHT); otherwise one message at a time. A scrollTo (its plan moves the
    /// container) and a message after a failure go alone, once the pipeline is empty.
    _pump() {
        if (this._closed) { this._drop(); return; }
        while (this._queue.length > 0 && !this._sending) {
            const head = this._queue[0];
            if (this._socket !== null && !this._broken && !this._serialNext && !head.follow) {
                if (this._flight.length >= MAX_IN_FLIGHT) return;
                this._sendPipelined(this._queue.shift());
                continue;
            }
            // Answers still due come first (_landed pumps again).
            if (this._flight.length > 0) return;
            this._sendAlone(this._queue.splice(this._nextAlone(), 1)[0]);
            return;
        }
    }

    /// Which queued message goes next when one goes at a time: the first, except that an update
    /// queued behind an edit goes before it when the last one sent was an edit (edits do not
    /// hold scrolling back, scrolling does not starve edits). An update's offset is in the
    /// content as this page has it, which an edit not yet sent has not changed: it may go first.
    _nextAlone() {
        if (this._queue[0].kind !== "patch" || this._lastSerialKind !== "patch") return 0;
        for (let k = 1; k < this._queue.length; k++) {
            const m = this._queue[k];
            if (m.follow) return 0;
            if (m.kind === "update") return k;
        }
        return 0;
    }

    async _sendAlone(message) {
        this._refresh(message);
        this._sending = message;
        this._serialNext = false;
        this._lastSerialKind = message.kind;
        try {
            await this._send(message);
        } catch (error) {
            this._report(error);
        } finally {
            this._sending = null;
        }
        // By POST, the next goes at once: waiting for a frame would add up to one to the round trip.
        if (!this._closed && this._socket === null && this._queue.length > 0) this._pump();
        else this._next();
    }

    /// One message on the socket, not waiting for its answer: its seq follows the last one sent.
    _sendPipelined(message) {
        this._refresh(message);
        const seq = (this._flight.length > 0 ? this._flight[this._flight.length - 1].seq : this.seq) + 1;
        const entry = { message, seq, started: now(), result: null };
        this._flight.push(entry);
        this.stats.messages += 1;
        const body = this._body(message, seq);
        this._socketExchange(message.kind === "patch" ? { patch: body } : body).then(
            (answer) => { entry.result = { answer, ms: now() - entry.started }; },
            (error) => { entry.result = { error }; },
        ).then(() => this._landed());
    }

    /// Applies the answers at the head of the pipeline, in seq order. After one that is not its
    /// plan (a problem, a lost socket), those behind it go again, one at a time first: _send
    /// tries again, recovers after a 409, or reports.
    _landed() {
        while (this._flight.length > 0 && this._flight[0].result !== null) {
            const { message, seq, result } = this._flight.shift();
            const answer = result.answer;
            if (!this._broken && !this._closed && answer && !isProblem(answer) && answer.seq === seq) {
                this._timed(result.ms);
                this._applyPlan(answer, seq, message);
                if (message.kind === "patch") {
                    this._logPatch(seq, message.body);
                    this._remeasureDelay = null;
                }
                continue;
            }
            if (!this._broken && isProblem(answer) && this._refusesRtt(answer)) this._rttField = false;
            this._broken = true;
            this._failed.push(message);
        }
        if (this._flight.length === 0 && this._broken) {
            this._broken = false;
            this._serialNext = true;
            this._queue.unshift(...this._failed.splice(0));
        }
        this._next();
    }

    /// A dragging update about to go out takes the followed container's offset now: a scroll set
    /// by script in this frame (before this animation-frame callback) has its scroll event only
    /// in the next, and the offset it will paint is the one to plan for.
    _refresh(message) {
        if (message.kind !== "update" || message.body.phase !== "dragging" || !message.body.offset) return;
        if (!this._scroller || !this._scrollTracker?.scrolling()) return;
        message.body.offset = this._containerOffset();
    }

    /// After an answer: sends what is queued, or, once nothing is queued or in flight, settles.
    _next() {
        if (this._closed) { this._drop(); return; }
        if (this._queue.length > 0) { this._schedule(); return; }
        if (this._sending || this._flight.length > 0) return;
        if (!this._reconcile()) {
            for (const resolve of this._idleWaiters.splice(0)) resolve();
        }
    }

    /// A message's body with its seq, and for updates the round trip (`rtt`, seconds) once one
    /// was measured, while the server takes the field.
    _body(message, seq) {
        const body = { ...message.body, seq };
        if (message.kind === "update" && this._rttField && this._srtt !== null) {
            // By POST a plan lasts until the next one lands: two round trips.
            // At least a frame of margin: a plan is drawn at a frame, and offsets change at frames.
            const ms = (this._srtt + Math.max(this._rttDeviation, FRAME_MS)) * (this._socket === null ? 2 : 1);
            body.rtt = Math.round(Math.min(RTT_MAX_S * 1000, ms)) / 1000;
        }
        return body;
    }

    /// A 400 or 422 about `rtt`: a server without the field (it refuses fields it does not
    /// know), or a value it refuses. Updates go on without it.
    _refusesRtt(problem) {
        if (problem.status !== 400 && problem.status !== 422) return false;
        return /\brtt\b/.test(`${problem.detail ?? ""} ${problem.title ?? ""} ${problem.pointer ?? ""} ${problem.field ?? ""}`);
    }

    /// A closed client (close(), or its session is gone: 404) sends nothing more: what is queued
    /// is dropped and flush() resolves.
    _drop() {
        this._queue.length = 0;
        if (!this._inFlight) for (const resolve of this._idleWaiters.splice(0)) resolve();
    }

    /// Once nothing is queued or in flight and the user is not scrolling: when the scroll
    /// container is not at the session's offset (a move this client did not see as the user's:
    /// a scroll event it took for its own, a clamp), an idle update tells the session where it
    /// is. Once per position, so a session that answers another offset cannot make it loop.
    /// True when it queued one.
    _reconcile() {
        const s = this._scroller;
        if (!s || this._closed || this._scrollTracker?.scrolling()) return false;
        const at = this._containerOffset();
        if (Math.abs(at[0] - this.offset[0]) < 0.5 && Math.abs(at[1] - this.offset[1]) < 0.5) return false;
        const last = this._reconciledAt;
        if (last && Math.abs(last[0] - at[0]) < 0.5 && Math.abs(last[1] - at[1]) < 0.5) return false;
        this._reconciledAt = at;
        this.stats.reconciled += 1;
        this.scroll(at, { phase: "idle" });
        return true;
    }

    /// Sends one message with the next seq and applies its answer. A 503 or a refused request is
    /// tried again (same seq) after Retry-After; after a 409 the client recovers (resync) and
    /// sends the message again.
    async _send(message) {
        const giveUp = now() + UNAVAILABLE_GIVE_UP_MS;
        let conflicts = 0;
        for (;;) {
            const seq = this.seq + 1;
            const started = now();
            let answer;
            try {
                answer = await this._exchange(message, seq);
            } catch (error) {
                // fetch refused, or no answer in time: no server or proxy answered. The seq
                // makes a retry safe.
                if (this._closed || now() > giveUp) {
                    if (message.kind === "patch") this._remeasureLater();
                    throw error;
                }
                this.stats.unavailable += 1;
                await sleep(RETRY_MIN_MS * 5);
                continue;
            }
            this._timed(now() - started);
            if (!isProblem(answer)) {
                this._applyPlan(answer, seq, message);
                if (message.kind === "patch" && answer.seq === seq) {
                    this._logPatch(seq, message.body);
                    this._remeasureDelay = null;
                }
                // Another writer applied this seq first: the answer was its plan (a retry's
                // answer). It is what the session did, so it was applied; this update goes again.
                const asked = message.kind === "update" ? message.body.offset : null;
                if (asked && answer.offset && conflicts < 2
                    && (Math.abs(asked[0] - answer.offset[0]) > 0.5 || Math.abs(asked[1] - answer.offset[1]) > 0.5)) {
                    this.stats.conflicts += 1;
                    conflicts += 1;
                    continue;
                }
                return;
            }
            if ((answer.status === 503 || answer.status === 502 || answer.status === 504) && !this._closed && now() < giveUp) {
                this.stats.unavailable += 1;
                await sleep(retryDelay(answer));
                continue;
            }
            if (message.kind === "update" && this._rttField && this._refusesRtt(answer)) {
                this._rttField = false;
                continue;
            }
            if (answer.status === 409 && conflicts < 2) {
                conflicts += 1;
                await this._recover(answer);
                continue;
            }
            this.stats.errors += 1;
            // A session that is gone (404), or a token the server no longer takes (401): nothing
            // sent later can succeed. The client closes; onError gets it once.
            if (answer.status === 404 || answer.status === 401) this._closed = true;
            if (message.kind === "patch") {
                // An edit the server refused (422: an id not in a stack) is not sent again for
                // the same sizes; one that failed (5xx) is measured and sent again later.
                if (answer.status >= 500) this._remeasureLater();
                throw new ViewportdError(answer, "patch");
            }
            throw new ViewportdError(answer, "update");
        }
    }

    /// Remembers an applied edit, for a resync that finds the session lost it.
    _logPatch(seq, body) {
        // Pooled views whose last item this edit removed: a resync reports them with "id": null
        // (the session's layout has no such item any more).
        if (body.remove?.length) {
            const removed = new Set(body.remove);
            for (const handles of this._pools.values()) {
                for (const h of handles) { const v = this._views.get(h); if (v && removed.has(v.id)) v.gone = true; }
            }
        }
        this._patchLog.push({ seq, body });
        if (this._patchLog.length > PATCH_LOG) this._patchLogFloor = this._patchLog.shift().seq;
    }

    /// One message out, its answer (a plan or a problem object) back: over the socket when one is
    /// open or can be opened, else by HTTP. A socket that fails mid-message is retried by HTTP
    /// with the same seq, which answers the plan again if the first try was applied.
    async _exchange(message, seq) {
        if (this._socket === null && now() >= this._socketRetryAt) await this._connect();
        const body = this._body(message, seq);
        if (this._socket !== null) {
            try {
                this.stats.messages += 1;
                return await this._socketExchange(message.kind === "patch" ? { patch: body } : body);
            } catch {
                // Fall through to HTTP.
            }
        }
        this.stats.messages += 1;
        const path = message.kind === "patch"
            ? `/v1/sessions/${encodeURIComponent(this.session)}/layout`
            : `/v1/sessions/${encodeURIComponent(this.session)}/viewport`;
        const answer = await this._http.request(message.kind === "patch" ? "PATCH" : "POST", path, body, ANSWER_TIMEOUT_MS);
        if (answer.status === 200 && !isProblem(answer.body)) return answer.body;
        return answer.body && isProblem(answer.body) ? answer.body : { status: answer.status, type: "about:blank", detail: "no problem body" };
    }

    // MARK: WebSocket

    /// Opens the session's socket; on failure updates go by HTTP, and the socket is tried again
    /// a little later.
    _connect() {
        // One attempt at a time: a message queued while the socket opens waits for it.
        this._connecting ??= this._openSocket().finally(() => { this._connecting = null; });
        return this._connecting;
    }

    async _openSocket() {
        if (this._options.socket === false || typeof WebSocket !== "function" || this._closed) return;
        const protocols = ["viewportd.v1"];
        if (this._http.token) protocols.push("bearer." + this._http.token);
        let socket;
        const opening = now();
        try {
            socket = new WebSocket(this._http.socketURL(this.session), protocols);
        } catch (error) {
            if (error?.name === "SyntaxError") {
                // A token that is not a subprotocol token (RFC 6455: no "/", "=", spaces; base64
                // has them) cannot go on the socket: POST only, said once.
                this._socketRetryAt = Infinity;
                this._report(new Error(`the socket cannot be used (${error.message}): updates go by POST`));
                return;
            }
            this._socketRetryAt = now() + SOCKET_RETRY_MS;
            return;
        }
        const opened = await new Promise((resolve) => {
            const timer = setTimeout(() => resolve(false), SOCKET_OPEN_TIMEOUT_MS);
            socket.onopen = () => { clearTimeout(timer); resolve(true); };
            socket.onerror = () => { clearTimeout(timer); resolve(false); };
            socket.onclose = () => { clearTimeout(timer); resolve(false); };
        });
        if (!opened) {
            try { socket.close(); } catch { /* already closed */ }
            this._socketRetryAt = now() + SOCKET_RETRY_MS;
            this.transport = "http";
            return;
        }
        // The handshake is a round trip: the first estimate, before any update is answered.
        if (this._srtt === null) this._timed(now() - opening);
        // Each socket answers its own messages, in order.
        const waiters = [];
        socket.onmessage = (event) => {
            const waiter = waiters.shift();
            if (!waiter) return;
            try { waiter.resolve(JSON.parse(event.data)); } catch (error) { waiter.reject(error); }
        };
        const lost = () => {
            for (const waiter of waiters.splice(0)) waiter.reject(new Error("socket closed"));
            // A socket that setBase (or a newer socket) replaced: nothing else to do.
            if (this._socket !== socket) return;
            this._socket = null;
            this.transport = "http";
            this._socketRetryAt = now() + SOCKET_RETRY_MS;
        };
        socket.onclose = lost;
        socket.onerror = lost;
        this._socketLost = (which) => { if (which === socket) lost(); };
        this._socket = socket;
        this._socketWaiters = waiters;
        this.transport = "socket";
    }

    /// One message on the socket and its answer. Not answered within ANSWER_TIMEOUT_MS, the
    /// socket is given up (its answers would come out of order): the message goes by HTTP.
    _socketExchange(body) {
        const socket = this._socket;
        return new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
                this._socketLost?.(socket);
                try { socket.close(1000); } catch { /* closed */ }
            }, ANSWER_TIMEOUT_MS);
            const done = (f) => (value) => { clearTimeout(timer); f(value); };
            this._socketWaiters.push({ resolve: done(resolve), reject: done(reject) });
            try { socket.send(JSON.stringify(body)); } catch (error) { this._socketWaiters.pop(); clearTimeout(timer); reject(error); }
        });
    }

    // MARK: 409 and resync

    /// After a 409: the session is at `problem.seq`, not at this page's seq.
    ///
    /// Behind this page (`"resync": true`: its instance died before writing the last updates),
    /// the session has lost the edits this page made since: they are sent again first, so that
    /// its layout is the one this page's views show, then this page's views are posted
    /// (POST …/resync) and the session continues at this page's seq. Ahead of it (another
    /// writer), the views are posted at the session's seq. Without the resync endpoint, the
    /// page continues at the session's seq and repairs its views from its state.
    async _recover(problem) {
        this.stats.conflicts += 1;
        const sessionSeq = typeof problem.seq === "number" ? problem.seq : this.seq;
        if (this._options.resync !== false) {
            let complete = true;
            if (problem.resync === true && sessionSeq < this.seq) complete = await this._replayLost(sessionSeq);
            if (await this._resync(Math.max(this.seq, sessionSeq))) {
                if (!complete) this._remeasure();
                return;
            }
        }
        this.seq = sessionSeq;
        const answer = await this._request("GET", `/v1/sessions/${encodeURIComponent(this.session)}`);
        if (answer.status === 200) this._repairFrom(answer.body);
    }

    /// Sends again, in order, the edits this page made after `sessionSeq` (the session's seq).
    /// Their plans are about the session's restored views, not this page's, so they are not
    /// applied: the resync that follows replaces those views. False when some of the lost edits
    /// are no longer in the log.
    async _replayLost(sessionSeq) {
        let seq = sessionSeq;
        for (const entry of this._patchLog) {
            if (entry.seq <= sessionSeq) continue;
            const answer = await this._exchangeRetrying({ kind: "patch", body: entry.body }, seq + 1);
            if (isProblem(answer)) {
                this._report(new ViewportdError(answer, "resync: an edit sent again"));
                break;
            }
            seq = answer.seq;
            this.stats.replayed += 1;
        }
        return sessionSeq >= this._patchLogFloor;
    }

    /// After a measurement edit failed (a 5xx, no answer): the sizes it carried are marked sent
    /// and the ResizeObserver sees no change to report, so the session would keep the estimates
    /// (rows overlapping) for good. They are measured and sent again after REMEASURE_MIN_MS,
    /// doubling while that fails too; an edit answered resets it.
    _remeasureLater() {
        if (!this._observer || this._closed || this._remeasureTimer) return;
        const delay = this._remeasureDelay ?? REMEASURE_MIN_MS;
        this._remeasureDelay = Math.min(delay * 2, REMEASURE_MAX_MS);
        this._remeasureTimer = setTimeout(() => {
            this._remeasureTimer = null;
            if (!this._closed) this._remeasure();
        }, delay);
    }

    /// After a resync that could not send every lost edit again: the sizes of the shown views go
    /// out again, measured afresh.
    _remeasure() {
        if (!this._observer) return;
        this._measured.clear();
        const resize = [];
        for (const [handle, v] of this._views) {
            if (!v.shown || !this._measures(v)) continue;
            const box = this._natural(handle, v);
            if (box && (box[0] > 0 || box[1] > 0)) resize.push({ id: v.id, size: box });
        }
        if (resize.length > 0) this.patch({ resize, anchor: "visible" });
    }

    /// One HTTP request, tried again after a 503 or a refused connection (see _send).
    async _request(method, path, body) {
        const giveUp = now() + UNAVAILABLE_GIVE_UP_MS;
        for (;;) {
            let answer;
            try {
                answer = await this._http.request(method, path, body, ANSWER_TIMEOUT_MS);
            } catch (error) {
                if (now() > giveUp) throw error;
                this.stats.unavailable += 1;
                await sleep(RETRY_MIN_MS * 5);
                continue;
            }
            if ((answer.status === 503 || answer.status === 502 || answer.status === 504) && now() < giveUp) {
                this.stats.unavailable += 1;
                await sleep(retryDelay(answer.body));
                continue;
            }
            return answer;
        }
    }

    /// _exchange, tried again after a 503 or a refused connection.
    async _exchangeRetrying(message, seq) {
        const giveUp = now() + UNAVAILABLE_GIVE_UP_MS;
        for (;;) {
            let answer;
            try {
                answer = await this._exchange(message, seq);
            } catch (error) {
                if (now() > giveUp) throw error;
                this.stats.unavailable += 1;
                await sleep(RETRY_MIN_MS * 5);
                continue;
            }
            if (isProblem(answer) && (answer.status === 503 || answer.status === 502 || answer.status === 504) && now() < giveUp) {
                this.stats.unavailable += 1;
                await sleep(retryDelay(answer));
                continue;
            }
            return answer;
        }
    }

    /// POST /v1/sessions/{id}/resync with this page's views; false when the server has no such
    /// endpoint. docs/api.md "Many instances, one store".
    async _resync(seq) {
        const visible = [];
        for (const [handle, v] of this._views) if (v.shown) visible.push({ id: v.id, view: handle });
        const pool = {};
        for (const [reuse, handles] of this._pools) {
            if (handles.length > 0) pool[reuse] = handles.map((h) => { const v = this._views.get(h); return { view: h, id: v.gone ? null : v.id }; });
        }
        return this._resyncWith(seq, visible, pool);
    }

    async _resyncWith(seq, visible, pool) {
        if (!this._resyncEndpoint || this._options.resync === false) return false;
        const body = { seq, offset: this.offset, visible, pool };
        if (this.viewport) body.viewport = this.viewport;
        const answer = await this._request("POST", `/v1/sessions/${encodeURIComponent(this.session)}/resync`, body);
        if (answer.status === 200 && answer.body && !isProblem(answer.body)) {
            this.seq = answer.body.seq ?? seq;
            this.stats.resyncs += 1;
            return true;
        }
        // 405, or a 404 while the session itself still answers: the endpoint does not exist.
        if (answer.status === 405 || answer.status === 404) {
            const state = await this._request("GET", `/v1/sessions/${encodeURIComponent(this.session)}`);
            if (state.status === 200) { this._resyncEndpoint = false; return false; }
        }
        throw new ViewportdError(answer.body ?? { status: answer.status }, "resync");
    }

    /// Makes this page's views agree with a session state as far as it can without rects: views
    /// the session no longer has are released, shown views it has pooled are hidden.
    _repairFrom(state) {
        const visible = new Map(state.visible.map((e) => [e.view, e.id]));
        const pooled = new Set(Object.values(state.pool ?? {}).flat());
        for (const [handle, v] of [...this._views]) {
            if (visible.get(handle) === v.id && v.shown) continue;
            if (pooled.has(handle)) {
                if (v.shown) this._hide(handle, v);
                continue;
            }
            this._release(handle, v);
            this.stats.repaired += 1;
        }
        this._pools.clear();
        for (const [reuse, handles] of Object.entries(state.pool ?? {})) {
            this._pools.set(reuse, handles.filter((h) => this._views.has(h)));
        }
    }

    /// Takes over the views the session has and the page still holds: from a previous client of
    /// this session (everything it knew: reuse identifiers, rects, last items), or from a map of
    /// handle -> view (the rest comes from the state; rects with the next plans).
    _adoptState(state, adopt) {
        const known = adopt instanceof ViewportClient ? adopt._views : null;
        const viewOf = (handle) => (known ? known.get(handle)?.view : adopt.get(handle));
        for (const entry of state.visible) {
            const view = viewOf(entry.view);
            if (view === undefined) continue;
            const before = known?.get(entry.view);
            this._views.set(entry.view, { view, id: entry.id, reuse: before?.reuse ?? null, rect: before?.rect ?? null, shown: true, pinned: before?.pinned ?? false });
            this._shownByItem.set(entry.id, entry.view);
            this._observe(this._views.get(entry.view));
        }
        for (const [reuse, handles] of Object.entries(state.pool ?? {})) {
            const kept = [];
            for (const handle of handles) {
                const view = viewOf(handle);
                if (view === undefined) continue;
                this._views.set(handle, { view, id: known?.get(handle)?.id ?? null, reuse, rect: null, shown: false, pinned: false });
                kept.push(handle);
            }
            this._pools.set(reuse, kept);
        }
        this._count();
    }

    // MARK: Plans

    /// Applies a plan to the views; `message` is what it answers (nil for the opening plan). After
    /// an edit, the scroll container moves by the offset the anchor shifted; after a scrollTo, it
    /// goes to the plan's offset.
    _applyPlan(plan, expectedSeq, message) {
        if (plan.seq !== expectedSeq && plan.seq !== this.seq) {
            this._report(new Error(`plan seq ${plan.seq}, expected ${expectedSeq}`));
        }
        const previousOffset = this.offset;
        // Before an edit's plan moves the views (and its content size clamps the container): where
        // the container is, and the views on screen, the first of which must stay put.
        const anchor = message?.kind === "patch" && this._scroller ? this._screenAnchor() : null;
        const cb = this._cb;
        for (const e of plan.recycle ?? []) {
            const v = this._views.get(e.view);
            if (!v || !v.shown) { this.stats.repaired += 1; if (!v) continue; }
            this._hide(e.view, v);
            this.stats.recycled += 1;
        }
        for (const e of plan.discard ?? []) {
            const v = this._views.get(e.view);
            if (!v) { this.stats.repaired += 1; continue; }
            this._release(e.view, v);
            this.stats.discarded += 1;
        }
        for (const e of plan.reuse ?? []) {
            const v = this._views.get(e.view);
            if (!v) {
                // A pooled view this page does not have (after a repair): make it.
                this.stats.repaired += 1;
                this._create({ id: e.id, view: e.view, rect: e.rect, selected: e.selected });
                continue;
            }
            const pool = this._pools.get(v.reuse);
            if (pool) { const k = pool.indexOf(e.view); if (k >= 0) pool.splice(k, 1); }
            if (v.shown && v.id !== e.id) this._shownByItem.delete(v.id);
            v.id = e.id;
            v.gone = false;
            v.rect = e.rect;
            v.shown = true;
            v.pinned = false;
            v.held = false;
            this._shownByItem.set(e.id, e.view);
            const entry = { id: e.id, view: e.view, reuse: v.reuse, rect: e.rect, rebind: e.rebind, selected: e.selected === true };
            if (e.rebind) cb.bind(v.view, entry);
            cb.show(v.view, entry);
            this._observe(v);
            this.stats.reused += 1;
            if (!e.rebind) this.stats.rebindFree += 1;
        }
        for (const e of plan.create ?? []) {
            const old = this._views.get(e.view);
            if (old) { this.stats.repaired += 1; this._release(e.view, old); }
            this._create(e);
            this.stats.created += 1;
        }
        for (const e of plan.move ?? []) this._place(e, cb.move, false);
        for (const e of plan.unpin ?? []) this._place(e, cb.unpin ?? cb.move, false);
        for (const e of plan.pin ?? []) this._place(e, cb.pin ?? cb.move, true);
        if (plan.recenter) this._recenter(plan.recenter);
        if (plan.contentSize) {
            this.contentSize = plan.contentSize;
            cb.contentSize?.(plan.contentSize);
        }
        if (plan.load && cb.load) {
            for (const id of plan.load) {
                const handle = this._shownByItem.get(id);
                cb.load(handle === undefined ? null : this._views.get(handle).view, { id, view: handle ?? null });
            }
        }
        if (plan.enter && cb.enter) cb.enter(plan.enter);
        if (plan.leave && cb.leave) cb.leave(plan.leave);
        if (plan.prefetch && cb.prefetch) cb.prefetch(plan.prefetch);
        if (plan.cancelPrefetch && cb.cancelPrefetch) cb.cancelPrefetch(plan.cancelPrefetch);
        this.offset = plan.recenter ? [plan.offset[0] + plan.recenter[0], plan.offset[1] + plan.recenter[1]] : plan.offset;
        this.seq = plan.seq;
        if (message?.kind === "patch" && previousOffset) {
            const visible = anchorOf(message.body) === "visible";
            if (!visible) {
                // "end" (a chat following new messages) or "none": the session's offset is the
                // one the edit asked for, and the container follows it, not what was on screen.
                this._scrollTarget = null;
                if (anchor) anchor.views = [];
            }
            this._shiftScroller(previousOffset, plan.offset, anchor);
            if (visible) this._realign(message);
        } else if (message?.follow) {
            const to = message.body.scrollTo;
            const again = to && this._scrollTarget === to.id && this._scrollAlign === to.align;
            // A scrollTo sent again after edits (_realign) while the user scrolled away since
            // does not take the container back: the next update moves the session to it.
            if (!message.realign || again) {
                // A loop session's plan may recenter: the container goes to the offset after it.
                this._follow(this.offset);
                // Until the user scrolls, edits keep this item still rather than the first on
                // screen: measurements of the items around it do not move what was scrolled to.
                this._scrollTarget = to?.id ?? null;
                this._scrollAlign = to?.align ?? "auto";
                if (!message.realign) this._realigned = 0;
            }
        }
        this._measureEntering(plan);
        this.stats.plans += 1;
        this._count();
        const t = now();
        this._planTimes.push(t);
        while (this._planTimes.length > 0 && this._planTimes[0] < t - 1000) this._planTimes.shift();
        this.stats.plansPerSecond = this._planTimes.length;
        this._options.onPlan?.(plan, this);
    }

    _create(e) {
        const entry = { id: e.id, view: e.view, reuse: e.reuse ?? null, rect: e.rect, selected: e.selected === true };
        const view = this._cb.create(entry);
        const v = { view, id: e.id, reuse: e.reuse ?? null, rect: e.rect, shown: true, pinned: false };
        this._views.set(e.view, v);
        this._shownByItem.set(e.id, e.view);
        this._observe(v);
        return v;
    }

    _hide(handle, v) {
        if (v.shown && this._shownByItem.get(v.id) === handle) this._shownByItem.delete(v.id);
        v.shown = false;
        v.pinned = false;
        this._unobserve(v);
        if (v.reuse !== null) {
            if (!this._pools.has(v.reuse)) this._pools.set(v.reuse, []);
            const pool = this._pools.get(v.reuse);
            const k = pool.indexOf(handle);
            if (k >= 0) pool.splice(k, 1);
            pool.push(handle);
        }
        this._cb.hide(v.view, { id: v.id, view: handle, reuse: v.reuse });
    }

    _release(handle, v) {
        if (v.shown && this._shownByItem.get(v.id) === handle) this._shownByItem.delete(v.id);
        this._unobserve(v);
        const pool = this._pools.get(v.reuse);
        if (pool) { const k = pool.indexOf(handle); if (k >= 0) pool.splice(k, 1); }
        this._views.delete(handle);
        this._cb.release(v.view, { id: v.id, view: handle, reuse: v.reuse });
    }

    _place(e, callback, pinned) {
        const v = this._views.get(e.view);
        if (!v) { this.stats.repaired += 1; return; }
        v.rect = e.rect;
        v.pinned = pinned;
        v.held = this._holds(v);
        const entry = { id: e.id, view: e.view, reuse: v.reuse, rect: e.rect, pinned, hold: v.held };
        (callback ?? this._cb.show)(v.view, entry);
        this.stats.moved += 1;
    }

    /// Loop sessions: the content offset and every shown view move by `delta`; the picture does
    /// not change.
    _recenter(delta) {
        for (const [handle, v] of this._views) {
            if (!v.shown || !v.rect) continue;
            v.rect = [v.rect[0] + delta[0], v.rect[1] + delta[1], v.rect[2], v.rect[3]];
            if (!this._cb.recenter) {
                (this._cb.move ?? this._cb.show)(v.view, { id: v.id, view: handle, reuse: v.reuse, rect: v.rect, pinned: v.pinned });
            }
        }
        this._cb.recenter?.(delta);
        if (this._scroller) {
            const at = this._containerOffset();
            this._setContainer([at[0] + delta[0], at[1] + delta[1]]);
        }
    }

    _count() {
        this.stats.alive = this._views.size;
        this.stats.shown = this._shownByItem.size;
    }

    _timed(ms) {
        this.stats.rtt = ms;
        this.stats.rttAverage = this.stats.rttAverage === 0 ? ms : this.stats.rttAverage * 0.9 + ms * 0.1;
        if (this._srtt === null) {
            this._srtt = ms;
            this._rttDeviation = ms / 2;
        } else {
            this._rttDeviation += RTT_DEVIATION_GAIN * (Math.abs(ms - this._srtt) - this._rttDeviation);
            this._srtt += RTT_GAIN * (ms - this._srtt);
        }
    }

    _report(error) {
        if (this._options.onError) this._options.onError(error, this);
        else console.warn("viewportd:", error);
    }

    /// Every view this client holds, by handle (shown or pooled): what attachSession's
    /// `views.adopt` takes.
    viewsByHandle() {
        return new Map([...this._views].map(([handle, v]) => [handle, v.view]));
    }

    /// Shown views, by item id: {view handle, view, rect}.
    shownViews() {
        const out = [];
        for (const [id, handle] of this._shownByItem) {
            const v = this._views.get(handle);
            out.push({ id, handle, view: v.view, rect: v.rect });
        }
        return out;
    }

    // MARK: Measuring (docs/api.md "Stacks and edits")

    _element(v) {
        if (this._options.element) return this._options.element(v.view);
        return typeof Element === "function" && v.view instanceof Element ? v.view : null;
    }

    /// Whether a view's item is measured (`measure`: true, or the application's predicate).
    _measures(v) {
        if (this._measure === true) return true;
        return typeof this._measure === "function" && v.id !== null && this._measure(v.id, v.reuse) === true;
    }

    _observe(v) {
        if (!this._observer || !this._measures(v)) return;
        const element = this._element(v);
        if (element) { element.__viewportdHandle = v; this._observer.observe(element); }
    }

    _unobserve(v) {
        if (!this._observer) return;
        const element = this._element(v);
        if (element) this._observer.unobserve(element);
    }

    /// A measured view that is shorter than its rect, its size sent and not yet in a plan: it
    /// holds the rect's height meanwhile (no gap under it).
    _holds(v) {
        const sent = v.shown && v.rect ? this._measured.get(v.id) : undefined;
        return sent !== undefined && sent[1] < v.rect[3] - MEASURE_EPSILON && this._measures(v);
    }

    /// A shown view's own size [w, h] (its element's border box), without a hold; null without
    /// an element.
    _natural(handle, v) {
        const element = this._element(v);
        if (!element) return null;
        if (v.held) {
            v.held = false;
            (this._cb.move ?? this._cb.show)(v.view, { id: v.id, view: handle, reuse: v.reuse, rect: v.rect, pinned: v.pinned, hold: false });
        }
        const box = element.getBoundingClientRect();
        return [box.width, box.height];
    }

    /// The measured views that a plan made or reused are measured at once (one layout), and the
    /// sizes that differ from their rects go out as one edit, in this task rather than at the
    /// ResizeObserver's turn; those shorter than their rect hold its height until a plan gives
    /// them their size, so the screen is full as soon as the plan is applied.
    _measureEntering(plan) {
        if (!this._observer || (!plan.create && !plan.reuse)) return;
        const entering = [];
        for (const e of [...(plan.create ?? []), ...(plan.reuse ?? [])]) {
            const v = this._views.get(e.view);
            if (v && v.shown && v.rect && v.id === e.id && this._measures(v)) entering.push([e.view, v]);
        }
        // Every size first, then the holds: one layout, not one per view.
        const boxes = entering.map(([handle, v]) => this._natural(handle, v));
        const resize = [];
        entering.forEach(([handle, v], k) => {
            const box = boxes[k];
            if (!box || (box[0] === 0 && box[1] === 0)) return;
            const [w, h] = box;
            if (Math.abs(w - v.rect[2]) <= MEASURE_EPSILON && Math.abs(h - v.rect[3]) <= MEASURE_EPSILON) return;
            const sent = this._measured.get(v.id);
            if (!sent || Math.abs(sent[0] - w) > MEASURE_EPSILON || Math.abs(sent[1] - h) > MEASURE_EPSILON) {
                this._measured.set(v.id, [w, h]);
                resize.push({ id: v.id, size: [w, h] });
            }
            if (this._holds(v)) {
                v.held = true;
                (this._cb.move ?? this._cb.show)(v.view, { id: v.id, view: handle, reuse: v.reuse, rect: v.rect, pinned: v.pinned, hold: true });
            }
        });
        if (resize.length > 0) {
            this.stats.patches += 1;
            this.patch({ resize, anchor: "visible" });
        }
    }

    /// ResizeObserver (it runs after layout, before paint): a shown view whose box differs from
    /// its rect is measured; the sizes of one frame go out as one edit,
    /// `{"patch": {"resize": [...], "anchor": "visible"}}`, merged per item with an edit still
    /// queued. A size already sent and not yet answered is not sent twice.
    _measured_(entries) {
        const resize = [];
        for (const entry of entries) {
            const v = entry.target.__viewportdHandle;
            if (!v || !v.shown || !v.rect || v.held || !this._measures(v)) continue;
            const box = entry.borderBoxSize?.[0];
            const w = box ? box.inlineSize : entry.target.offsetWidth;
            const h = box ? box.blockSize : entry.target.offsetHeight;
            if (w === 0 && h === 0) continue;
            if (Math.abs(w - v.rect[2]) <= MEASURE_EPSILON && Math.abs(h - v.rect[3]) <= MEASURE_EPSILON) continue;
            const sent = this._measured.get(v.id);
            if (sent && Math.abs(sent[0] - w) <= MEASURE_EPSILON && Math.abs(sent[1] - h) <= MEASURE_EPSILON) continue;
            this._measured.set(v.id, [w, h]);
            resize.push({ id: v.id, size: [w, h] });
        }
        if (resize.length > 0) {
            this.stats.patches += 1;
            this.patch({ resize, anchor: "visible" });
        }
    }

    // MARK: Following a scroll container

    /// Follows a scroll container: each scroll event queues an update with a velocity (drag-begin
    /// for the first after a rest, then dragging), an idle update once scrolling stops, and an
    /// update with `size` when the container resizes. Returns a function that stops following.
    bindScroller(element) {
        this._scroller = element;
        this._exactScroll = null;
        let last = null;
        let idleTimer = null;
        let velocity = [0, 0];
        // Where the container rested: the first step of a motion is from there.
        let rested = [element.scrollLeft, element.scrollTop];
        const onScroll = () => {
            const t = now();
            const offset = [element.scrollLeft, element.scrollTop];
            const expected = this._expectedScroll;
            this._expectedScroll = null;
            // Our own scroll (scrollTo's offset, an edit's anchor, a recenter): the session knows.
            if (expected && Math.abs(offset[0] - expected[0]) < 0.5 && Math.abs(offset[1] - expected[1]) < 0.5) return;
            this._scrollTarget = null;
            this._exactScroll = null;
            let phase = "dragging";
            let moved = false;
            if (last === null) {
                phase = "drag-begin";
                // The step from rest, over one frame (scroll events come once a frame): the first
                // plan of a motion looks ahead already, not the second one.
                velocity = [(offset[0] - rested[0]) * 1000 / FRAME_MS, (offset[1] - rested[1]) * 1000 / FRAME_MS];
            } else {
                const dt = (t - last.t) / 1000;
                if (dt > 0) {
                    const v = [(offset[0] - last.offset[0]) / dt, (offset[1] - last.offset[1]) / dt];
                    // The first step of a motion is its velocity; then an average with the last.
                    velocity = last.moved ? [velocity[0] * 0.5 + v[0] * 0.5, velocity[1] * 0.5 + v[1] * 0.5] : v;
                }
                moved = true;
            }
            last = { t, offset, moved };
            this.scroll(offset, { phase, velocity: velocity.map((x) => Math.round(x)) });
            clearTimeout(idleTimer);
            idleTimer = setTimeout(rest, IDLE_AFTER_MS);
        };
        const rest = () => {
            clearTimeout(idleTimer);
            if (last === null) return;
            last = null;
            velocity = [0, 0];
            rested = [element.scrollLeft, element.scrollTop];
            this.scroll(rested, { phase: "idle" });
        };
        this._scrollTracker = {
            // The container moved by `delta` under the user's scroll (an edit's anchor).
            shift(delta) { if (last) last.offset = [last.offset[0] + delta[0], last.offset[1] + delta[1]]; },
            // Whether the user is scrolling (no rest since the last scroll event).
            scrolling() { return last !== null; },
            // The scroll's velocity, as the last dragging update carried it.
            velocity() { return velocity.map((x) => Math.round(x)); },
        };
        element.addEventListener("scroll", onScroll, { passive: true });
        const ended = () => {
            clearTimeout(idleTimer);
            idleTimer = setTimeout(rest, SCROLLEND_REST_MS);
        };
        element.addEventListener("scrollend", ended);
        let resizeObserver = null;
        if (typeof ResizeObserver === "function") {
            resizeObserver = new ResizeObserver(() => {
                const size = [element.clientWidth, element.clientHeight];
                if (this.viewport && size[0] === this.viewport[0] && size[1] === this.viewport[1]) return;
                this.viewport = size;
                this.scroll(this._containerOffset(), { phase: "idle", size });
            });
            resizeObserver.observe(element);
        }
        const unbind = () => {
            element.removeEventListener("scroll", onScroll);
            element.removeEventListener("scrollend", ended);
            resizeObserver?.disconnect();
            clearTimeout(idleTimer);
            if (this._scroller === element) { this._scroller = null; this._scrollTracker = null; }
        };
        this._unbindScroller = unbind;
        return unbind;
    }

    /// After a scrollTo: the scroll container goes where the session went.
    _follow(offset) {
        if (!this._scroller || !offset) return;
        this._scrollContainerTo(offset);
    }

    /// Where the scroll container is and the shown views on screen there, in the order they
    /// should stay still through an edit: the item last scrolled to (client.scrollTo) until the
    /// user scrolls, then from the top (then the left; pinned headers aside). Candidates after the
    /// first serve when an edit takes the first away. {at: [x, y], views: [{handle, id, rect}]}.
    /// - Complexity: O(v log v) for v views.
    _screenAnchor() {
        const s = this._scroller;
        // While the user scrolls, from where the container is: what is on screen stays put to
        // half a pixel (a fling in CI moved a post 1.5 px when edits started from the unrounded
        // offset, 5.2M px down); at rest, from the unrounded offset, so roundings do not add up.
        const [x, y] = this._scrollTracker?.scrolling() ? [s.scrollLeft, s.scrollTop] : this._containerOffset();
        const w = s.clientWidth, h = s.clientHeight;
        const views = [];
        for (const [handle, v] of this._views) {
            const r = v.rect;
            if (!v.shown || v.pinned || !r) continue;
            if (r[0] < x + w && r[0] + r[2] > x && r[1] < y + h && r[1] + r[3] > y) views.push({ handle, id: v.id, rect: r });
        }
        const target = this._scrollTarget;
        views.sort((a, b) => (b.id === target) - (a.id === target) || a.rect[1] - b.rect[1] || a.rect[0] - b.rect[0]);
        return { at: [x, y], container: [s.scrollLeft, s.scrollTop], views };
    }

    /// After an edit: the session moved its offset from `before` to `after` to keep the first
    /// item on screen where it was (anchor "visible"), and the views moved with the edit; the
    /// scroll container moves in the same task, so nothing on screen moves. It moves by as much
    /// as the first view of `anchor` that is still shown (the session anchored where its offset
    /// was, which lags the container while the user scrolls), from where it was before the plan
    /// (a smaller content size may have clamped it since), and the queued offsets move with it.
    /// When the container was at the session's offset and both agree, it goes to the session's
    /// new offset exactly.
    _shiftScroller(before, after, anchor) {
        const s = this._scroller;
        if (!s || !anchor) return;
        const server = [after[0] - before[0], after[1] - before[1]];
        let delta = server;
        for (const a of anchor.views) {
            const v = this._views.get(a.handle);
            if (!v || !v.shown || v.id !== a.id || !v.rect) continue;
            delta = [v.rect[0] - a.rect[0], v.rect[1] - a.rect[1]];
            break;
        }
        const at = anchor.at;
        const unmoved = Math.abs(delta[0]) < MEASURE_EPSILON && Math.abs(delta[1]) < MEASURE_EPSILON;
        if (unmoved && s.scrollLeft === anchor.container[0] && s.scrollTop === anchor.container[1]
            && Math.abs(server[0]) < MEASURE_EPSILON && Math.abs(server[1]) < MEASURE_EPSILON) return;
        const settled = Math.abs(at[0] - before[0]) < 0.5 && Math.abs(at[1] - before[1]) < 0.5;
        // The session's anchor is this page's: the container goes to the session's offset.
        const exact = settled && Math.abs(delta[0] - server[0]) < 0.5 && Math.abs(delta[1] - server[1]) < 0.5;
        const queued = this._queue.length;
        if (exact) {
            this._scrollContainerTo(after);
        } else {
            // From where this page meant the container to be, not where the browser rounded it
            // to: roundings do not add up over a run of edits.
            this._setContainer([at[0] + delta[0], at[1] + delta[1]]);
        }
        const now_ = this._containerOffset();
        // Offsets queued before the plan were taken in the content as it was: they move too, and
        // one taken where the container was is where the container is now.
        const near = (a, b) => Math.abs(a[0] - b[0]) < 0.5 && Math.abs(a[1] - b[1]) < 0.5;
        for (const message of this._queue.slice(0, queued)) {
            const offset = message.kind === "update" ? message.body.offset : null;
            if (!offset) continue;
            message.body.offset = near(offset, at) || near(offset, anchor.container)
                ? now_ : [offset[0] + delta[0], offset[1] + delta[1]];
        }
        this._scrollTracker?.shift(delta);
        // The container's scroll event for this is ignored as ours: the session learns where
        // the container is from this update (merged with a queued one of the same phase). While
        // the user scrolls it keeps the scroll's velocity: without one the session would stop
        // looking ahead for that plan.
        if (!exact) {
            const tracker = this._scrollTracker;
            this.scroll(now_, tracker?.scrolling() ? { phase: "dragging", velocity: tracker.velocity() } : { phase: "idle" });
        }
    }

    /// Sets the scroll container to the session's offset. The browser may clamp it to the
    /// content: then an update tells the session where the container really is.
    _scrollContainerTo(offset) {
        // The session keeps the exact offset, so roundings do not add up over many edits; told
        // only when the browser clamped it.
        if (this._setContainer(offset)) this.scroll(this._containerOffset(), { phase: "idle" });
    }

    /// Moves the scroll container to `offset` and remembers it unrounded: while the container
    /// stays where the browser put it, `_containerOffset()` answers `offset`. The browser rounds
    /// to whole pixels (half a point off, a little more past a million points, where its 32-bit
    /// floats lose the fraction); a point or more off, it clamped to the content: then where it
    /// is counts. Returns whether it clamped.
    _setContainer(offset) {
        const s = this._scroller;
        s.scrollLeft = offset[0];
        s.scrollTop = offset[1];
        const at = [s.scrollLeft, s.scrollTop];
        const clamped = Math.abs(at[0] - offset[0]) >= 1 || Math.abs(at[1] - offset[1]) >= 1;
        this._expectedScroll = at;
        this._exactScroll = { exact: clamped ? at : [offset[0], offset[1]], at };
        return clamped;
    }

    /// Where the scroll container is: the offset this page last gave it, unrounded, while it is
    /// still where the browser put it then; else where it is.
    _containerOffset() {
        const s = this._scroller;
        const at = [s.scrollLeft, s.scrollTop];
        const e = this._exactScroll;
        return e && e.at[0] === at[0] && e.at[1] === at[1] ? e.exact : at;
    }

    /// Stops following the scroll container and closes the socket; with {end: true} also ends
    /// the session (DELETE /v1/sessions/{id}). The views stay as they are (attachSession can
    /// adopt them).
    async close({ end = false } = {}) {
        this._closed = true;
        clearTimeout(this._remeasureTimer);
        this._remeasureTimer = null;
        this._drop();
        this._unbindScroller?.();
        this._observer?.disconnect();
        if (this._socket) { try { this._socket.close(1000); } catch { /* closed */ } this._socket = null; }
        if (end) await this._http.request("DELETE", `/v1/sessions/${encodeURIComponent(this.session)}`);
    }
}

/// Callbacks for views that are absolutely positioned elements in `content` (a positioned,
/// sized element inside the scroll container). `render(element, entry)` fills an element for
/// an item (called on create and on every rebind); `measure` (true, or a function of the entry:
/// {id, reuse}) leaves the height of those items to their content, for stack items measured with
/// openSession's `measure` (at least the rect's while the entry says `hold`). Every element carries data-view (its handle) and, while shown,
/// data-item-id.
export function domViews(content, { render, tag = "div", className = "viewportd-item", measure = false, onCreate, onRelease } = {}) {
    const measured = (entry) => measure === true || (typeof measure === "function" && measure(entry) === true);
    const place = (element, entry) => {
        const rect = entry.rect;
        element.style.transform = `translate(${rect[0]}px, ${rect[1]}px)`;
        element.style.width = `${rect[2]}px`;
        element.style.height = measured(entry) ? "" : `${rect[3]}px`;
        // A measured item shorter than its rect, until the session has its size: no gap under it
        // (the page's own min-height, if any, comes back after).
        if (measured(entry) && entry.hold === true) {
            element.__viewportdMinHeight ??= element.style.minHeight;
            element.style.minHeight = `${rect[3]}px`;
        } else {
            unhold(element);
        }
    };
    const unhold = (element) => {
        if (element.__viewportdMinHeight === undefined) return;
        element.style.minHeight = element.__viewportdMinHeight;
        element.__viewportdMinHeight = undefined;
    };
    return {
        create(entry) {
            const element = document.createElement(tag);
            element.className = className;
            element.style.position = "absolute";
            element.style.left = "0";
            element.style.top = "0";
            element.dataset.view = String(entry.view);
            element.dataset.itemId = entry.id;
            if (entry.reuse) element.dataset.reuse = entry.reuse;
            if (entry.rect) place(element, entry);
            render?.(element, entry);
            content.appendChild(element);
            onCreate?.(element, entry);
            return element;
        },
        bind(element, entry) {
            element.dataset.itemId = entry.id;
            unhold(element);
            render?.(element, entry);
        },
        show(element, entry) {
            element.dataset.itemId = entry.id;
            element.style.display = "";
            place(element, entry);
        },
        hide(element) {
            element.style.display = "none";
            delete element.dataset.itemId;
        },
        release(element, entry) {
            element.remove();
            onRelease?.(element, entry);
        },
        move(element, entry) { place(element, entry); },
        contentSize(size) {
            content.style.width = `${size[0]}px`;
            content.style.height = `${size[1]}px`;
        },
    };
}
