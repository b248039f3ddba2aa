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
// Entries passed to callbacks: {id, view (the handle), reuse, rect, rebind?, selected?, pinned?}.
//
// recycle and discard are applied before reuse and create (a view recycled in a plan may be
// reused by the same plan). At most one message is in flight, and at most one is sent per
// animation frame: offsets given while one is in flight are coalesced into the next.
//
// Two features follow docs/api.md sections that a server may not have yet: `measure: true`
// (ResizeObserver on shown views; sizes that differ from the rect go out as stack edits,
// {"patch": {"resize": [...]}} on the socket or PATCH /v1/sessions/{id}/layout, docs/api.md "Stacks and edits")
// and automatic resync after a 409 (POST /v1/sessions/{id}/resync with the views this page
// really has, docs/api.md "Many instances, one store"). Against a server without them, measuring reports the
// server's answer through onError and resync falls back to repairing from the session's state.

const PHASES = new Set(["drag-begin", "dragging", "drag-end", "decelerating", "idle"]);
/// Phases whose updates may be merged into a queued update of the same phase.
const MERGEABLE = new Set(["dragging", "decelerating", "idle"]);
const SOCKET_OPEN_TIMEOUT_MS = 3000;
const SOCKET_RETRY_MS = 2000;
const IDLE_AFTER_MS = 120;

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
        this.base = base.endsWith("/") ? base : base + "/";
        this.token = token ?? null;
    }

    url(path) { return new URL(path.replace(/^\//, ""), this.base).href; }

    /// Answers {status, body}; body is the parsed JSON (a problem object for errors), or null.
    async request(method, path, body) {
        const headers = {};
        if (body !== undefined) headers["Content-Type"] = "application/json";
        if (this.token) headers["Authorization"] = "Bearer " + this.token;
        const response = await fetch(this.url(path), {
            method, headers, body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await response.text();
        let parsed = null;
        if (text.length > 0) {
            try { parsed = JSON.parse(text); } catch { parsed = { status: response.status, type: "about:blank", detail: text }; }
        }
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
///   layout     a layout id or an inline layout (docs/api.md "Layouts", README "Generated layouts")
///   viewport   [w, h]; or give `scroller` and its client size is used
///   session    other fields of the POST body: offset, buffer, insets, pool, paging, lazyLoad, …
///   views      the callbacks (see the top of this file; domViews() makes them for DOM elements)
///   scroller   an element to follow: its scroll offset and size become updates (bindScroller)
///   base       viewportd's URL (default: where this module was served from)
///   token      auth.token, sent as "Authorization: Bearer" and as the socket subprotocol
///   socket     false to use POST only (default true)
///   measure    true, or a function(id) -> bool: measure shown views and send their sizes
///   resync     false to turn off automatic resync after a 409 (default true)
///   onPlan(plan, client), onError(error, client): optional observers
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
    client._applyPlan(answer.body.plan, 0);
    await client._connect();
    if (options.scroller) client.bindScroller(options.scroller);
    return client;
}

/// Attaches to an existing session (GET /v1/sessions/{id}): continues at its `seq`.
///
/// A page that still holds the session's views passes them as `views.adopt`: the previous
/// ViewportClient of the session (after its close(): everything it knew is kept), or a Map (or
/// object) of view handle -> the application's view. A page without them (a reload) gets its
/// views back by a resync with no views (the next update creates every one); when the server has
/// no resync endpoint, `create` is called for each visible item, with `rect` from
/// `options.rectOf(id)` when given (the state carries no rects).
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
    if (options.scroller) client.bindScroller(options.scroller);
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
            conflicts: 0, resyncs: 0, patches: 0, errors: 0,
        };
        /** handle -> {view, id, reuse, rect, shown, pinned}. */
        this._views = new Map();
        /** item id -> handle, for shown views. */
        this._shownByItem = new Map();
        /** reuse identifier -> handles in the pool, oldest first. */
        this._pools = new Map();
        this._queue = [];
        this._inFlight = null;
        this._pumpScheduled = false;
        this._socket = null;
        this._socketWaiters = [];
        this._socketRetryAt = options.socket === false ? Infinity : 0;
        this._planTimes = [];
        this._idleWaiters = [];
        this._closed = false;
        this._measure = options.measure ?? false;
        this._measured = new Map();
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

    /// Queues a stack edit (docs/api.md "Stacks and edits": resize, insert, remove, anchor).
    patch(body) { this._enqueue({ kind: "patch", body: { ...body } }); }

    /// Resolves once nothing is queued or in flight.
    flush() {
        if (this._queue.length === 0 && !this._inFlight) return Promise.resolve();
        return new Promise((resolve) => this._idleWaiters.push(resolve));
    }

    _enqueue(message) {
        if (this._closed) return;
        const last = this._queue[this._queue.length - 1];
        if (last && message.kind === "update" && last.kind === "update" && !last.follow && !message.follow
            && last.body.phase === message.body.phase && MERGEABLE.has(message.body.phase)) {
            const size = message.body.size ?? last.body.size;
            const select = "select" in message.body ? message.body.select : last.body.select;
            last.body = message.body;
            if (size) last.body.size = size;
            if (select !== undefined) last.body.select = select;
        } else if (last && message.kind === "patch" && last.kind === "patch" && !message.body.insert && !message.body.remove
            && !last.body.insert && !last.body.remove && (message.body.anchor ?? "visible") === (last.body.anchor ?? "visible")) {
            const sizes = new Map((last.body.resize ?? []).map((r) => [r.id, r]));
            for (const r of message.body.resize ?? []) sizes.set(r.id, r);
            last.body.resize = [...sizes.values()];
        } else {
            this._queue.push(message);
        }
        this._schedule();
    }

    _schedule() {
        if (this._pumpScheduled || this._inFlight || this._queue.length === 0 || this._closed) return;
        this._pumpScheduled = true;
        nextFrame(() => { this._pumpScheduled = false; this._pump(); });
    }

    async _pump() {
        if (this._inFlight || this._queue.length === 0 || this._closed) return;
        const message = this._queue.shift();
        this._inFlight = message;
        try {
            await this._send(message);
        } catch (error) {
            this._report(error);
        } finally {
            this._inFlight = null;
        }
        if (this._queue.length > 0) {
            this._schedule();
        } else {
            for (const resolve of this._idleWaiters.splice(0)) resolve();
        }
    }

    /// Sends one message with the next seq and applies its answer; after a 409, resyncs and
    /// sends it once more.
    async _send(message, attempt = 0) {
        const seq = this.seq + 1;
        const started = now();
        const answer = await this._exchange(message, seq);
        this._timed(now() - started);
        if (!isProblem(answer)) {
            this._applyPlan(answer, seq);
            if (message.follow) this._follow(answer.offset);
            // Another writer applied this seq first: the answer was its plan (a retry's answer).
            // It is what the session did, so it was applied; this update goes again.
            const asked = message.kind === "update" ? message.body.offset : null;
            if (asked && answer.offset && attempt < 2
                && (Math.abs(asked[0] - answer.offset[0]) > 0.5 || Math.abs(asked[1] - answer.offset[1]) > 0.5)) {
                this.stats.conflicts += 1;
                return this._send(message, attempt + 1);
            }
            return;
        }
        if (answer.status === 409 && attempt < 2) {
            await this._recover(answer);
            return this._send(message, attempt + 1);
        }
        if (message.kind === "patch") {
            // An edit the server refused (422: an id not in a stack; 404/405: no stacks yet) is
            // not sent again for the same sizes.
            this.stats.errors += 1;
            throw new ViewportdError(answer, "patch");
        }
        this.stats.errors += 1;
        if (answer.status === 404) this._closed = true;
        throw new ViewportdError(answer, "update");
    }

    /// One message out, its answer (a plan or a problem object) back: over the socket when one is
    /// open or can be opened, else by HTTP. A socket that fails mid-message is retried by HTTP
    /// with the same seq, which answers the plan again if the first try was applied.
    async _exchange(message, seq) {
        const body = { ...message.body, seq };
        if (this._socket === null && now() >= this._socketRetryAt) await this._connect();
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
        const answer = await this._http.request(message.kind === "patch" ? "PATCH" : "POST", path, body);
        if (answer.status === 200 && !isProblem(answer.body)) return answer.body;
        return answer.body && isProblem(answer.body) ? answer.body : { status: answer.status, type: "about:blank", detail: "no problem body" };
    }

    // MARK: WebSocket

    /// Opens the session's socket; on failure updates go by HTTP, and the socket is tried again
    /// a little later.
    async _connect() {
        if (this._options.socket === false || typeof WebSocket !== "function" || this._closed) return;
        const protocols = ["viewportd.v1"];
        if (this._http.token) protocols.push("bearer." + this._http.token);
        let socket;
        try {
            socket = new WebSocket(this._http.socketURL(this.session), protocols);
        } catch {
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
        socket.onmessage = (event) => {
            const waiter = this._socketWaiters.shift();
            if (!waiter) return;
            try { waiter.resolve(JSON.parse(event.data)); } catch (error) { waiter.reject(error); }
        };
        const lost = () => {
            if (this._socket === socket) this._socket = null;
            this.transport = "http";
            this._socketRetryAt = now() + SOCKET_RETRY_MS;
            for (const waiter of this._socketWaiters.splice(0)) waiter.reject(new Error("socket closed"));
        };
        socket.onclose = lost;
        socket.onerror = lost;
        this._socket = socket;
        this.transport = "socket";
    }

    _socketExchange(body) {
        return new Promise((resolve, reject) => {
            this._socketWaiters.push({ resolve, reject });
            try { this._socket.send(JSON.stringify(body)); } catch (error) { this._socketWaiters.pop(); reject(error); }
        });
    }

    // MARK: 409 and resync

    /// After a 409: the session is at `problem.seq`, not at this page's seq. Tells the session the
    /// views this page really has (POST …/resync); without that endpoint, continues at the
    /// session's seq and repairs the views from its state.
    async _recover(problem) {
        this.stats.conflicts += 1;
        const seq = typeof problem.seq === "number" ? problem.seq : this.seq;
        if (this._options.resync !== false && await this._resync(seq)) return;
        this.seq = seq;
        const answer = await this._http.request("GET", `/v1/sessions/${encodeURIComponent(this.session)}`);
        if (answer.status === 200) this._repairFrom(answer.body);
    }

    /// POST /v1/sessions/{id}/resync with this page's views; false when the server has no such
    /// endpoint. docs/api.md "Many instances, one store".
    async _resync(seq) {
        const visible = [];
        for (const [handle, v] of this._views) if (v.shown) visible.push({ id: v.id, view: handle });
        const pool = {};
        for (const [reuse, handles] of this._pools) {
            if (handles.length > 0) pool[reuse] = handles.map((h) => ({ view: h, id: this._views.get(h).id }));
        }
        return this._resyncWith(seq, visible, pool);
    }

    async _resyncWith(seq, visible, pool) {
        if (!this._resyncEndpoint || this._options.resync === false) return false;
        const body = { seq, offset: this.offset, visible, pool };
        if (this.viewport) body.viewport = this.viewport;
        const answer = await this._http.request("POST", `/v1/sessions/${encodeURIComponent(this.session)}/resync`, body);
        if (answer.status === 200 && answer.body && !isProblem(answer.body)) {
            this.seq = answer.body.seq ?? seq;
            this.stats.resyncs += 1;
            return true;
        }
        // 405, or a 404 while the session itself still answers: the endpoint does not exist.
        if (answer.status === 405 || answer.status === 404) {
            const state = await this._http.request("GET", `/v1/sessions/${encodeURIComponent(this.session)}`);
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

    _applyPlan(plan, expectedSeq) {
        if (plan.seq !== expectedSeq && plan.seq !== this.seq) {
            this._report(new Error(`plan seq ${plan.seq}, expected ${expectedSeq}`));
        }
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
            v.rect = e.rect;
            v.shown = true;
            v.pinned = false;
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
        const entry = { id: e.id, view: e.view, reuse: v.reuse, rect: e.rect, pinned };
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
            this._expectScroll = true;
            this._scroller.scrollLeft += delta[0];
            this._scroller.scrollTop += delta[1];
        }
    }

    _count() {
        this.stats.alive = this._views.size;
        this.stats.shown = this._shownByItem.size;
    }

    _timed(ms) {
        this.stats.rtt = ms;
        this.stats.rttAverage = this.stats.rttAverage === 0 ? ms : this.stats.rttAverage * 0.9 + ms * 0.1;
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

    _observe(v) {
        if (!this._observer) return;
        const element = this._element(v);
        if (element) { element.__viewportdHandle = v; this._observer.observe(element); }
    }

    _unobserve(v) {
        if (!this._observer) return;
        const element = this._element(v);
        if (element) this._observer.unobserve(element);
    }

    /// ResizeObserver: a shown view whose box differs from its rect by more than half a point is
    /// measured; its size goes out as `{"patch": {"resize": [...]}}` (coalesced per item).
    _measured_(entries) {
        const resize = [];
        for (const entry of entries) {
            const v = entry.target.__viewportdHandle;
            if (!v || !v.shown || !v.rect) continue;
            if (typeof this._measure === "function" && !this._measure(v.id)) continue;
            const box = entry.borderBoxSize?.[0];
            const w = box ? box.inlineSize : entry.target.offsetWidth;
            const h = box ? box.blockSize : entry.target.offsetHeight;
            if (w === 0 && h === 0) continue;
            if (Math.abs(w - v.rect[2]) <= 0.5 && Math.abs(h - v.rect[3]) <= 0.5) continue;
            const sent = this._measured.get(v.id);
            if (sent && Math.abs(sent[0] - w) <= 0.5 && Math.abs(sent[1] - h) <= 0.5) continue;
            this._measured.set(v.id, [w, h]);
            resize.push({ id: v.id, size: [w, h] });
        }
        if (resize.length > 0) {
            this.stats.patches += 1;
            this.patch({ resize });
        }
    }

    // MARK: Following a scroll container

    /// Follows a scroll container: each scroll event queues an update (drag-begin for the first
    /// after a rest, then dragging, with a velocity), an idle update once scrolling stops, and an
    /// update with `size` when the container resizes. Returns a function that stops following.
    bindScroller(element) {
        this._scroller = element;
        let last = null;
        let idleTimer = null;
        let velocity = [0, 0];
        const onScroll = () => {
            const t = now();
            const offset = [element.scrollLeft, element.scrollTop];
            if (this._expectScroll) {
                // Our own scroll (scrollTo's offset, a recenter): the session is there already.
                this._expectScroll = false;
                if (Math.abs(offset[0] - this.offset[0]) < 0.5 && Math.abs(offset[1] - this.offset[1]) < 0.5) return;
            }
            let phase = "dragging";
            if (last === null) {
                phase = "drag-begin";
            } else {
                const dt = (t - last.t) / 1000;
                if (dt > 0) {
                    const v = [(offset[0] - last.offset[0]) / dt, (offset[1] - last.offset[1]) / dt];
                    velocity = [velocity[0] * 0.5 + v[0] * 0.5, velocity[1] * 0.5 + v[1] * 0.5];
                }
            }
            last = { t, offset };
            this.scroll(offset, phase === "drag-begin" ? { phase } : { phase, velocity: velocity.map((x) => Math.round(x)) });
            clearTimeout(idleTimer);
            idleTimer = setTimeout(rest, IDLE_AFTER_MS);
        };
        const rest = () => {
            clearTimeout(idleTimer);
            if (last === null) return;
            last = null;
            velocity = [0, 0];
            this.scroll([element.scrollLeft, element.scrollTop], { phase: "idle" });
        };
        element.addEventListener("scroll", onScroll, { passive: true });
        element.addEventListener("scrollend", rest);
        let resizeObserver = null;
        if (typeof ResizeObserver === "function") {
            resizeObserver = new ResizeObserver(() => {
                const size = [element.clientWidth, element.clientHeight];
                if (this.viewport && size[0] === this.viewport[0] && size[1] === this.viewport[1]) return;
                this.viewport = size;
                this.scroll([element.scrollLeft, element.scrollTop], { phase: "idle", size });
            });
            resizeObserver.observe(element);
        }
        const unbind = () => {
            element.removeEventListener("scroll", onScroll);
            element.removeEventListener("scrollend", rest);
            resizeObserver?.disconnect();
            clearTimeout(idleTimer);
            if (this._scroller === element) this._scroller = null;
        };
        this._unbindScroller = unbind;
        return unbind;
    }

    /// After a scrollTo: the scroll container goes where the session went.
    _follow(offset) {
        if (!this._scroller || !offset) return;
        this._expectScroll = true;
        this._scroller.scrollLeft = offset[0];
        this._scroller.scrollTop = offset[1];
    }

    /// Stops following the scroll container and closes the socket; with {end: true} also ends
    /// the session (DELETE /v1/sessions/{id}). The views stay as they are (attachSession can
    /// adopt them).
    async close({ end = false } = {}) {
        this._closed = true;
        this._unbindScroller?.();
        this._observer?.disconnect();
        if (this._socket) { try { this._socket.close(1000); } catch { /* closed */ } this._socket = null; }
        if (end) await this._http.request("DELETE", `/v1/sessions/${encodeURIComponent(this.session)}`);
    }
}

/// Callbacks for views that are absolutely positioned elements in `content` (a positioned,
/// sized element inside the scroll container). `render(element, entry)` fills an element for
/// an item (called on create and on every rebind); `measure: true` leaves the height to the
/// content (for stacks). Every element carries data-view (its handle) and, while shown,
/// data-item-id.
export function domViews(content, { render, tag = "div", className = "viewportd-item", measure = false, onCreate, onRelease } = {}) {
    const place = (element, rect) => {
        element.style.transform = `translate(${rect[0]}px, ${rect[1]}px)`;
        element.style.width = `${rect[2]}px`;
        if (!measure) element.style.height = `${rect[3]}px`;
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
            if (entry.rect) place(element, entry.rect);
            render?.(element, entry);
            content.appendChild(element);
            onCreate?.(element, entry);
            return element;
        },
        bind(element, entry) {
            element.dataset.itemId = entry.id;
            render?.(element, entry);
        },
        show(element, entry) {
            element.dataset.itemId = entry.id;
            element.style.display = "";
            place(element, entry.rect);
        },
        hide(element) {
            element.style.display = "none";
            delete element.dataset.itemId;
        },
        release(element, entry) {
            element.remove();
            onRelease?.(element, entry);
        },
        move(element, entry) { place(element, entry.rect); },
        contentSize(size) {
            content.style.width = `${size[0]}px`;
            content.style.height = `${size[1]}px`;
        },
    };
}
