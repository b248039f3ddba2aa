import Foundation

/// Runs `body(i)` on `count` OS threads at once and waits for all (at most `timeout` seconds).
/// Returns false on timeout. Real threads, not tasks: the tests drive a blocking socket client.
@discardableResult
public func onThreads(_ count: Int, timeout: Double = 30, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    return group.wait(timeout: .now() + timeout) == .success
}
