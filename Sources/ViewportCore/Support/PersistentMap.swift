/// A persistent hash array mapped trie from 64-bit keys to values (Bagwell's HAMT, with separate
/// bitmaps for entries and children as in CHAMP): five bits of the key a level, at most 13
/// levels, nodes only where keys share a prefix.
///
/// Copies share nodes; a change copies the nodes on its path that another copy can see (a node
/// held by this copy alone is changed in place), so each version of a layout pays only for its
/// own changes and no change costs more than O(log₃₂ n) nodes of at most 32 slots.
struct PersistentMap<Value: Sendable>: Sendable {
    final class Node: @unchecked Sendable {
        // Mutated only while uniquely referenced (copy on write), so sharing across threads is safe.
        var dataMap: UInt32
        var nodeMap: UInt32
        /// Entries in bit order.
        var keys: ContiguousArray<UInt64>
        var values: ContiguousArray<Value>
        /// Children in bit order.
        var children: ContiguousArray<Node>

        init(
            dataMap: UInt32 = 0, nodeMap: UInt32 = 0, keys: ContiguousArray<UInt64> = [], values: ContiguousArray<Value> = [],
            children: ContiguousArray<Node> = []
        ) {
            self.dataMap = dataMap
            self.nodeMap = nodeMap
            self.keys = keys
            self.values = values
            self.children = children
        }

        func copy() -> Node { Node(dataMap: dataMap, nodeMap: nodeMap, keys: keys, values: values, children: children) }

        var isEmpty: Bool { dataMap == 0 && nodeMap == 0 }
    }

    private var root: Node?
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    private static func bit(_ key: UInt64, _ shift: Int) -> UInt32 { UInt32(1) << UInt32((key >> UInt64(shift)) & 31) }

    @inline(__always)
    private static func slot(_ map: UInt32, _ bit: UInt32) -> Int { (map & (bit &- 1)).nonzeroBitCount }

    /// - Complexity: O(log₃₂ n) expected.
    subscript(key: UInt64) -> Value? {
        guard var node = root else { return nil }
        var shift = 0
        while true {
            let bit = Self.bit(key, shift)
            if node.dataMap & bit != 0 {
                let i = Self.slot(node.dataMap, bit)
                return node.keys[i] == key ? node.values[i] : nil
            }
            guard node.nodeMap & bit != 0 else { return nil }
            node = node.children[Self.slot(node.nodeMap, bit)]
            shift += 5
        }
    }

    /// Sets the value of `key`.
    /// - Complexity: O(log₃₂ n) expected.
    mutating func set(_ key: UInt64, _ value: Value) {
        var node = root ?? Node()
        root = nil
        if Self.set(&node, key, value, shift: 0) { count += 1 }
        root = node
    }

    /// Returns whether `key` was new.
    private static func set(_ node: inout Node, _ key: UInt64, _ value: Value, shift: Int) -> Bool {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        let bit = Self.bit(key, shift)
        if node.dataMap & bit != 0 {
            let i = slot(node.dataMap, bit)
            if node.keys[i] == key {
                node.values[i] = value
                return false
            }
            // Two keys share this slot: both go one level down.
            let child = pair(node.keys[i], node.values[i], key, value, shift: shift + 5)
            node.keys.remove(at: i)
            node.values.remove(at: i)
            node.dataMap &= ~bit
            node.children.insert(child, at: slot(node.nodeMap, bit))
            node.nodeMap |= bit
            return true
        }
        if node.nodeMap & bit != 0 {
            return set(&node.children[slot(node.nodeMap, bit)], key, value, shift: shift + 5)
        }
        let i = slot(node.dataMap, bit)
        node.keys.insert(key, at: i)
        node.values.insert(value, at: i)
        node.dataMap |= bit
        return true
    }

    /// A node holding two different keys.
    private static func pair(_ k1: UInt64, _ v1: Value, _ k2: UInt64, _ v2: Value, shift: Int) -> Node {
        precondition(shift < 64 && k1 != k2, "distinct keys differ in some level")
        let b1 = bit(k1, shift)
        let b2 = bit(k2, shift)
        if b1 == b2 { return Node(nodeMap: b1, children: [pair(k1, v1, k2, v2, shift: shift + 5)]) }
        return b1 < b2
            ? Node(dataMap: b1 | b2, keys: [k1, k2], values: [v1, v2])
            : Node(dataMap: b1 | b2, keys: [k2, k1], values: [v2, v1])
    }

    /// Removes `key` (nothing when absent).
    /// - Complexity: O(log₃₂ n) expected.
    mutating func remove(_ key: UInt64) {
        guard self[key] != nil, var node = root else { return }
        root = nil
        Self.remove(&node, key, shift: 0)
        count -= 1
        root = node.isEmpty ? nil : node
    }

    private static func remove(_ node: inout Node, _ key: UInt64, shift: Int) {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        let bit = Self.bit(key, shift)
        if node.dataMap & bit != 0 {
            let i = slot(node.dataMap, bit)
            node.keys.remove(at: i)
            node.values.remove(at: i)
            node.dataMap &= ~bit
            return
        }
        let j = slot(node.nodeMap, bit)
        remove(&node.children[j], key, shift: shift + 5)
        let child = node.children[j]
        if child.isEmpty {
            node.children.remove(at: j)
            node.nodeMap &= ~bit
        } else if child.nodeMap == 0 && child.keys.count == 1 {
            // A child left with one entry comes back up, so the trie stays as shallow as its keys.
            node.children.remove(at: j)
            node.nodeMap &= ~bit
            let i = slot(node.dataMap, bit)
            node.keys.insert(child.keys[0], at: i)
            node.values.insert(child.values[0], at: i)
            node.dataMap |= bit
        }
    }

    /// Every (key, value), in no particular order (for tests and encoders).
    /// - Complexity: O(n).
    func forEach(_ body: (UInt64, Value) -> Void) {
        func walk(_ node: Node) {
            for i in node.keys.indices { body(node.keys[i], node.values[i]) }
            for child in node.children { walk(child) }
        }
        if let root { walk(root) }
    }
}
