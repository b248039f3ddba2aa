#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ViewportCore
import ViewportJSON

/// One viewport update as sent (`POST /v1/sessions/{id}/viewport`, or one NDJSON line), with
/// item ids not yet resolved: a session's layout can change between reading and applying, so ids
/// are resolved under the session's lock (`resolve(in:)`).
struct UpdateRequest: Sendable {
    enum Destination: Sendable {
        case offset(Point)
        case scrollTo(ScrollToRequest)
    }

    /// `select`: absent (keep), `null` (clear) or an id.
    enum SelectRequest: Sendable {
        case clear
        case id(String)
    }

    var destination: Destination
    var size: Size?
    var velocity: Point?
    var phase: ScrollPhase = .idle
    var seq: UInt64?
    var select: SelectRequest?
    var time: Double?
    var rtt: Double?

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> UpdateRequest {
        if let offset = Self.offsetOnly(bytes) { return UpdateRequest(destination: .offset(offset)) }
        return try decodeObject(bytes)
    }

    /// Any update, through the general object reader.
    static func decodeObject(_ bytes: UnsafeRawBufferPointer) throws -> UpdateRequest {
        var r = JSONReader(bytes)
        var offset: Point?
        var scrollTo: ScrollToRequest?
        var request = UpdateRequest(destination: .offset(.zero))
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a viewport update object") }
        try r.readObject { r, key in
            switch key {
            case "offset": offset = try r.readPoint()
            case "scrollTo": scrollTo = try ScrollToRequest.decode(&r)
            case "size": request.size = try r.readSize()
            case "velocity": request.velocity = try r.readPoint()
            case "phase": request.phase = try r.readEnum(ScrollPhase.self)
            case "seq": request.seq = try r.readSeq()
            case "select": request.select = r.readNullIfPresent() ? .clear : .id(try r.readString())
            case "time": request.time = try r.readDouble()
            case "rtt": request.rtt = try r.readDouble()
            default: throw r.unknownField(key, in: "viewport update")
            }
        }
        try r.finish()
        switch (offset, scrollTo) {
        case (let offset?, nil): request.destination = .offset(offset)
        case (nil, let target?): request.destination = .scrollTo(target)
        case (nil, nil): throw JSONReader.missingField("offset")
        case (_?, _?): throw JSONError(.type, "send either offset or scrollTo, not both")
        }
        return request
    }

    /// The offset of the commonest update, `{"offset":[x,y]}` (whitespace allowed where JSON
    /// allows it), read without the object machinery (closures, key bookkeeping): about half of
    /// an update's decoding cost. Anything else, valid or not, is nil and goes the general way
    /// (which reports its errors); the numbers are read by the same ``JSONReader/readDouble()``.
    static func offsetOnly(_ bytes: UnsafeRawBufferPointer) -> Point? {
        var r = JSONReader(bytes)
        func skip(_ byte: UInt8) -> Bool {
            r.skipWhitespace()
            guard r.position < bytes.count, bytes[r.position] == byte else { return false }
            r.position += 1
            return true
        }
        let key: StaticString = "\"offset\""
        guard skip(UInt8(ascii: "{")) else { return nil }
        r.skipWhitespace()
        guard bytes.count - r.position >= key.utf8CodeUnitCount, let base = bytes.baseAddress,
            memcmp(base + r.position, key.utf8Start, key.utf8CodeUnitCount) == 0
        else { return nil }
        r.position += key.utf8CodeUnitCount
        guard skip(UInt8(ascii: ":")), skip(UInt8(ascii: "[")), let x = try? r.readDouble(), skip(UInt8(ascii: ",")),
            let y = try? r.readDouble(), skip(UInt8(ascii: "]")), skip(UInt8(ascii: "}")), r.isAtEnd()
        else { return nil }
        return Point(x: x, y: y)
    }

    /// The core's update, with ids resolved in `layout`; an unknown id is a 422 naming the field.
    func resolve(in layout: Layout) throws(Problem) -> ViewportUpdate {
        let destination: ViewportUpdate.Destination
        switch self.destination {
        case .offset(let point):
            destination = .offset(point)
        case .scrollTo(let target):
            destination = .scrollTo(try target.resolve(in: layout))
        }
        var selection: Selection?
        switch select {
        case nil: selection = nil
        case .clear?: selection = .clear
        case .id(let id)?:
            guard let item = layout.item(withID: id) else { throw .invalid("select: \"\(id)\" is not an item of the layout") }
            selection = .item(item)
        }
        return ViewportUpdate(destination: destination, size: size, velocity: velocity, phase: phase, seq: seq, select: selection, time: time, rtt: rtt)
    }
}
