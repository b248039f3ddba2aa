import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// `POST /v1/layouts` and `GET /v1/layouts/{id}` over real HTTP.
@Suite struct LayoutEndpointTests {
    static let example = #"""
        {"items": [{"id": "0/0", "rect": [25, 15, 156, 150], "reuse": "card"},
                   {"id": "ad",  "rect": [25, 180, 325, 90]}],
         "contentSize": [375, 1030]}
        """#

    @Test func postingANewLayoutAnswers201WithIdItemsAndContentSize() throws {
        try withService { service in
            let client = try service.connect()
            let reply = try client.post("/v1/layouts", Self.example)
            #expect(reply.status == 201)
            #expect(reply.header("Content-Type") == "application/json")
            let json = reply.json
            let id = try #require(json["layout"] as? String)
            #expect(!id.isEmpty)
            #expect(json.int("items") == 2)
            #expect(json.doubles("contentSize") == [375, 1030])
            #expect(json["sessions"] == nil)
        }
    }

    @Test func postingTheSameLayoutAgainAnswers200WithTheSameId() throws {
        try withService { service in
            let client = try service.connect()
            let first = try client.post("/v1/layouts", Self.example)
            let second = try client.post("/v1/layouts", Self.example)
            #expect(first.status == 201)
            #expect(second.status == 200)
            #expect(first.json["layout"] as? String == second.json["layout"] as? String)
            #expect(second.json.int("items") == 2)
        }
    }

    @Test func reuseAbsentNullAndEmptyAreTheSameLayout() throws {
        try withService { service in
            let client = try service.connect()
            let absent = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,10,10]}]}"#)
            let null = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,10,10],"reuse":null}]}"#)
            let empty = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,10,10],"reuse":""}]}"#)
            #expect(absent.status == 201)
            #expect(null.status == 200)
            #expect(empty.status == 200)
            let ids = [absent, null, empty].map { $0.json["layout"] as? String }
            #expect(Set(ids).count == 1)
        }
    }

    @Test func aContentSizeEqualToTheDefaultIsTheSameLayout() throws {
        try withService { service in
            let client = try service.connect()
            let items = #"[{"id":"a","rect":[0,0,100,50]},{"id":"b","rect":[50,50,200,30]}]"#
            let none = try client.post("/v1/layouts", #"{"items":\#(items)}"#)
            #expect(none.status == 201)
            #expect(none.json.doubles("contentSize") == [250, 80])
            let explicit = try client.post("/v1/layouts", #"{"contentSize":[250,80],"items":\#(items)}"#)
            #expect(explicit.status == 200)
            #expect(explicit.json["layout"] as? String == none.json["layout"] as? String)
            // A different content size is a different layout.
            let other = try client.post("/v1/layouts", #"{"contentSize":[250,81],"items":\#(items)}"#)
            #expect(other.status == 201)
            #expect(other.json["layout"] as? String != none.json["layout"] as? String)
            #expect(other.json.doubles("contentSize") == [250, 81])
        }
    }

    @Test func layoutsDifferingInOrderRectOrReuseGetDifferentIds() throws {
        try withService { service in
            let client = try service.connect()
            let variants = [
                #"{"items":[{"id":"a","rect":[0,0,10,10]},{"id":"b","rect":[0,10,10,10]}]}"#,
                #"{"items":[{"id":"b","rect":[0,10,10,10]},{"id":"a","rect":[0,0,10,10]}]}"#,
                #"{"items":[{"id":"a","rect":[0,0,10,11]},{"id":"b","rect":[0,10,10,10]}]}"#,
                #"{"items":[{"id":"a","rect":[0,0,10,10],"reuse":"x"},{"id":"b","rect":[0,10,10,10]}]}"#,
                #"{"items":[{"id":"a","rect":[0,0,10,10]},{"id":"c","rect":[0,10,10,10]}]}"#,
            ]
            var ids: Set<String> = []
            for variant in variants {
                let reply = try client.post("/v1/layouts", variant)
                #expect(reply.status == 201, "\(variant)")
                ids.insert(reply.json["layout"] as? String ?? "")
            }
            #expect(ids.count == variants.count)
        }
    }

    @Test func getLayoutAnswersTheSameObjectPlusASessionCountThatFollowsSessions() throws {
        try withService { service in
            let client = try service.connect()
            let posted = try client.post("/v1/layouts", Self.example).json
            let id = try #require(posted["layout"] as? String)
            var got = try client.get("/v1/layouts/\(id)")
            #expect(got.status == 200)
            #expect(got.json["layout"] as? String == id)
            #expect(got.json.int("items") == 2)
            #expect(got.json.doubles("contentSize") == [375, 1030])
            #expect(got.json.int("sessions") == 0)

            let s1 = try client.openSession(#"{"layout":"\#(id)","viewport":[375,667]}"#).id
            let s2 = try client.openSession(#"{"layout":"\#(id)","viewport":[375,667]}"#).id
            // An inline copy of the same layout is the same stored layout.
            let s3 = try client.openSession(#"{"layout":\#(Self.example),"viewport":[375,667]}"#)
            #expect(s3.json["layout"] as? String == id)
            got = try client.get("/v1/layouts/\(id)")
            #expect(got.json.int("sessions") == 3)

            #expect(try client.delete("/v1/sessions/\(s1)").status == 204)
            #expect(try client.get("/v1/layouts/\(id)").json.int("sessions") == 2)
            #expect(try client.delete("/v1/sessions/\(s2)").status == 204)
            #expect(try client.delete("/v1/sessions/\(s3.id)").status == 204)
            // Deleting twice does not count down twice.
            #expect(try client.delete("/v1/sessions/\(s3.id)").status == 404)
            got = try client.get("/v1/layouts/\(id)")
            #expect(got.status == 200)
            #expect(got.json.int("sessions") == 0)
        }
    }

    @Test func unknownLayoutIdAnswers404() throws {
        try withService { service in
            let client = try service.connect()
            _ = try client.get("/v1/layouts/0123456789abcdef").problem(404)
            _ = try client.get("/v1/layouts/nope").problem(404)
        }
    }

    @Test func emptyLayoutIsStoredWithAZeroContentSize() throws {
        try withService { service in
            let client = try service.connect()
            let reply = try client.post("/v1/layouts", #"{"items":[]}"#)
            #expect(reply.status == 201)
            #expect(reply.json.int("items") == 0)
            #expect(reply.json.doubles("contentSize") == [0, 0])
        }
    }

    @Test func defaultContentSizeIsTheMaximumExtentOverItems() throws {
        try withService { service in
            let client = try service.connect()
            let items = gridItems(rows: 7, columns: 3, cell: 33.5)
            let reply = try client.post("/v1/layouts", layoutJSON(items))
            #expect(reply.status == 201)
            #expect(reply.json.int("items") == 21)
            #expect(reply.json.doubles("contentSize") == [100.5, 234.5])
        }
    }

    @Test func layoutErrorsAnswerTheirStatusAndNameTheField() throws {
        try withService({ $0.layouts.maxItems = 3 }) { service in
            let client = try service.connect()
            // 422: negative size, duplicate id, id too long, empty id, negative contentSize.
            var p = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,-1,10]}]}"#).problem(422)
            #expect(names(p, "items[0].rect") && p.detail.contains(#"(id "a")"#), "\(p)")
            p = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,1,10]},{"id":"a","rect":[0,10,1,10]}]}"#).problem(422)
            #expect(names(p, "items[1].id") && p.detail.contains(#""a""#) && p.detail.contains("items[0]"), "\(p)")
            let long = String(repeating: "x", count: 257)
            p = try client.post("/v1/layouts", #"{"items":[{"id":"\#(long)","rect":[0,0,1,1]}]}"#).problem(422)
            #expect(names(p, "items[0].id"), "\(p)")
            let okLong = String(repeating: "é", count: 128)  // 256 bytes of UTF-8
            #expect(try client.post("/v1/layouts", #"{"items":[{"id":"\#(okLong)","rect":[0,0,1,1]}]}"#).status == 201)
            p = try client.post("/v1/layouts", #"{"items":[{"id":"","rect":[0,0,1,1]}]}"#).problem(422)
            #expect(names(p, "items[0].id"), "\(p)")
            p = try client.post("/v1/layouts", #"{"items":[],"contentSize":[-1,5]}"#).problem(422)
            #expect(names(p, "contentSize"), "\(p)")
            // 413: more items than layouts.maxItems.
            p = try client.post("/v1/layouts", layoutJSON(listItems(4))).problem(413)
            #expect(names(p, "items") && p.detail.contains("layouts.maxItems"), "\(p)")
            #expect(try client.post("/v1/layouts", layoutJSON(listItems(3))).status == 201)
            // 400: unknown field named, missing fields, wrong arity, wrong type, non-finite.
            p = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,1,1],"reuse_id":"x"}]}"#).problem(400)
            #expect(names(p, "reuse_id") && p.detail.hasPrefix("items[0]:"), "\(p)")
            // A repeated field of an item (read by its known fields), also written with an escape.
            p = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,1,1]},{"id":"b","rect":[0,0,1,1],"i\u0064":"c"}]}"#).problem(400)
            #expect(p.detail.hasPrefix("items[1]:") && p.detail.contains(#"duplicate field "id""#), "\(p)")
            p = try client.post("/v1/layouts", #"{"items":[],"contentsize":[1,1]}"#).problem(400)
            #expect(names(p, "contentsize"), "\(p)")
            p = try client.post("/v1/layouts", #"{"items":[{"rect":[0,0,1,1]}]}"#).problem(400)
            #expect(names(p, "items[0].id"), "\(p)")
            p = try client.post("/v1/layouts", #"{"items":[{"id":"a"}]}"#).problem(400)
            #expect(names(p, "items[0].rect"), "\(p)")
            p = try client.post("/v1/layouts", #"{"contentSize":[1,1]}"#).problem(400)
            #expect(names(p, "items"), "\(p)")
            _ = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,1]}]}"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,1,1,1]}]}"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,"1",1]}]}"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"items":[{"id":7,"rect":[0,0,1,1]}]}"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,1,1],"reuse":3}]}"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"items":{}}"#).problem(400)
            _ = try client.post("/v1/layouts", #"[]"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,1e999,1]}]}"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"items":[],"contentSize":[1,-1e999]}"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"items":[]} trailing"#).problem(400)
            _ = try client.post("/v1/layouts", "").problem(400)
        }
    }

    @Test func aLayoutInvalidIn422WaysButMalformedLaterIs400() throws {
        // 400 comes before 422: the semantic error must not hide a later syntax error.
        try withService { service in
            let client = try service.connect()
            _ = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,-1,10]}], "bogus": 1}"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,1,1]},{"id":"a","rect":[0,0,1,1]},{"id":"b"}]}"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,1,1]},{"id":"a","rect":[0,0,1,1]}]} x"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,-1,1]}]}{"#).problem(400)
        }
    }

    @Test func layoutCapacityAnswers429OnlyWhenEveryStoredLayoutIsInUse() throws {
        try withService({ $0.layouts.max = 2 }) { service in
            let client = try service.connect()
            let a = try client.postLayout(layoutJSON(listItems(3)))
            let b = try client.postLayout(layoutJSON(listItems(4)))
            // Unused layouts are evicted to make room (least recently used first).
            let c = try client.postLayout(layoutJSON(listItems(5)))
            #expect(try client.get("/v1/layouts/\(a)").status == 404)
            #expect(try client.get("/v1/layouts/\(b)").status == 200)
            _ = try client.openSession(#"{"layout":"\#(b)","viewport":[100,100]}"#)
            _ = try client.openSession(#"{"layout":"\#(c)","viewport":[100,100]}"#)
            // Both slots are held by sessions: nothing can be evicted.
            let p = try client.post("/v1/layouts", layoutJSON(listItems(6))).problem(429)
            #expect(!(p["detail"] as? String ?? "").isEmpty)
            _ = try client.post("/v1/sessions", #"{"layout":\#(layoutJSON(listItems(7))),"viewport":[100,100]}"#).problem(429)
            // An identical layout is still found (no new slot needed).
            #expect(try client.post("/v1/layouts", layoutJSON(listItems(5))).status == 200)
            #expect(try client.get("/v1/layouts/\(b)").json.int("sessions") == 1)
        }
    }

    @Test func layoutItemBudgetAnswers429WhenFullOfLayoutsInUse() throws {
        try withService({ $0.layouts.maxTotalItems = 10 }) { service in
            let client = try service.connect()
            let a = try client.postLayout(layoutJSON(listItems(6)))
            _ = try client.openSession(#"{"layout":"\#(a)","viewport":[100,100]}"#)
            _ = try client.post("/v1/layouts", layoutJSON(listItems(5))).problem(429)
            #expect(try client.post("/v1/layouts", layoutJSON(listItems(4))).status == 201)
        }
    }

    @Test func layoutLargerThanTheWholeItemBudgetAnswers413() throws {
        try withService({ $0.layouts.maxTotalItems = 10 }) { service in
            let client = try service.connect()
            _ = try client.post("/v1/layouts", layoutJSON(listItems(11))).problem(413)
            #expect(try client.get("/metrics").text.contains("viewportd_layouts 0"))
        }
    }
}

@Suite struct LayoutIdentityTests {
    @Test func layoutIdsDependOnlyOnContentAcrossServers() throws {
        let layout = layoutJSON(gridItems(rows: 5, columns: 5))
        let first = try withService { try $0.connect().postLayout(layout) }
        let second = try withService { try $0.connect().postLayout(layout) }
        #expect(first == second)
    }

    @Test func negativeZeroIsTheSameLayoutAsZero() throws {
        try withService { service in
            let client = try service.connect()
            let a = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[0,0,10,10]}]}"#)
            let b = try client.post("/v1/layouts", #"{"items":[{"id":"a","rect":[-0,0.0,10,10]}]}"#)
            #expect(a.status == 201)
            #expect(b.status == 200)
            #expect(a.json["layout"] as? String == b.json["layout"] as? String)
        }
    }
}
