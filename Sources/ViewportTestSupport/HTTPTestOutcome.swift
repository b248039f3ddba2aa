/// How a server disposed of a request it may refuse: it answered, or it closed the connection
/// without an answer. A hang is neither: reading it times out and throws.
public enum HTTPTestOutcome: Sendable {
    case answered(HTTPTestResponse)
    case closed

    /// The answer's status, nil for a close.
    public var status: Int? {
        if case .answered(let response) = self { return response.status }
        return nil
    }
}

extension HTTPTestClient {
    /// Reads the answer to a request the server may refuse by closing the connection. Throws
    /// ``HTTPTestClientError/timedOut`` when the server neither answers nor closes within the
    /// client's timeout (a hang fails the test), and ``HTTPTestClientError/malformed(_:)`` for
    /// bytes that are not an HTTP response.
    public func readAnswerOrClose() throws(HTTPTestClientError) -> HTTPTestOutcome {
        do {
            return .answered(try readResponse())
        } catch .closedByPeer {
            return .closed
        }
    }
}

extension HTTPTestClient {
    /// Sends `bytes` a server should refuse on a fresh connection to `port` and reads how it
    /// disposed of them. A close while the bytes were still being sent is a refusal too: what the
    /// server answered before closing is still read. A hang throws (see `readAnswerOrClose`).
    public static func outcome(ofSending bytes: [UInt8], port: Int, timeout: Double = 3) throws(HTTPTestClientError) -> HTTPTestOutcome {
        let client = try connect(port: port, timeout: timeout)
        defer { client.close() }
        do {
            try client.sendRaw(bytes)
        } catch .closedByPeer {
            // Closed while we were still sending: what it answered is still readable.
        }
        return try client.readAnswerOrClose()
    }
}
