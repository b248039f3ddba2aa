/// A persistent map from uid to order key: a bitmap-compressed radix trie over the uid's 32 bits,
/// five bits a level, with as many levels as the largest uid needs.
///
/// Copies share nodes; a change copies the O(log₃₂ uid) nodes on its path (when another copy
/// shares them) and nothing else, so versions of a stack that share a tree share this map too and
/// each pays only for its own changes. Inserted uids are usually dense (a caller's counter) and
/// relabelled ones come in runs, so nodes fill up.
struct UIDKeyMap: Sendable {
    final class Node: @unchecked Sendable {
        // Mutated only while uniquely referenced (copy on write), so sharing across threads is safe.
        var bitmap: UInt32
        /// Children of an inner node, in bit order.
        var children: ContiguousArray<Node>
        /// Values of a leaf (the last level), in bit order.
        var values: ContiguousArray<UInt64>

        init(bitmap: UInt32 = 0, children: ContiguousArray<Node> = [], values: ContiguousArray<UInt64> = []) {
            self.bitmap = bitmap
            self.children = children
            self.values = values
        }

        func copy() -> Node { Node(bitmap: bitmap, children: children, values: values) }
    }

    private var root: Node?
    /// The shift of the root level: the root covers uids below 2^(shift + 5).
    private var shift = 0
    private(set) var count = 0

    init() {}

    /// - Complexity: O(log₃₂ uid).
    subscript(uid: Int32) -> UInt64? {
        let key = UInt32(bitPattern: uid)
        guard var node = root, shift + 5 >= 32 || key >> UInt32(shift + 5) == 0 else { return nil }
        var s = shift
        while true {
            let bit = UInt32(1) << ((key >> UInt32(s)) & 31)
            guard node.bitmap & bit != 0 else { return nil }
            let position = (node.bitmap & (bit &- 1)).nonzeroBitCount
            if s == 0 { return node.values[position] }
            node = node.children[position]
            s -= 5
        }
    }

    /// - Complexity: O(log₃₂ uid).
    mutating func set(_ uid: Int32, _ value: UInt64) {
        let key = UInt32(bitPattern: uid)
        if root == nil {
            root = Node()
            shift = 0
        }
        while shift + 5 < 32 && key >> UInt32(shift + 5) != 0 {
            // Grow a level: the old root becomes child 0.
            if let old = root, old.bitmap != 0 {
                root = Node(bitmap: 1, children: [old])
            } else {
                root = Node()
            }
            shift += 5
        }
        // Move the root out so the only reference this version holds is `node`.
        var node = root ?? Node()
        root = nil
        if Self.set(&node, shift: shift, key: key, value: value) { count += 1 }
        root = node
    }

    /// Returns whether the uid was new.
    private static func set(_ node: inout Node, shift: Int, key: UInt32, value: UInt64) -> Bool {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        let bit = UInt32(1) << ((key >> UInt32(shift)) & 31)
        let position = (node.bitmap & (bit &- 1)).nonzeroBitCount
        let present = node.bitmap & bit != 0
        if shift == 0 {
            if present {
                node.values[position] = value
                return false
            }
            node.values.insert(value, at: position)
            node.bitmap |= bit
            return true
        }
        if !present {
            node.children.insert(Node(), at: position)
            node.bitmap |= bit
        }
        return set(&node.children[position], shift: shift - 5, key: key, value: value)
    }

    /// - Complexity: O(log₃₂ uid).
    mutating func remove(_ uid: Int32) {
        let key = UInt32(bitPattern: uid)
        guard self[uid] != nil, var node = root else { return }
        root = nil
        Self.remove(&node, shift: shift, key: key)
        count -= 1
        root = node.bitmap == 0 ? nil : node
    }

    private static func remove(_ node: inout Node, shift: Int, key: UInt32) {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        let bit = UInt32(1) << ((key >> UInt32(shift)) & 31)
        let position = (node.bitmap & (bit &- 1)).nonzeroBitCount
        if shift == 0 {
            node.values.remove(at: position)
            node.bitmap &= ~bit
            return
        }
        remove(&node.children[position], shift: shift - 5, key: key)
        if node.children[position].bitmap == 0 {
            node.children.remove(at: position)
            node.bitmap &= ~bit
        }
    }

    /// Every (uid, key), in uid order (for tests and checks).
    /// - Complexity: O(count).
    func all() -> [(uid: Int32, key: UInt64)] {
        var found: [(Int32, UInt64)] = []
        func walk(_ node: Node, _ prefix: UInt32, _ s: Int) {
            var bits = node.bitmap
            var position = 0
            while bits != 0 {
                let index = UInt32(bits.trailingZeroBitCount)
                bits &= bits &- 1
                let key = prefix | (index << UInt32(s))
                if s == 0 { found.append((Int32(bitPattern: key), node.values[position])) } else { walk(node.children[position], key, s - 5) }
                position += 1
            }
        }
        if let root { walk(root, 0, shift) }
        return found
    }
}
