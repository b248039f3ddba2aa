extension ViewportSession {
    /// Adds paging's and the helpers' outputs to a plan whose views are planned, and advances their
    /// state. `previous` is the offset and viewport before the update (nil for the opening plan);
    /// `leaving` and `entering` are the plan's items (layout order).
    ///
    /// Called only when something can come of it: a helper is on, an item is selected, or the
    /// phase is `drag-begin` or `drag-end`.
    /// - Complexity: paging O(1) (O(log n) in the mode `items`); `exposure` strip queries around
    ///   the screen's moving edges, O(log n + s) for s items on the strips (a fraction is computed
    ///   for those only), plus O(v log v) for v items viewed; `prefetch` one strip query over the swept region,
    ///   O(log n + p log p) for p predictions; `lazyLoad` O(c) for c items entering, leaving or
    ///   loaded, plus a screen query at `drag-end`; `links` O(links).
    /// The helpers' outputs for a layout change (phase idle, no velocity). `leaving` are new-layout
    /// positions of leaving items still in the layout; `leftScreen` are previous-layout positions
    /// (a layout change's `leave`, like its `recycle` and `discard`, names the previous layout);
    /// so are `cancelledPredictions`, every prediction outstanding before the change that did not
    /// enter (a layout change has no velocity), removed items included. `leftScreenStaying` are
    /// the new-layout positions of the items of `leftScreen` still in the layout (their stays on
    /// screen end). A layout change carries no `time`: it starts no clock and views nothing.
    mutating func finishLayoutChangePlan(
        _ plan: inout Plan, leaving: [Int], entering: [Int], enteredScreen: [Int], leftScreen: [Int],
        leftScreenStaying: [Int], cancelledPredictions: [Int]
    ) {
        // Keep what the plan already carries (moves, pins); the helpers fill in their own parts.
        var extras = plan.extras ?? PlanExtras()
        extras.selected = selected
        if hasExposureTracker, let (enter, _) = helpers.exposureTracker?.record(entered: enteredScreen, left: leftScreenStaying, time: nil) {
            extras.enter = enter
            extras.leave = leftScreen
        }
        if hasPrefetcher { extras.cancelPrefetch = cancelledPredictions }
        if hasLazyLoader {
            helpers.lazyLoader?.itemsLeft(leaving)
            helpers.lazyLoader?.itemsEntered(entering)
            extras.load = helpers.lazyLoader?.loadPending() ?? []
        }
        if hasLinks { extras.linked = linkedOffsets() }
        plan.updateExtras { $0 = extras }
    }

    mutating func finishPlan(
        _ plan: inout Plan, phase: ScrollPhase, velocity: Point?, time: Double?, previous: (offset: Point, viewport: Size)?,
        leaving: [Int], entering: [Int]
    ) {
        // Keep what the plan already carries (moves, pins); the helpers fill in their own parts.
        var extras = plan.extras ?? PlanExtras()
        extras.selected = selected

        // Paging: drag-begin records b, drag-end answers the target.
        if phase == .dragBegin {
            scroll.dragBegin = offset
        } else if phase == .dragEnd {
            let (target, page) = dragTarget(begin: scroll.dragBegin ?? previous?.offset ?? offset, velocity: velocity ?? .zero)
            extras.target = target
            extras.page = page
            scroll.dragBegin = nil
        }

        if let rule = exposureRule {
            let screen = Region(offset: offset, viewport: viewport, buffer: 0)
            var entered: [Int]
            var left: [Int] = []
            if let previous {
                let old = Region(offset: previous.offset, viewport: previous.viewport, buffer: 0)
                (entered, left) = screenChanges(from: old, to: screen, rule: rule)
            } else {
                entered = itemsOnScreen(screen, rule: rule)
            }
            if let (enter, viewed) = helpers.exposureTracker?.record(entered: entered, left: left, time: time) {
                extras.enter = enter
                extras.leave = left
                extras.viewed = viewed
            }
        }

        if let prefetcher {
            var predicted: [Int]?
            if var v = velocity {
                if let loop {
                    // The content repeats: a sweep longer than two periods predicts nothing more.
                    let limit = 2 * loop.period + loop.axis.component(of: viewport) + 2 * buffer.still
                    let d = loop.axis.component(of: v) * prefetcher.seconds
                    if abs(d) > limit { v = loop.axis.setting((d > 0 ? limit : -limit) / prefetcher.seconds, in: v) }
                }
                predicted = items(in: prefetcher.sweep(region, velocity: v), notIn: region)
            }
            let shown = self.shown
            if let (prefetch, cancel) = helpers.prefetcher?.update(predicted: predicted, isMaterialized: { shown[$0] != nil }) {
                extras.prefetch = prefetch
                extras.cancelPrefetch = cancel
            }
        }

        if hasLazyLoader {
            helpers.lazyLoader?.itemsLeft(leaving)
            helpers.lazyLoader?.itemsEntered(entering)
            switch phase {
            case .dragBegin:
                let shown = self.shown
                extras.load = helpers.lazyLoader?.dragBegan(isMaterialized: { shown[$0] != nil }) ?? []
            case .idle:
                extras.load = helpers.lazyLoader?.loadPending() ?? []
            case .dragEnd:
                if let target = extras.target {
                    let onTarget = items(in: Region(offset: target, viewport: viewport, buffer: 0))
                    extras.load = helpers.lazyLoader?.dragEnded(onTarget: onTarget) ?? []
                }
            case .dragging, .decelerating:
                break
            }
        }

        if hasLinks { extras.linked = linkedOffsets() }

        if let loop {
            extras.placements = place(leaving: leaving, entering: entering, in: loop)
            if phase == .idle { extras.recenter = recenter(loop) }
        }

        plan.updateExtras { $0 = extras }
    }
}
