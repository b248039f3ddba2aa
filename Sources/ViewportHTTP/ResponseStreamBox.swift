/// Holds a response stream and the unsent rest of its current chunk while MHD sends it.
final class ResponseStreamBox {
    let stream: any HTTPResponseStream
    private var pending: [UInt8] = []
    private var offset = 0

    init(_ stream: any HTTPResponseStream) {
        self.stream = stream
    }

    /// Fills `buffer` with the next bytes; -1 (MHD_CONTENT_READER_END_OF_STREAM) at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while offset >= pending.count {
            guard let next = stream.nextChunk() else { return -1 }
            pending = next
            offset = 0
        }
        let count = min(buffer.count, pending.count - offset)
        pending.withUnsafeBytes { source in
            guard let from = source.baseAddress, let to = buffer.baseAddress else { return }
            to.copyMemory(from: from + offset, byteCount: count)
        }
        offset += count
        return count
    }
}
