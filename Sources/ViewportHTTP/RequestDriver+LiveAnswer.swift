import CMicroHTTPD

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A live answer (see ``HTTPLiveBodySink`` and ``LiveAnswer``): started and fed while the body
/// arrives, finished after it.
extension RequestDriver {
    /// After a body chunk: starts the live answer once there is enough to say, then hands the
    /// socket what is ready. Closes the connection when the socket is broken.
    func advanceLive(_ sink: any HTTPLiveBodySink) -> MHD_Result {
        if context.live == nil {
            let ready = sink.readyBytes
            guard ready >= LiveAnswer.thresholdBytes
                || (ready > 0 && SocketWriter.monotonicSeconds() - context.startedAt >= LiveAnswer.afterSeconds)
            else { return .YES }
            let socket = viewport_mhd_connection_fd(connection)
            guard socket >= 0 else { return .YES }
            context.live = LiveAnswer(socket: socket, status: sink.liveStatus, headers: sink.liveHeaders)
            context.live?.append(chunk: sink.takeReady())
        }
        // A piece at a time, and the next only once the socket has taken the last: what the
        // client does not read waits in the sink, where its bound is kept.
        while true {
            guard context.live?.flush() == true else { return .NO }
            guard context.live?.isFlushed == true, sink.readyBytes > 0 else { return .YES }
            context.live?.append(chunk: sink.takeReady())
        }
    }

    /// The body grew past its limit during a live answer: the sink's last lines (its 413
    /// problem) end the answer, written within a second like any mid-body answer; the rest of
    /// the body is dropped and the connection closes.
    func endLiveMidBody(_ response: HTTPResponse) -> MHD_Result {
        guard var live = context.live else { return answerMidBody(response) }
        context.live = nil
        context.phase = .answeredMidBody
        context.received = 0
        Self.appendBody(of: response, to: &live)
        live.appendEnd()
        guard SocketWriter.writeAll(live.unwritten, to: live.socket, within: 1) else { return .NO }
        _ = shutdown(live.socket, Int32(SHUT_WR))
        return .YES
    }

    /// The body has ended: the rest of the answer and its last chunk go out, then the connection
    /// closes. What the socket does not take at once is written by a drain thread while MHD keeps
    /// the connection suspended (the worker serves its other connections meanwhile); the thread
    /// resumes it when done, and the final call then closes it (``RequestContext/Phase/closeOnResume``).
    func finishLive(_ response: HTTPResponse) -> MHD_Result {
        guard var live = context.live else { return queue(response) }
        context.live = nil
        Self.appendBody(of: response, to: &live)
        live.appendEnd()
        guard live.flush() else { return .NO }
        if live.isFlushed {
            // MHD closes the socket on `.NO`; the kernel still delivers what was written.
            _ = shutdown(live.socket, Int32(SHUT_WR))
            return .NO
        }
        let drains = core.liveDrains
        guard drains.enter() else { return .NO }  // stopping: no new threads
        let rest = live.unwritten
        let socket = live.socket
        let suspended = SuspendedConnection(pointer: connection)
        // A client that reads only after sending gets the rest at 1 MB/s at least.
        let seconds = drains.timeoutSeconds + Double(rest.count) / 1_000_000
        MHD_suspend_connection(connection)
        context.phase = .closeOnResume
        let started = DetachedThread.start(stackSize: 128 * 1024) {
            if SocketWriter.writeAll(rest, to: socket, within: seconds, wakeFD: drains.wakeReadEnd, abortWhen: { drains.isShuttingDown }) {
                _ = shutdown(socket, Int32(SHUT_WR))
            }
            MHD_resume_connection(suspended.pointer)
            drains.leave()
        }
        if !started {
            core.log("cannot start a thread to finish a streamed answer; closing the connection")
            MHD_resume_connection(connection)
            drains.leave()
        }
        return .YES
    }

    /// Appends a response's body to a live answer as chunks (a stream is read to its end).
    private static func appendBody(of response: HTTPResponse, to live: inout LiveAnswer) {
        switch response.body {
        case .bytes(let bytes):
            live.append(chunk: bytes)
        case .stream(let stream):
            while let chunk = stream.nextChunk() { live.append(chunk: chunk) }
        }
    }

    /// The reason phrase of a status (`OK`, `Payload Too Large`, …), or empty.
    static func reasonPhrase(_ status: Int) -> String {
        MHD_get_reason_phrase_for(UInt32(clamping: status)).map { String(cString: $0) } ?? ""
    }
}

/// A connection MHD holds suspended, handed to the thread that will resume it (MHD allows that
/// from any thread; the pointer stays valid until then).
private struct SuspendedConnection: @unchecked Sendable {
    let pointer: OpaquePointer
}
