#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target `runFuzzer` was given; set once before the driver starts, read by its callback.
nonisolated(unsafe) private var target: ((UnsafeRawBufferPointer) -> Void)?

/// Runs libFuzzer's driver with `body` as the fuzz target; the driver's flags (`-runs`,
/// `-max_total_time`, corpus directories, …) come from the command line.
///
/// A SwiftPM executable has a `main` of its own, so libFuzzer's `main` is not linked in: the
/// target's `main.swift` calls this instead (libFuzzer's documented `LLVMFuzzerRunDriver`).
/// A failed check is a `fatalError` (see ``require(_:_:)``), which libFuzzer reports as a crash
/// and saves the input of.
public func runFuzzer(_ body: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
    target = body
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        target?(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
    exit(status)
}

/// libFuzzer's archive refers to this symbol (its own `main` would call it); it runs the same target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    target?(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// A property of the code under test: a violation stops the run as a crash, with `message`.
@inline(__always)
public func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition { fatalError("fuzz check failed: \(message())", file: file, line: line) }
}

/// `bytes` as a Swift string literal body, for messages.
public func escaped(_ bytes: some Sequence<UInt8>) -> String {
    var out = ""
    for b in bytes {
        switch b {
        case 0x20..<0x7F where b != UInt8(ascii: "\\") && b != UInt8(ascii: "\""): out.unicodeScalars.append(Unicode.Scalar(b))
        default: out += "\\u{\(String(b, radix: 16))}"
        }
    }
    return out
}

/// Writes a line to standard error at once (a crash would lose buffered standard output).
public func log(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}
