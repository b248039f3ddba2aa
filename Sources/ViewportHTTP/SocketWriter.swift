import CMicroHTTPD

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes to a non-blocking socket from outside MHD's own I/O: the mid-body answer of
/// ``RequestDriver`` and every frame of a ``WebSocketConnection``.
enum SocketWriter {
    /// Writes all of `bytes` with as few `send` calls (`MSG_NOSIGNAL`) as the socket allows,
    /// waiting for room with `poll`. Gives up (false) on an error, after `seconds`, or when
    /// `abortWhen` says so after a wait in which `wakeFD` (polled too, when not -1) became readable
    /// or the socket stayed full.
    static func writeAll(
        _ bytes: [UInt8], to fd: Int32, within seconds: Double, wakeFD: Int32 = -1, abortWhen: () -> Bool = { false }
    ) -> Bool {
        writeAll(bytes, to: fd, until: monotonicSeconds() + seconds, wakeFD: wakeFD, abortWhen: abortWhen)
    }

    /// ``writeAll(_:to:within:wakeFD:abortWhen:)`` for `pieces` written in order, all within
    /// `seconds` (a live answer's end: the sink's pieces, never joined into one buffer).
    static func writeAll(
        pieces: [[UInt8]], to fd: Int32, within seconds: Double, wakeFD: Int32 = -1, abortWhen: () -> Bool = { false }
    ) -> Bool {
        let deadline = monotonicSeconds() + seconds
        return pieces.allSatisfy { writeAll($0, to: fd, until: deadline, wakeFD: wakeFD, abortWhen: abortWhen) }
    }

    private static func writeAll(
        _ bytes: [UInt8], to fd: Int32, until deadline: Double, wakeFD: Int32, abortWhen: () -> Bool
    ) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                offset += written
                continue
            }
            guard written < 0, isTransient(errno) else { return false }
            let now = monotonicSeconds()
            guard now < deadline else { return false }
            var waiters = [
                pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
                pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
            ]
            _ = poll(&waiters, 2, min(1000, milliseconds(until: deadline, from: now)))
            if waiters[0].revents == 0 && abortWhen() { return false }
        }
        return true
    }

    /// EAGAIN, EWOULDBLOCK or EINTR: try again.
    static func isTransient(_ code: Int32) -> Bool {
        code == EAGAIN || code == EWOULDBLOCK || code == EINTR
    }

    /// A `poll` timeout: the milliseconds from `now` to `deadline`, rounded up.
    static func milliseconds(until deadline: Double, from now: Double) -> Int32 {
        Int32(clamping: Int(((deadline - now) * 1000).rounded(.up)))
    }

    /// Monotonic seconds.
    static func monotonicSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
