import Foundation
import Testing
import ViewportTestSupport

/// Finite but extreme client numbers over HTTP: every plan must carry numbers only (docs/api.md
/// "Conventions"), never `null` for a value that overflowed.
@Suite struct ExtremeNumberHTTPTests {
    /// Every number in a JSON value, and whether some value is `null`.
    static func numbers(in value: Any) -> (numbers: [Double], nulls: Int) {
        switch value {
        case let number as NSNumber: return ([number.doubleValue], 0)
        case is NSNull: return ([], 1)
        case let array as [Any]: return array.map(numbers(in:)).reduce(([], 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
        case let object as [String: Any]: return object.values.map(numbers(in:)).reduce(([], 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
        default: return ([], 0)
        }
    }

    static func expectNumbers(_ reply: Reply, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == 200, "\(what): \(reply.text)", sourceLocation: sourceLocation)
        let (numbers, nulls) = numbers(in: reply.json)
        #expect(nulls == 0 && numbers.allSatisfy(\.isFinite), "\(what): \(reply.text)", sourceLocation: sourceLocation)
    }

    /// The reported case: a looping session with `paging.decelerationRate` near 1 and a `drag-end`
    /// velocity of 1e307 answered `"target":[0,null]` (and crashed a debug build).
    @Test(arguments: ["none", "page", "snap", "items"])
    func dragEndOfALoopingSessionAnswersAFiniteTarget(mode: String) throws {
        try withService { service in
            let client = try service.connect()
            let layout = layoutJSON(listItems(40, height: 100))
            let session = try client.openSession(
                #"{"layout":\#(layout),"viewport":[375,400],"buffer":0,"loop":true,"paging":{"mode":"\#(mode)","axis":"y","decelerationRate":0.9999999999999999}}"#
            ).id
            var seq = 0
            for velocity in ["1e307", "-1e307", "1.7976931348623157e308", "-1.7976931348623157e308"] {
                seq += 1
                Self.expectNumbers(try client.update(session, #"{"offset":[0,0],"phase":"drag-begin","seq":\#(seq)}"#), "drag-begin")
                seq += 1
                let reply = try client.update(session, #"{"offset":[0,10],"velocity":[0,\#(velocity)],"phase":"drag-end","seq":\#(seq)}"#)
                Self.expectNumbers(reply, "\(mode) drag-end at \(velocity)")
                let target = reply.json.doubles("target")
                #expect(target.count == 2 && abs(target[1]) <= 1e12, "\(reply.text)")
            }
        }
    }

    @Test func linksAndHugeInsetsAnswerFiniteOffsets() throws {
        try withService { service in
            let client = try service.connect()
            let huge = "1.7976931348623157e308"
            let session = try client.openSession(
                #"{"layout":\#(layoutJSON(listItems(10))),"viewport":[375,\#(huge)],"insets":[\#(huge),-\#(huge),\#(huge),-\#(huge)],"links":{"bg":{"viewport":[0,0],"contentSize":[\#(huge),\#(huge)]}}}"#)
            Self.expectNumbers(Reply(status: 200, headers: [], body: Array(try JSONSerialization.data(withJSONObject: session.json))), "opening plan")
            for (k, offset) in ["0", huge, "-\(huge)", "1e300"].enumerated() {
                Self.expectNumbers(try client.update(session.id, #"{"offset":[\#(offset),\#(offset)],"seq":\#(k + 1)}"#), "offset \(offset)")
            }
        }
    }
}
