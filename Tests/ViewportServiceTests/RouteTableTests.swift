import Foundation
import Testing
import ViewportCore
@testable import ViewportService

/// ``RouteTable`` and ``Route``: every path pattern parses back from its template and answers
/// the methods of the contract, in the order `Allow` lists them.
@Suite struct RouteTableTests {
    private func table() -> RouteTable {
        let layouts = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        let sessions = SessionStore(maxSessions: 4, idleTimeoutSeconds: 60, layouts: layouts)
        let service = SessionService(layouts: layouts, sessions: sessions, sharedStore: false, metrics: ServiceMetrics(), maxItems: 100, maxViews: 100)
        return RouteTable(service: service, maxBodyBytes: 1024)
    }

    @Test func everyTemplateParsesBackToItsPatternWithItsId() {
        for pattern in RoutePattern.allCases {
            let path = pattern.template.replacingOccurrences(of: "{id}", with: "abc123")
            let route = Route(path: path)
            #expect(route?.pattern == pattern, "\(path)")
            #expect(route?.id == (pattern.template.contains("{id}") ? "abc123" : ""), "\(path)")
        }
    }

    @Test func everyPatternAnswersTheContractsMethods() {
        let table = table()
        let expected: [RoutePattern: [String]] = [
            .layouts: ["POST"], .sessions: ["POST"], .sessionViewport: ["POST"], .sessionResync: ["POST"],
            .session: ["GET", "DELETE"], .sessionLayout: ["GET", "PUT", "PATCH"],
        ]
        for pattern in RoutePattern.allCases {
            #expect(table.endpoints(pattern).map(\.method) == expected[pattern, default: ["GET"]], "\(pattern.template)")
        }
    }
}
