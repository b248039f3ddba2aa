/// An edit of a layout's stacks (`PATCH /v1/sessions/{id}/layout`, docs/api.md "Stacks and edits"): measured
/// sizes, inserted items and removed items, applied in that order (inserts in list order). Items
/// are named by id; every id must be an item of a stack.
public struct StackEdit: Sendable {
    /// `resize[k]`: the item's measured size.
    public struct Resize: Sendable {
        public var id: String
        public var size: Size

        public init(id: String, size: Size) {
            self.id = id
            self.size = size
        }
    }

    /// An item to insert: a new id, its measured size (nil: the stack's estimate) and reuse
    /// identifier (nil: the stack's; "" none).
    public struct NewItem: Sendable {
        public var id: String
        public var size: Size?
        public var reuse: String?

        public init(id: String, size: Size? = nil, reuse: String? = nil) {
            self.id = id
            self.size = size
            self.reuse = reuse
        }
    }

    /// Where inserted items go: next to an item (in its lane), or at an end of a stack named by
    /// its section id.
    public enum Place: Hashable, Sendable {
        case before(String)
        case after(String)
        case start(section: String)
        case end(section: String)
    }

    public struct Insert: Sendable {
        public var place: Place
        public var items: [NewItem]

        public init(place: Place, items: [NewItem]) {
            self.place = place
            self.items = items
        }
    }

    public var resize: [Resize]
    public var insert: [Insert]
    public var remove: [String]

    public init(resize: [Resize] = [], insert: [Insert] = [], remove: [String] = []) {
        self.resize = resize
        self.insert = insert
        self.remove = remove
    }
}

/// Where a session's content stays when it edits its layout (PATCH `anchor`).
public enum EditAnchor: String, CaseIterable, Hashable, Sendable {
    /// The first item on screen that survives the edit stays where it was on screen.
    case visible
    /// At the end of the content along the axis (within 1 point of the largest offset), the
    /// viewport stays at the new end; otherwise as `visible`.
    case end
    /// The offset stays.
    case none
}
