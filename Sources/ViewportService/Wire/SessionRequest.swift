import ViewportCore
import ViewportJSON

/// The body of `POST /v1/sessions`.
struct SessionRequest: Sendable {
    var layout: LayoutReference
    var configuration: SessionConfiguration
    /// `scrollTo`, resolved into `configuration.scrollTo` once the layout is known (`resolve(in:)`).
    var scrollTo: ScrollToRequest?

    static func decode(_ bytes: [UInt8], maxItems: Int) throws -> SessionRequest {
        try JSONReader.read(bytes) { r in
            var layout: Result<LayoutReference, Problem>?
            var viewport: Size?
            var configuration = SessionConfiguration(viewport: .zero)
            var sawOffset = false
            var scrollTo: ScrollToRequest?
            guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a session object") }
            try r.readObject { r, key in
                switch key {
                case "layout": layout = try LayoutReference.decode(&r, maxItems: maxItems)
                case "viewport": viewport = try r.readSize()
                case "offset":
                    configuration.offset = try r.readPoint()
                    sawOffset = true
                case "scrollTo": scrollTo = try ScrollToRequest.decode(&r)
                case "buffer": configuration.buffer = try decodeBuffer(&r)
                case "time": configuration.time = try r.readDouble()
                case "rtt": configuration.rtt = try r.readDouble()
                case "lookAhead": configuration.lookAhead = try decodeLookAhead(&r)
                case "insets": configuration.insets = try r.readInsets()
                case "pool": configuration.pool = try decodePool(&r)
                case "paging": configuration.paging = try decodePaging(&r)
                case "prefetch": configuration.prefetch = r.readNullIfPresent() ? nil : try r.readDouble()
                case "lazyLoad": configuration.lazyLoad = try r.readBool()
                case "exposure": (configuration.exposure, configuration.exposureRule) = try decodeExposure(&r)
                case "links": configuration.links = try decodeLinks(&r)
                case "loop": configuration.loop = try r.readBool()
                default: throw r.unknownField(key, in: "session")
                }
            }
            try r.finish()
            guard let layout else { throw JSONReader.missingField("layout") }
            guard let viewport else { throw JSONReader.missingField("viewport") }
            if sawOffset && scrollTo != nil { throw JSONError(.type, "send either offset or scrollTo, not both") }
            // An invalid inline layout (422) only now that the whole body is known to be well-formed.
            let reference = try layout.get()
            configuration.viewport = viewport
            return SessionRequest(layout: reference, configuration: configuration, scrollTo: scrollTo)
        }
    }

    /// The configuration with `scrollTo`'s id resolved in `layout` (422 naming `scrollTo.id` when
    /// the layout has no such item).
    func resolvedConfiguration(in layout: Layout) throws(Problem) -> SessionConfiguration {
        var configuration = self.configuration
        if let scrollTo { configuration.scrollTo = try scrollTo.resolve(in: layout) }
        return configuration
    }

    /// `buffer`: a number `n` (`{ahead: n, behind: n}`) or `{"ahead", "behind"}`.
    private static func decodeBuffer(_ r: inout JSONReader) throws -> Buffer {
        if r.peekKind() == .number { return Buffer(try r.readDouble()) }
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a number or an {\"ahead\", \"behind\"} object") }
        var ahead: Double?
        var behind: Double?
        try r.readObject { r, key in
            switch key {
            case "ahead": ahead = try r.readDouble()
            case "behind": behind = try r.readDouble()
            default: throw r.unknownField(key, in: "buffer")
            }
        }
        guard let ahead else { throw JSONReader.missingField("buffer.ahead") }
        guard let behind else { throw JSONReader.missingField("buffer.behind") }
        return Buffer(ahead: ahead, behind: behind)
    }

    /// `lookAhead`: a number `n` (`{max: n}`) or `{"max"?}` (`null` or absent: the default cap).
    private static func decodeLookAhead(_ r: inout JSONReader) throws -> LookAhead {
        if r.peekKind() == .number { return LookAhead(max: try r.readDouble()) }
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a number or a {\"max\"} object") }
        var lookAhead = LookAhead.standard
        try r.readObject { r, key in
            switch key {
            case "max": lookAhead.max = r.readNullIfPresent() ? nil : try r.readDouble()
            default: throw r.unknownField(key, in: "lookAhead")
            }
        }
        return lookAhead
    }

    /// `exposure`: `true`/`false`, or `{"threshold"?, "minTime"?}` (on; `true` is `{"threshold": 0}`).
    private static func decodeExposure(_ r: inout JSONReader) throws -> (Bool, ExposureRule) {
        if r.peekKind() == .bool { return (try r.readBool(), ExposureRule()) }
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a boolean or an {\"threshold\", \"minTime\"} object") }
        var rule = ExposureRule()
        try r.readObject { r, key in
            switch key {
            case "threshold": rule.threshold = try r.readDouble()
            case "minTime": rule.minTime = try r.readDouble()
            default: throw r.unknownField(key, in: "exposure")
            }
        }
        return (true, rule)
    }

    private static func decodePaging(_ r: inout JSONReader) throws -> PagingOptions {
        var paging = PagingOptions()
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a paging object") }
        try r.readObject { r, key in
            switch key {
            case "mode": paging.mode = try r.readEnum(PagingMode.self)
            case "axis": paging.axis = try r.readEnum(Axis.self)
            case "size": paging.size = try r.readSize()
            case "decelerationRate": paging.decelerationRate = try r.readDouble()
            default: throw r.unknownField(key, in: "paging")
            }
        }
        return paging
    }

    private static func decodeLinks(_ r: inout JSONReader) throws -> [String: LinkedScrollView] {
        var links: [String: LinkedScrollView] = [:]
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "an object of linked scroll views by name") }
        try r.readObject { r, name in
            var viewport: Size?
            var contentSize: Size?
            guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a linked scroll view object") }
            try r.readObject { r, key in
                switch key {
                case "viewport": viewport = try r.readSize()
                case "contentSize": contentSize = try r.readSize()
                default: throw r.unknownField(key, in: "links.\(name.string)")
                }
            }
            guard let viewport else { throw JSONReader.missingField("links.\(name.string).viewport") }
            guard let contentSize else { throw JSONReader.missingField("links.\(name.string).contentSize") }
            links[name.string] = LinkedScrollView(viewport: viewport, contentSize: contentSize)
        }
        return links
    }

    private static func decodePool(_ r: inout JSONReader) throws -> PoolCaps {
        var caps = PoolCaps()
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a pool object") }
        try r.readObject { r, key in
            switch key {
            case "max":
                caps.max = r.readNullIfPresent() ? nil : try r.readInt()
            case "perReuse":
                guard r.peekKind() == .object else { throw r.typeMismatch(expected: "an object of caps by reuse identifier") }
                try r.readObject { r, name in
                    caps.perReuse[name.string] = try r.readInt()
                }
            default:
                throw r.unknownField(key, in: "pool")
            }
        }
        return caps
    }
}
