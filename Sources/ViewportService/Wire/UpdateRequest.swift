import ViewportCore

/// Decodes one viewport update (`POST /v1/sessions/{id}/viewport`, or one NDJSON line).
enum UpdateRequest {
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> ViewportUpdate {
        var r = JSONReader(bytes)
        var offset: Point?
        var update = ViewportUpdate(offset: .zero)
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a viewport update object") }
        try r.readObject { r, key in
            switch key {
            case "offset": offset = try r.readPoint()
            case "size": update.size = try r.readSize()
            case "velocity": update.velocity = try r.readPoint()
            case "phase":
                let name = try r.readString()
                guard let phase = ScrollPhase(rawValue: name) else {
                    throw r.typeError(
                        "\"\(name)\" is not one of \(ScrollPhase.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
                }
                update.phase = phase
            case "seq": update.seq = UInt64(try r.readCount())
            default: throw r.unknownField(key, in: "viewport update")
            }
        }
        try r.finish()
        guard let offset else { throw JSONReader.missingField("offset") }
        update.offset = offset
        return update
    }
}
