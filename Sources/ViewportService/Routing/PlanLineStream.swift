import Synchronization
import ViewportHTTP

/// The plan lines of an NDJSON update stream, sent as a chunked response. Each chunk is released
/// as soon as it has been handed to the server, so memory drains while the answer goes out.
final class PlanLineStream: HTTPResponseStream {
    private let chunks: Mutex<(list: [[UInt8]], next: Int)>

    init(_ chunks: [[UInt8]]) {
        self.chunks = Mutex((chunks, 0))
    }

    func nextChunk() -> [UInt8]? {
        chunks.withLock { state in
            guard state.next < state.list.count else { return nil }
            let chunk = state.list[state.next]
            state.list[state.next] = []
            state.next += 1
            return chunk
        }
    }
}
