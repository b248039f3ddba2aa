import ViewportCore
import ViewportJSON

/// Writes plans and session state as JSON by hand: plans are the hot response (a `JSONEncoder`
/// measured ~14× slower for them: about 4 µs for a small struct; measure before hand-writing
/// anything else).
enum PlanEncoder {
    static func encode(_ plan: Plan, layout: Layout, into w: inout JSONWriter) {
        w.beginObject()
        w.key("seq")
        w.int(Int(truncatingIfNeeded: plan.seq))
        w.key("offset")
        point(plan.offset, into: &w)
        // After a layout change, leaving items are the previous layout's.
        let leavingLayout = plan.previousLayout ?? layout
        plan.withViewLists { lists in
            // The entering items' ids start loading while the leaving ones (recently written, in
            // the cache) are written: on a large layout they are the encoder's cache misses.
            if let first = lists.reuse.first { layout.prefetchIDBytes(of: first.item) }
            if let first = lists.create.first { layout.prefetchIDBytes(of: first.item) }
            if !lists.recycle.isEmpty {
                w.key("recycle")
                entries(lists.recycle, layout: leavingLayout, into: &w)
            }
            if !lists.discard.isEmpty {
                w.key("discard")
                entries(lists.discard, layout: leavingLayout, into: &w)
            }
            if plan.hasExtras, !plan.move.isEmpty {
                w.key("move")
                w.beginArray()
                for entry in plan.move { placedView(entry.item, view: entry.view, rect: layout.rects[entry.item], layout: layout, into: &w) }
                w.endArray()
            }
            let selected = plan.selected
            // A jump writes dozens of these entries: each is assembled from literal fragments
            // (`{"id":"`, `","view":`, …) with one capacity check each, not key by key with a comma
            // decision per token (about a third of a jump's encoding, callgrind).
            if !lists.reuse.isEmpty {
                w.key("reuse")
                w.beginArray()
                for (k, entry) in lists.reuse.enumerated() {
                    if k > 0 { w.raw(byte: UInt8(ascii: ",")) }
                    entryStart(entry.item, view: entry.view, layout: layout, into: &w)
                    w.raw(#","rect":"#)
                    rawRect(plan.rect(of: entry.item, in: layout), into: &w)
                    w.raw(entry.rebind ? #","rebind":true"# : #","rebind":false"#)
                    if entry.item == selected { w.raw(#","selected":true"#) }
                    w.raw(byte: UInt8(ascii: "}"))
                }
                w.endArray()
            }
            if !lists.create.isEmpty {
                w.key("create")
                w.beginArray()
                for (k, entry) in lists.create.enumerated() {
                    if k > 0 { w.raw(byte: UInt8(ascii: ",")) }
                    entryStart(entry.item, view: entry.view, layout: layout, into: &w)
                    if let reuse = layout.reuseName(of: entry.item) {
                        w.raw(#","reuse":"#)
                        w.string(reuse)
                    }
                    w.raw(#","rect":"#)
                    rawRect(plan.rect(of: entry.item, in: layout), into: &w)
                    if entry.item == selected { w.raw(#","selected":true"#) }
                    w.raw(byte: UInt8(ascii: "}"))
                }
                w.endArray()
            }
        }
        // Everything rarer lives in the plan's extras box: one pointer test when absent.
        if plan.hasExtras { encodeExtras(plan, layout: layout, into: &w) }
        w.endObject()
    }

    /// Paging, helper and loop outputs (docs/api.md "Paging and deceleration", "Scrolling helpers").
    private static func encodeExtras(_ plan: Plan, layout: Layout, into w: inout JSONWriter) {
        if !plan.unpin.isEmpty {
            w.key("unpin")
            w.beginArray()
            for entry in plan.unpin { placedView(entry.item, view: entry.view, rect: entry.rect, layout: layout, into: &w) }
            w.endArray()
        }
        if !plan.pin.isEmpty {
            w.key("pin")
            w.beginArray()
            for entry in plan.pin { placedView(entry.item, view: entry.view, rect: entry.rect, layout: layout, into: &w) }
            w.endArray()
        }
        if let target = plan.target {
            w.key("target")
            point(target, into: &w)
        }
        if let page = plan.page {
            w.key("page")
            w.int(page)
        }
        // After a layout change, `cancelPrefetch` names the previous layout (predictions were made
        // in it, and the new one may lack the item), like `leave`.
        for (name, items, from) in [
            ("prefetch", plan.prefetch, layout), ("cancelPrefetch", plan.cancelPrefetch, plan.previousLayout ?? layout), ("load", plan.load, layout),
        ] where !items.isEmpty {
            w.key(escaping: name)
            ids(items, layout: from, into: &w)
        }
        if !plan.enter.isEmpty {
            w.key("enter")
            exposureEntries(plan.enter, layout: layout, into: &w)
        }
        if !plan.leave.isEmpty {
            // After a layout change, like `recycle` and `discard`, these name the previous layout.
            w.key("leave")
            ids(plan.leave, layout: plan.previousLayout ?? layout, into: &w)
        }
        if !plan.viewed.isEmpty {
            w.key("viewed")
            exposureEntries(plan.viewed, layout: layout, into: &w)
        }
        if !plan.linked.isEmpty {
            w.key("linked")
            w.beginObject()
            for link in plan.linked {
                w.key(escaping: link.name)
                point(link.offset, into: &w)
            }
            w.endObject()
        }
        if !plan.placements.isEmpty {
            w.key("placements")
            w.beginArray()
            for placement in plan.placements {
                w.beginObject()
                id(placement.item, layout: layout, into: &w)
                w.key("rect")
                rect(placement.rect, into: &w)
                w.endObject()
            }
            w.endArray()
        }
        if let recenter = plan.recenter {
            w.key("recenter")
            point(recenter, into: &w)
        }
        if let contentSize = plan.contentSize {
            w.key("contentSize")
            size(contentSize, into: &w)
        }
    }

    /// `{"id", "view", "rect"}`: a `move`, `pin` or `unpin` entry, or the state's `pinned`.
    private static func placedView(_ item: Int, view: Int, rect r: Rect, layout: Layout, into w: inout JSONWriter) {
        w.beginObject()
        id(item, layout: layout, into: &w)
        w.key("view")
        w.int(view)
        w.key("rect")
        rect(r, into: &w)
        w.endObject()
    }

    /// `[{"id", "times"}]`: `enter` or `viewed`.
    private static func exposureEntries(_ list: [ExposureEntry], layout: Layout, into w: inout JSONWriter) {
        w.beginArray()
        for entry in list {
            w.beginObject()
            id(entry.item, layout: layout, into: &w)
            w.key("times")
            w.int(entry.times)
            w.endObject()
        }
        w.endArray()
    }

    private static func ids(_ items: [Int], layout: Layout, into w: inout JSONWriter) {
        w.beginArray()
        for item in items { layout.forIDBytes(at: item) { w.string(utf8: $0) } }
        w.endArray()
    }

    /// `GET /v1/sessions/{id}`: the whole state, enough for a client to resync.
    static func encodeState(_ session: ViewportSession, id sessionID: String, into w: inout JSONWriter) {
        let layout = session.layout
        w.beginObject()
        w.key("session")
        w.string(sessionID)
        w.key("layout")
        w.string(layout.digest)
        w.key("seq")
        w.int(Int(truncatingIfNeeded: session.seq))
        w.key("edits")
        w.int(session.edits)
        w.key("offset")
        point(session.offset, into: &w)
        w.key("viewport")
        size(session.viewport, into: &w)
        // The layout's as edited: a page that attaches (a reload) sizes its content to it.
        w.key("contentSize")
        size(layout.contentSize, into: &w)
        if let time = session.time {
            // The session's last client time: a resyncing client continues its clock from here.
            w.key("time")
            w.number(time)
        }
        w.key("visible")
        entries(session.visible, layout: layout, into: &w)
        if let pinned = session.pinned, let view = session.visible.first(where: { $0.item == pinned.item })?.view {
            w.key("pinned")
            placedView(pinned.item, view: view, rect: pinned.rect, layout: layout, into: &w)
        }
        if session.exposureRule != nil {
            // With exposure: the items on screen now (by the session's threshold), in layout order.
            w.key("onScreen")
            ids(session.onScreen, layout: layout, into: &w)
        }
        w.key("pool")
        w.beginObject()
        for (reuse, views) in session.pooledViews {
            w.key(escaping: reuse)
            w.beginArray()
            for view in views { w.int(view) }
            w.endArray()
        }
        w.endObject()
        let s = session.stats
        w.key("stats")
        w.beginObject()
        for (name, value) in [
            ("updates", s.updates), ("created", s.created), ("reused", s.reused), ("rebindFree", s.rebindFree),
            ("recycled", s.recycled), ("discarded", s.discarded), ("peakViews", s.peakViews),
        ] {
            w.key(escaping: name)
            w.int(value)
        }
        w.endObject()
        w.endObject()
    }

    /// `{"layout", "items", "contentSize"}` (plus `"sessions"` when given).
    static func encodeLayoutInfo(_ layout: Layout, sessions: Int?, into w: inout JSONWriter) {
        w.beginObject()
        w.key("layout")
        w.string(layout.digest)
        w.key("items")
        w.int(layout.count)
        w.key("contentSize")
        size(layout.contentSize, into: &w)
        if let sessions {
            w.key("sessions")
            w.int(sessions)
        }
        w.endObject()
    }

    private static func entries(_ list: some Collection<some ItemAndView>, layout: Layout, into w: inout JSONWriter) {
        w.beginArray()
        for (k, entry) in list.enumerated() {
            if k > 0 { w.raw(byte: UInt8(ascii: ",")) }
            entryStart(entry.item, view: entry.view, layout: layout, into: &w)
            w.raw(byte: UInt8(ascii: "}"))
        }
        w.endArray()
    }

    /// `{"id":"…","view":N` (the object stays open), after a `[` or a `,`.
    @inline(__always)
    private static func entryStart(_ item: Int, view: Int, layout: Layout, into w: inout JSONWriter) {
        w.raw(#"{"id":"#)
        layout.forIDBytes(at: item) { w.string(utf8: $0) }
        w.raw(#","view":"#)
        w.rawInt(view)
    }

    /// `[x,y,width,height]` with no comma before it.
    @inline(__always)
    private static func rawRect(_ r: Rect, into w: inout JSONWriter) {
        w.rawQuad(r.x, r.y, r.width, r.height)
    }

    @inline(__always)
    private static func id(_ item: Int, layout: Layout, into w: inout JSONWriter) {
        w.key("id")
        layout.forIDBytes(at: item) { w.string(utf8: $0) }
    }

    static func point(_ p: Point, into w: inout JSONWriter) {
        w.beginArray()
        w.number(p.x)
        w.number(p.y)
        w.endArray()
    }

    static func size(_ s: Size, into w: inout JSONWriter) {
        w.beginArray()
        w.number(s.width)
        w.number(s.height)
        w.endArray()
    }

    static func rect(_ r: Rect, into w: inout JSONWriter) {
        w.separate()
        w.rawQuad(r.x, r.y, r.width, r.height)
    }
}
