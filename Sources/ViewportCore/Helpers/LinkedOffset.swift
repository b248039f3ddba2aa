/// A linked follower's offset in one plan (`"linked": {"name": [x, y]}`).
public struct LinkedOffset: Hashable, Sendable {
    public var name: String
    public var offset: Point

    public init(name: String, offset: Point) {
        self.name = name
        self.offset = offset
    }
}
