import Prometheus
import Synchronization

/// The service's Prometheus metrics (`GET /metrics`): requests by route, method and status, request
/// latency by route, sessions, layouts, plans, views created and reused.
final class ServiceMetrics: Sendable {
    /// The counter of one (route, method, status) and the latency histogram of its route.
    private struct RequestSeries {
        let route: String
        let method: String
        let status: Int
        let counter: Counter
        let histogram: DurationHistogram
    }

    /// Request series by a cheap hash of their key, scanned comparing strings: on every request,
    /// the route and method are literals, so the comparisons are of identical strings (a
    /// `Dictionary` keyed by the strings hashed them with SipHash twice per request, ~2,000
    /// instructions with the two locks).
    private struct RequestTable {
        static let bucketCount = 64
        var buckets = [[RequestSeries]](repeating: [], count: bucketCount)
        var latency: [String: DurationHistogram] = [:]

        static func bucket(route: String, method: String, status: Int) -> Int {
            (route.utf8.count &* 31 &+ method.utf8.count &* 7 &+ status) & (bucketCount - 1)
        }
    }

    let registry = PrometheusCollectorRegistry()
    private let requests = Mutex(RequestTable())
    private let sessions: Gauge
    private let layouts: Gauge
    let plans: Counter
    let viewsCreated: Counter
    let viewsReused: Counter
    /// The shared store's metrics (only registered when one is configured).
    private let storeOperations = Mutex<[String: (DurationHistogram, Counter)]>([:])
    private let storeHandovers = Mutex<[String: Counter]>([:])
    let resyncs: Counter

    private static let latencyBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
        .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(100),
        .milliseconds(500), .seconds(1), .seconds(5),
    ]

    init() {
        sessions = registry.makeGauge(descriptor: Self.name("sessions", unit: "", help: "Open sessions."))
        layouts = registry.makeGauge(descriptor: Self.name("layouts", unit: "", help: "Stored layouts."))
        plans = registry.makeCounter(
            descriptor: Self.name("plans", unit: "total", help: "Plans answered (opening plans and updates)."))
        viewsCreated = registry.makeCounter(
            descriptor: Self.name("views_created", unit: "total", help: "Views that plans told clients to create."))
        viewsReused = registry.makeCounter(
            descriptor: Self.name("views_reused", unit: "total", help: "Views that plans told clients to reuse from a pool."))
        resyncs = registry.makeCounter(
            descriptor: Self.name("resyncs", unit: "total", help: "Sessions that adopted their client's views (POST /v1/sessions/{id}/resync)."))
    }

    private static let storeBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .seconds(2.5),
    ]

    func countResync() { resyncs.increment() }

    /// One round trip to the shared store (a command or a pipeline), by operation, and whether it
    /// failed (no answer: timeout, refused, lost connection).
    func recordStore(_ operation: String, nanoseconds: Int64, failed: Bool) {
        let (histogram, errors) = storeOperations.withLock { metrics in
            if let known = metrics[operation] { return known }
            let made = (
                registry.makeDurationHistogram(
                    descriptor: Self.name(
                        "store_operation_duration", unit: "seconds",
                        help: "Round trips to the shared store (one command or one pipeline), by operation."),
                    labels: [("operation", operation)], buckets: Self.storeBuckets),
                registry.makeCounter(
                    descriptor: Self.name("store_errors", unit: "total", help: "Round trips to the shared store that got no answer, by operation."),
                    labels: [("operation", operation)]))
            metrics[operation] = made
            return made
        }
        histogram.recordNanoseconds(nanoseconds)
        if failed { errors.increment() }
    }

    private let flushBatch = Mutex<ValueHistogram?>(nil)

    /// The number of sessions one flush wrote.
    func recordFlush(sessions: Int) {
        let histogram = flushBatch.withLock { histogram in
            if let histogram { return histogram }
            let made = registry.makeValueHistogram(
                descriptor: Self.name("store_flush_batch_size", unit: "", help: "Sessions written per flush (one pipeline)."),
                buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000])
            histogram = made
            return made
        }
        histogram.record(Double(sessions))
    }

    /// A handover: `given` (another instance asked for a session this one owned), `taken` (this
    /// one asked and got it), `stolen` (the owner had died: taken once its heartbeat ended).
    func countHandover(_ kind: String) {
        let counter = storeHandovers.withLock { counters in
            if let known = counters[kind] { return known }
            let made = registry.makeCounter(
                descriptor: Self.name("store_handovers", unit: "total", help: "Sessions that moved between instances, by kind (given, taken, stolen), and sessions parked in the store while idle (parked)."),
                labels: [("kind", kind)])
            counters[kind] = made
            return made
        }
        counter.increment()
    }

    private static func name(_ metric: String, unit: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "viewportd", metricName: metric, unitName: unit, helpText: help)
    }

    /// Counts one plan and the views it creates and reuses.
    func count(created: Int, reused: Int) {
        plans.increment()
        if created > 0 { viewsCreated.increment(by: Int64(created)) }
        if reused > 0 { viewsReused.increment(by: Int64(reused)) }
    }

    /// Counts one answered request and its latency.
    func recordRequest(route: String, method given: String, status: Int, nanoseconds: Int64) {
        let method = Self.methodLabel(given)
        let bucket = RequestTable.bucket(route: route, method: method, status: status)
        let (counter, histogram) = requests.withLock { table -> (Counter, DurationHistogram) in
            for series in table.buckets[bucket] where series.status == status && series.route == route && series.method == method {
                return (series.counter, series.histogram)
            }
            let counter = registry.makeCounter(
                descriptor: Self.name("http_requests", unit: "total", help: "HTTP requests answered, by route, method and status."),
                labels: [("route", route), ("method", method), ("status", String(status))])
            let histogram: DurationHistogram
            if let known = table.latency[route] {
                histogram = known
            } else {
                histogram = registry.makeDurationHistogram(
                    descriptor: Self.name(
                        "http_request_duration", unit: "seconds", help: "Time from a request's head to its response, by route."),
                    labels: [("route", route)], buckets: Self.latencyBuckets)
                table.latency[route] = histogram
            }
            table.buckets[bucket].append(RequestSeries(route: route, method: method, status: status, counter: counter, histogram: histogram))
            return (counter, histogram)
        }
        counter.increment()
        histogram.recordNanoseconds(nanoseconds)
    }

    /// The `method` label of a request's series: the method for `GET`, `HEAD`, `POST`, `PUT`,
    /// `PATCH`, `DELETE`, `OPTIONS` and a WebSocket's `MESSAGE`; `OTHER` for anything else (a
    /// client may send any token as its method: each must not add a series). A `switch` of
    /// small-string comparisons, not a hashed set: it runs on every request.
    static func methodLabel(_ method: String) -> String {
        switch method {
        case "POST", "GET", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "MESSAGE": return method
        default: return "OTHER"
        }
    }

    private let storeUp = Mutex<Gauge?>(nil)

    /// The Prometheus text exposition, with the gauges read now; `storeIsUp` (with a shared
    /// store) adds `viewportd_store_up`.
    func render(sessions sessionCount: Int, layouts layoutCount: Int, storeIsUp: Bool? = nil) -> [UInt8] {
        sessions.set(Double(sessionCount))
        layouts.set(Double(layoutCount))
        if let storeIsUp {
            let gauge = storeUp.withLock { gauge in
                if let gauge { return gauge }
                let made = registry.makeGauge(descriptor: Self.name("store_up", unit: "", help: "1 while the shared store answers, else 0."))
                gauge = made
                return made
            }
            gauge.set(storeIsUp ? 1.0 : 0.0)
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(4096)
        registry.emit(into: &buffer)
        return buffer
    }
}
