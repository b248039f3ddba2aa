import FuzzServiceChecks
import FuzzSupport
import ViewportCore
@testable import ViewportService

// The layout body (POST /v1/layouts: items, or sections with axis, insets and spacing) from
// arbitrary bytes, decoded as the handler does:
// - it never crashes; a refusal is a 400, 413 or 422 problem with a detail;
// - an accepted layout is sound (see requireSoundLayout), and decoding the same bytes again gives
//   the same content-addressed id.

let maxItems = 5000

func decode(_ bytes: UnsafeRawBufferPointer) throws -> Layout {
    var r = JSONReader(bytes)
    let layout = try LayoutDecoder(maxItems: maxItems).decodeDeferringInvalid(&r)
    try r.finish()
    return try layout.get()
}

runFuzzer { bytes in
    do {
        let layout = try decode(bytes)
        requireSoundLayout(layout, maxItems: maxItems, "layout")
        let again = try? decode(bytes)
        require(again?.digest == layout.digest, "the same body gave the ids \(layout.digest) and \(again?.digest ?? "none")")
    } catch {
        requireClientProblem(error, "layout")
    }
}
