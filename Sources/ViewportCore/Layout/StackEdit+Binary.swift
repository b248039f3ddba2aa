/// Stack edits in binary, for session snapshots (a session's layout version is its stored layout
/// and the edits that made it: ``EditHistory``, `Layout+EditHistory.swift`).
extension StackEdit {
    /// Resizes (id, size), inserts (place, then items: id, optional size, optional reuse), removes.
    func write(_ w: inout BinaryWriter) {
        w.count(resize.count)
        for r in resize {
            w.string(r.id)
            w.size(r.size)
        }
        w.count(insert.count)
        for i in insert {
            switch i.place {
            case .before(let id):
                w.byte(0)
                w.string(id)
            case .after(let id):
                w.byte(1)
                w.string(id)
            case .start(let section):
                w.byte(2)
                w.string(section)
            case .end(let section):
                w.byte(3)
                w.string(section)
            }
            w.count(i.items.count)
            for item in i.items {
                w.string(item.id)
                w.bool(item.size != nil)
                if let size = item.size { w.size(size) }
                w.optionalString(item.reuse)
            }
        }
        w.count(remove.count)
        for id in remove { w.string(id) }
    }

    static func read(_ r: inout BinaryReader) throws(BinaryFormatError) -> StackEdit {
        var edit = StackEdit()
        for _ in 0..<(try r.elementCount(minBytes: 17)) {
            edit.resize.append(Resize(id: try r.string(limit: Layout.maxIDBytes), size: try r.size()))
        }
        for _ in 0..<(try r.elementCount(minBytes: 3)) {
            let kind = try r.byte()
            let name = try r.string(limit: Layout.maxIDBytes)
            let place: Place
            switch kind {
            case 0: place = .before(name)
            case 1: place = .after(name)
            case 2: place = .start(section: name)
            case 3: place = .end(section: name)
            default: throw .invalid("insert place \(kind)")
            }
            var items: [NewItem] = []
            for _ in 0..<(try r.elementCount(minBytes: 3)) {
                let id = try r.string(limit: Layout.maxIDBytes)
                let size: Size? = try r.bool() ? try r.size() : nil
                items.append(NewItem(id: id, size: size, reuse: try r.optionalString()))
            }
            edit.insert.append(Insert(place: place, items: items))
        }
        for _ in 0..<(try r.elementCount()) { edit.remove.append(try r.string(limit: Layout.maxIDBytes)) }
        return edit
    }
}
