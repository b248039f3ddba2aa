#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Deterministic random numbers (SplitMix64) for the tests: every random test draws from one, so a
/// failure can be replayed.
///
/// Each generator prints its seed with the test's name. `VIEWPORTD_TEST_SEED=<n>` replaces the
/// seed of every generator (run the failing test alone with `--filter` to replay it), and
/// `VIEWPORTD_TEST_SEED=random` draws fresh seeds, printed the same way, to explore further than
/// the fixed ones.
public struct TestRandom: RandomNumberGenerator, Sendable {
    /// The seed in use (after the environment's override).
    public let seed: UInt64
    private var state: UInt64

    /// A generator for the test `name`, seeded with `seed` unless the environment overrides it.
    public init(seed: UInt64, name: String = #function, file: String = #fileID) {
        self.seed = Self.override ?? seed
        state = self.seed &+ 0x9E37_79B9_7F4A_7C15
        print("\(file) \(name): seed \(self.seed) (replay: VIEWPORTD_TEST_SEED=\(self.seed))")
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `VIEWPORTD_TEST_SEED`: a number, or `random` (a fresh seed per generator).
    private static var override: UInt64? {
        guard let value = getenv("VIEWPORTD_TEST_SEED").map({ String(cString: $0) }) else { return nil }
        if value == "random" { return UInt64.random(in: 0...UInt64.max) }
        guard let seed = UInt64(value) else { fatalError("VIEWPORTD_TEST_SEED must be a number or \"random\", not \(value)") }
        return seed
    }
}
