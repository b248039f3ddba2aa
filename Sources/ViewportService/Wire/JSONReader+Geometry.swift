import ViewportCore
import ViewportJSON

extension JSONReader {
    mutating func readPoint() throws -> Point {
        let (x, y) = try readDoublePair()
        return Point(x: x, y: y)
    }

    mutating func readSize() throws -> Size {
        let (w, h) = try readDoublePair()
        return Size(width: w, height: h)
    }

    mutating func readInsets() throws -> Insets {
        let (top, left, bottom, right) = try readDoubleQuad()
        return Insets(top: top, left: left, bottom: bottom, right: right)
    }

    /// An update's `seq`: a JSON integer. One below 0 is ``SessionError/seqBelowZero``: a 409 like
    /// any number that is neither the last sequence number nor the next, not a 400.
    mutating func readSeq() throws -> UInt64 {
        let value = try readInt()
        return value < 0 ? SessionError.seqBelowZero : UInt64(value)
    }

    /// A JSON integer that is not negative (counts); errors are named by the reader's path.
    mutating func readCount() throws -> Int {
        let value = try readInt()
        guard value >= 0 else { throw typeError("expected a non-negative integer, got \(value)") }
        return value
    }
}

extension JSONReader {
    /// A string that must be one of an enumeration's raw values; anything else is a 400 listing them.
    mutating func readEnum<E: RawRepresentable & CaseIterable>(_ type: E.Type) throws -> E where E.RawValue == String {
        let name = try readString()
        guard let value = E(rawValue: name) else {
            throw typeError("\"\(name)\" is not one of \(E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
        }
        return value
    }
}
