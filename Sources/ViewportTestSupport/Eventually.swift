#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Polls `condition` until it holds or `seconds` pass, and answers whether it held: for waiting
/// on what another thread (the server) does in its own time. A fixed sleep before an assertion
/// races it; a poll with a deadline only fails when the thing really does not happen.
///
/// ```swift
/// #expect(try eventually { try client.state(session).int("seq") == 2 })
/// ```
public func eventually(within seconds: Double = 5, every interval: Double = 0.01, _ condition: () throws -> Bool) rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .milliseconds(Int64(seconds * 1000)))
    while true {
        if try condition() { return true }
        if clock.now >= deadline { return false }
        usleep(useconds_t(interval * 1_000_000))
    }
}

/// How much slower than a normal debug build the tests run: 10 under ThreadSanitizer
/// (`scripts/tsan.sh` builds with `-DVIEWPORTD_TSAN`), else 1. Time bounds that check a cost
/// (not a hang) scale by it.
public let sanitizerSlowdown: Double = {
    #if VIEWPORTD_TSAN
    return 10
    #else
    return 1
    #endif
}()
