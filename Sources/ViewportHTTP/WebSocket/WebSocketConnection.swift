import CMicroHTTPD

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One upgraded connection, served by its own thread: reads frames, hands messages to the
/// application's ``WebSocketMessageHandler``, writes replies, answers pings, pings an idle peer,
/// and closes (with a close frame) when either side is done, the peer breaks the protocol, goes
/// silent, or the server stops.
///
/// Thread confinement: created in MHD's upgrade callback, then touched only by the thread that
/// ``launch`` starts (hence `@unchecked Sendable`). The thread ends by handing the socket back
/// to MHD with `MHD_UPGRADE_ACTION_CLOSE` — exactly once, and MHD closes the socket (never
/// `close()` it here) — and then leaving the ``ConnectionThreads``.
final class WebSocketConnection: @unchecked Sendable {
    /// Stack of a connection thread: the work per message (decode, plan, encode) is shallow.
    static let stackSize = 512 * 1024
    /// How long a closing connection waits for the peer's own close frame (or end of stream)
    /// after sending its close frame, so that the close frame is not lost to a TCP reset.
    static let lingerSeconds = 1.0
    private static let readSize = 64 * 1024

    private let socket: Int32
    private let upgradeHandle: OpaquePointer
    private let handler: any WebSocketMessageHandler
    private var parser: WebSocketFrameParser
    private let hub: ConnectionThreads
    /// Holds the server's shared budget for bytes being received (``ServerCore/reserveBody(_:)``):
    /// a socket's unparsed frames and half-assembled message count like a body being read.
    private let budget: ServerCore
    /// The part of that budget this connection holds now.
    private var reserved = 0

    private init(
        socket: Int32, upgradeHandle: OpaquePointer, acceptance: WebSocketAcceptance, initialBytes: [UInt8],
        hub: ConnectionThreads, budget: ServerCore
    ) {
        self.socket = socket
        self.upgradeHandle = upgradeHandle
        self.handler = acceptance.handler
        self.hub = hub
        self.budget = budget
        parser = WebSocketFrameParser(maxMessageBytes: acceptance.maxMessageBytes)
        // Frames the client sent right behind its handshake, already read by MHD.
        parser.append(initialBytes)
    }

    /// Starts serving an upgraded socket on a new thread (called from MHD's upgrade callback, so
    /// it must not block). When the hub refuses (server stopping) or no thread can be made, the
    /// socket goes straight back to MHD.
    static func launch(
        socket: Int32, upgradeHandle: OpaquePointer, acceptance: WebSocketAcceptance, initialBytes: [UInt8], core: ServerCore
    ) {
        let hub = core.webSockets
        guard hub.enter() else {
            acceptance.handler.closed()
            _ = viewport_mhd_upgrade_close(upgradeHandle)
            return
        }
        let connection = WebSocketConnection(
            socket: socket, upgradeHandle: upgradeHandle, acceptance: acceptance, initialBytes: initialBytes, hub: hub,
            budget: core)
        guard DetachedThread.start(stackSize: stackSize, { connection.run() }) else {
            core.log("cannot start a WebSocket thread; closing the connection")
            connection.finish()
            return
        }
    }

    /// The thread's whole life.
    func run() {
        configureSocket()
        serve()
        finish()
    }

    /// Tells the application, hands the socket back to MHD, leaves the hub (in that order: the
    /// server stops the daemon only once the hub is empty).
    private func finish() {
        budget.releaseBody(reserved)
        reserved = 0
        handler.closed()
        _ = viewport_mhd_upgrade_close(upgradeHandle)
        hub.leave()
    }

    /// The socket is set non-blocking whatever mode MHD handed it in, since every wait here goes
    /// through `poll` with a deadline. Replies are single small frames that must leave at once:
    /// no Nagle, and no cork (in case MHD left one on after sending the 101).
    private func configureSocket() {
        let flags = fcntl(socket, F_GETFL)
        if flags >= 0 { _ = fcntl(socket, F_SETFL, flags | O_NONBLOCK) }
        var one: Int32 = 1, zero: Int32 = 0
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Glibc)
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &zero, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    private func serve() {
        let timeout = hub.timeoutSeconds
        var lastHeard = Self.now()
        var pinged = false
        var chunk = [UInt8](repeating: 0, count: Self.readSize)
        var outgoing: [UInt8] = []
        while true {
            guard accountBuffered() else {
                closeAndLinger(code: WebSocketCloseCode.tryAgainLater, reason: "server busy receiving other data; retry", awaitingCloseFrame: false)
                return
            }
            while let event = parser.next() {
                switch event {
                case .message(_, let payload):
                    let reply = payload.withUnsafeBytes { handler.message($0) }
                    if let text = reply.text {
                        text.withUnsafeBytes { WebSocketFrame.append(.text, payload: $0, to: &outgoing) }
                    }
                    if let close = reply.close {
                        guard flush(&outgoing, within: timeout) else { return }
                        closeAndLinger(code: close.code, reason: close.reason, awaitingCloseFrame: true)
                        return
                    }
                    if outgoing.count >= Self.readSize {
                        guard flush(&outgoing, within: timeout) else { return }
                    }
                case .ping(let payload):
                    payload.withUnsafeBytes { WebSocketFrame.append(.pong, payload: $0, to: &outgoing) }
                case .pong:
                    break
                case .close(let code, _):
                    // Echo its code; after both close frames the server closes TCP first (§7.1.1).
                    guard flush(&outgoing, within: timeout) else { return }
                    _ = send(WebSocketFrame.close(code: code), within: Self.lingerSeconds, abortOnShutdown: false)
                    return
                case .failure(let code, let reason):
                    guard flush(&outgoing, within: timeout) else { return }
                    closeAndLinger(code: code, reason: reason, awaitingCloseFrame: false)
                    return
                }
            }
            // The replies to every message read so far go out in one write, before this thread
            // waits: a client that pipelines its updates gets many plans per `send`, one that
            // waits for each plan gets it at once.
            guard flush(&outgoing, within: timeout) else { return }
            // What the events handed out goes back to the budget before this thread waits.
            _ = accountBuffered()
            if hub.isShuttingDown {
                closeAndLinger(code: WebSocketCloseCode.goingAway, reason: "server shutting down", awaitingCloseFrame: true)
                return
            }
            let now = Self.now()
            let deadline = lastHeard + (pinged ? timeout : timeout / 2)
            if now >= deadline {
                if pinged {
                    closeAndLinger(code: WebSocketCloseCode.goingAway, reason: "nothing received for \(Int(timeout)) s", awaitingCloseFrame: true)
                    return
                }
                guard send(WebSocketFrame.encode(.ping, payload: []), within: timeout, abortOnShutdown: true) else { return }
                pinged = true
                continue
            }
            switch waitReadable(milliseconds: SocketWriter.milliseconds(until: deadline, from: now)) {
            case .readable:
                let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    lastHeard = Self.now()
                    pinged = false
                    chunk.withUnsafeBytes { parser.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                } else if count == 0 || !SocketWriter.isTransient(errno) {
                    return  // The peer vanished (end of stream or reset) without a close frame.
                }
            case .timeout, .shutdown:
                continue
            case .error:
                return
            }
        }
    }

    /// Brings this connection's share of the server's receive budget to what the parser holds;
    /// false when growing it would pass the budget.
    private func accountBuffered() -> Bool {
        let now = parser.bufferedBytes
        if now > reserved {
            guard budget.reserveBody(now - reserved) else { return false }
        } else if now < reserved {
            budget.releaseBody(reserved - now)
        }
        reserved = now
        return true
    }

    /// Sends a close frame, half-closes, then waits (``lingerSeconds`` at most) for the peer's close
    /// frame (when the protocol is intact) or its end of stream, dropping anything else.
    private func closeAndLinger(code: UInt16, reason: String, awaitingCloseFrame: Bool) {
        guard send(WebSocketFrame.close(code: code, reason: reason), within: Self.lingerSeconds, abortOnShutdown: false) else { return }
        _ = shutdown(socket, Int32(SHUT_WR))
        let deadline = Self.now() + Self.lingerSeconds
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let now = Self.now()
            guard now < deadline else { return }
            var waiter = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiter, 1, SocketWriter.milliseconds(until: deadline, from: now))
            if ready < 0 && errno != EINTR { return }
            if ready <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count == 0 || (count < 0 && !SocketWriter.isTransient(errno)) { return }
            guard count > 0, awaitingCloseFrame else { continue }
            chunk.withUnsafeBytes { parser.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            while let event = parser.next() {
                switch event {
                case .close, .failure: return
                case .message, .ping, .pong: continue
                }
            }
        }
    }

    private enum Wait {
        case readable, timeout, shutdown, error
    }

    /// Waits for bytes on the socket, the hub's shutdown signal, or the timeout (capped at a
    /// second, so a missed wake-up costs a second at most).
    private func waitReadable(milliseconds: Int32) -> Wait {
        var waiters = [
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: hub.wakeReadEnd, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&waiters, 2, min(milliseconds, 1000))
        if ready < 0 { return errno == EINTR ? .timeout : .error }
        if ready == 0 { return .timeout }
        if waiters[0].revents != 0 { return .readable }  // POLLHUP/POLLERR too: recv reports them.
        return .shutdown
    }

    /// Writes the frames gathered in `outgoing` (if any) and empties it; false when that failed.
    private func flush(_ outgoing: inout [UInt8], within seconds: Double) -> Bool {
        guard !outgoing.isEmpty else { return true }
        defer {
            // Kept for the next replies, unless a burst made it large.
            if outgoing.capacity > 4 * Self.readSize { outgoing = [] } else { outgoing.removeAll(keepingCapacity: true) }
        }
        return send(outgoing, within: seconds, abortOnShutdown: true)
    }

    /// Writes one frame. Gives up (false) after `seconds`, on an error, or — when
    /// `abortOnShutdown` — once the server stops while the peer is not reading.
    private func send(_ bytes: [UInt8], within seconds: Double, abortOnShutdown: Bool) -> Bool {
        SocketWriter.writeAll(bytes, to: socket, within: seconds, wakeFD: abortOnShutdown ? hub.wakeReadEnd : -1) {
            abortOnShutdown && hub.isShuttingDown
        }
    }

    private static func now() -> Double { SocketWriter.monotonicSeconds() }
}
