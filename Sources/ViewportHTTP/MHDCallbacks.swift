import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The C callbacks handed to libmicrohttpd. They are file-level functions without captures
// (so they convert to C function pointers) and nonisolated; context arrives through `cls`
// (the ``ServerCore``, unretained) and `*con_cls` (the ``RequestContext``, retained).

/// MHD_OPTION_URI_LOG_CALLBACK: runs once per request when its request line is parsed; its
/// result becomes `*con_cls`. Splits the raw target into path and query here, before MHD
/// percent-decodes the path.
func mhdRequestStarted(
    _ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    guard cls != nil else { return nil }
    let context: RequestContext
    if let uri {
        let length = strlen(uri)
        let bytes = UnsafeRawBufferPointer(start: uri, count: length)
        if let mark = bytes.firstIndex(of: UInt8(ascii: "?")) {
            context = RequestContext(
                path: String(decoding: bytes[..<mark], as: UTF8.self),
                query: String(decoding: bytes[(mark + 1)...], as: UTF8.self))
        } else {
            context = RequestContext(path: String(decoding: bytes, as: UTF8.self), query: nil)
        }
    } else {
        context = RequestContext(path: "/", query: nil)
    }
    return Unmanaged.passRetained(context).toOpaque()
}

/// MHD_OPTION_NOTIFY_COMPLETED: the request is over (answered, or the connection died).
/// The request's driver does what is left (a sink that never saw its end gets
/// `finish(truncated: true)`, an accepted WebSocket never upgraded `closed()`, a part-collected
/// body's budget goes back) and the context is released.
func mhdRequestCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ toe: MHD_RequestTerminationCode
) {
    guard let cls, let conCls, let raw = conCls.pointee else { return }
    conCls.pointee = nil
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()
    if RequestDriver.complete(context, core: core) {
        core.inFlight.subtract(1, ordering: .sequentiallyConsistent)
    }
}

/// MHD_AccessHandlerCallback: called once when the head is complete, once per body chunk,
/// and once more (with `*upload_data_size == 0`) when the body is complete.
func mhdAccessHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?, _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?,
    _ uploadData: UnsafePointer<CChar>?, _ uploadDataSize: UnsafeMutablePointer<Int>?,
    _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let uploadDataSize, let conCls else { return .NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let context: RequestContext
    if let raw = conCls.pointee {
        context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
    } else {
        // Not expected (the URI callback always runs first), but stay safe.
        guard let made = mhdRequestStarted(cls, url, connection) else { return .NO }
        conCls.pointee = made
        context = Unmanaged<RequestContext>.fromOpaque(made).takeUnretainedValue()
    }
    let driver = RequestDriver(core: core, connection: connection, context: context)
    if context.machine.isAwaitingHead {
        return driver.begin(method: method, version: version)
    }
    let size = uploadDataSize.pointee
    if context.machine.isPreparing {
        // Resumed after a prelude: MHD makes the first call again (no body read yet).
        let result = driver.resumeAfterPrelude()
        guard result == .YES, size > 0 else { return result }
    }
    if size > 0 {
        uploadDataSize.pointee = 0
        guard let uploadData else { return .YES }
        return driver.body(UnsafeRawBufferPointer(start: uploadData, count: size))
    }
    return driver.end()
}

/// MHD_OPTION_EXTERNAL_LOGGER target (through the shim's vsnprintf wrapper).
func mhdLog(_ ctx: UnsafeMutableRawPointer?, _ message: UnsafePointer<CChar>?) {
    guard let ctx, let message else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(ctx).takeUnretainedValue()
    var text = String(cString: message)
    while text.last?.isNewline == true { text.removeLast() }
    core.record(message: text)
}

/// Request header fields as the access handler collects them: one pass over MHD's list measures
/// them (and reads `Content-Length` and `Transfer-Encoding`) while it copies them into a stack
/// buffer, from which the head's storage is made at its size. Fields too large for that buffer
/// are copied by a second pass, into storage allocated at their measured size.
struct HeaderCollector {
    /// Bytes of fields the first pass copies on the stack: a request's fields nearly always fit
    /// (wrk's and curl's take about 100). The second pass cost ~500 instructions a request.
    static let stackBytes = 1024

    /// Bytes the fields take (``HTTPRequestHead/Fields/size(name:value:)`` each).
    var size = 0
    /// The last `Content-Length` value, parsed (nil when absent or not a number).
    var contentLength: Int?
    /// Whether the last `Transfer-Encoding` says chunked.
    var chunked = false
    /// Where the fields are copied: the stack buffer in the first pass, the head's storage in
    /// the second.
    var encoder: HTTPRequestHead.Encoder?

    /// The fields of `connection`'s request.
    static func collect(_ connection: OpaquePointer) -> (fields: HTTPRequestHead.Fields, contentLength: Int?) {
        var collector = HeaderCollector()
        let bytes = withUnsafeTemporaryAllocation(byteCount: stackBytes, alignment: 1) { stack -> [UInt8] in
            collector.encoder = HTTPRequestHead.Encoder(stack)
            withUnsafeMutablePointer(to: &collector) { pointer in
                _ = MHD_get_connection_values_n(connection, .HEADER_KIND, mhdMeasureHeader, pointer)
            }
            // Every field was copied exactly when the copies add up to the measured size (a field
            // that did not fit is missing, whatever fitted after it).
            let copied = collector.encoder?.count ?? 0
            if copied == collector.size {
                return Array(UnsafeRawBufferPointer(start: stack.baseAddress, count: copied))
            }
            return [UInt8](unsafeUninitializedCapacity: collector.size) { buffer, count in
                collector.encoder = HTTPRequestHead.Encoder(UnsafeMutableRawBufferPointer(buffer))
                withUnsafeMutablePointer(to: &collector) { pointer in
                    _ = MHD_get_connection_values_n(connection, .HEADER_KIND, mhdCopyHeader, pointer)
                }
                count = collector.encoder?.count ?? 0
            }
        }
        return (HTTPRequestHead.Fields(encoded: bytes), collector.chunked ? nil : collector.contentLength)
    }

    /// `Int(text)` after trimming spaces and tabs, without making a string.
    static func integer(_ text: UnsafeRawBufferPointer) -> Int? {
        var start = 0
        var end = text.count
        while start < end, text[start] == 0x20 || text[start] == 0x09 { start += 1 }
        while end > start, text[end - 1] == 0x20 || text[end - 1] == 0x09 { end -= 1 }
        var negative = false
        if start < end, text[start] == UInt8(ascii: "+") || text[start] == UInt8(ascii: "-") {
            negative = text[start] == UInt8(ascii: "-")
            start += 1
        }
        guard start < end else { return nil }
        var value = 0
        for i in start..<end {
            let digit = Int(text[i]) - 0x30
            guard (0...9).contains(digit) else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !o1, !o2 else { return nil }
            value = sum
        }
        return value
    }

    /// Whether a `Transfer-Encoding` value names chunked (ASCII case-insensitive substring).
    static func saysChunked(_ text: UnsafeRawBufferPointer) -> Bool {
        let word: StaticString = "chunked"
        guard text.count >= 7 else { return false }
        for start in 0...(text.count - 7) where asciiCaseInsensitiveEquals(UnsafeRawBufferPointer(rebasing: text[start..<(start + 7)]), word) {
            return true
        }
        return false
    }
}

/// MHD_KeyValueIteratorN, first pass: measures one request header into a ``HeaderCollector``
/// and copies it into the collector's stack buffer when it fits.
func mhdMeasureHeader(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?, _ keySize: Int,
    _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let collector = cls.assumingMemoryBound(to: HeaderCollector.self)
    let name = UnsafeRawBufferPointer(start: key, count: keySize)
    let text = UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueSize)
    collector.pointee.size += HTTPRequestHead.Fields.size(name: keySize, value: text.count)
    collector.pointee.encoder?.append(name: name, value: text)
    if asciiCaseInsensitiveEquals(name, "Content-Length" as StaticString) {
        collector.pointee.contentLength = HeaderCollector.integer(text)
    } else if asciiCaseInsensitiveEquals(name, "Transfer-Encoding" as StaticString) {
        collector.pointee.chunked = HeaderCollector.saysChunked(text)
    }
    return .YES
}

/// MHD_KeyValueIteratorN, second pass (fields too large for the first pass's stack buffer):
/// copies one request header into the head's storage.
func mhdCopyHeader(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?, _ keySize: Int,
    _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let collector = cls.assumingMemoryBound(to: HeaderCollector.self)
    collector.pointee.encoder?.append(
        name: UnsafeRawBufferPointer(start: key, count: keySize),
        value: UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueSize))
    return .YES
}

/// MHD_ContentReaderCallback for streamed bodies: copies the stream's chunks into MHD's buffer.
func mhdStreamRead(
    _ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ max: Int
) -> Int {
    guard let cls, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
    let box = Unmanaged<ResponseStreamBox>.fromOpaque(cls).takeUnretainedValue()
    return box.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max))
}

/// MHD_ContentReaderFreeCallback: MHD is done with the streamed response.
func mhdStreamFree(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<ResponseStreamBox>.fromOpaque(cls).release()
}

/// MHD_UpgradeHandler: the 101 went out and the socket is ours. Runs on the connection's MHD
/// worker thread, so it only starts the connection's own thread (with bytes MHD read past the
/// handshake, `extra_in`). `cls` is the ``ServerCore``, `conCls` the ``RequestContext`` that
/// holds the acceptance. Whatever happens, the handle is given back with
/// `MHD_UPGRADE_ACTION_CLOSE` exactly once (here, or by the connection thread).
func mhdUpgraded(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ conCls: UnsafeMutableRawPointer?,
    _ extraIn: UnsafePointer<CChar>?, _ extraInSize: Int, _ socket: Int32, _ upgradeHandle: OpaquePointer?
) {
    guard let upgradeHandle else { return }
    guard let cls, let conCls else {
        _ = viewport_mhd_upgrade_close(upgradeHandle)
        return
    }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(conCls).takeUnretainedValue()
    guard let acceptance = context.machine.takeWebSocket() else {
        _ = viewport_mhd_upgrade_close(upgradeHandle)
        return
    }
    var initialBytes: [UInt8] = []
    if let extraIn, extraInSize > 0 {
        initialBytes = Array(UnsafeRawBufferPointer(start: extraIn, count: extraInSize))
    }
    WebSocketConnection.launch(
        socket: socket, upgradeHandle: upgradeHandle, acceptance: acceptance, initialBytes: initialBytes, core: core)
}
