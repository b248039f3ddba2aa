/// The keys viewportd uses in a shared store, under `store.keyPrefix`:
///
/// - `layout:<id>`: a layout in its binary form (content-addressed by its id).
/// - `session:{<id>}`: a hash: `epoch` (the fencing token of the current owner), `ver` (the
///   version of the stored snapshot), `hwm` (handles reserved so far) and `snap` (the snapshot).
/// - `lease:{<id>}`: `<instance>|<epoch>` while an instance owns the session, with a TTL.
/// - `instance:<instance>`: an instance's heartbeat, with a TTL.
/// - `inbox:<instance>`: a list of handover requests, `<session> <reply key>`.
/// - `reply:<nonce>`: where an owner answers one handover request.
/// - `beat`: the store's clock (ms) at the last heartbeat of any instance; `grace`: set, with a
///   lease as TTL, when heartbeats resume after a silence of every instance (the store was
///   unreachable): sessions their owner did not release (`free` in the session's hash) are not
///   taken from it meanwhile.
///
/// A session's two keys share the hash tag `{<id>}`.
struct StoreKeys: Sendable {
    let prefix: String

    func layout(_ id: String) -> String { prefix + "layout:" + id }
    func session(_ id: String) -> String { prefix + "session:{" + id + "}" }
    func lease(_ id: String) -> String { prefix + "lease:{" + id + "}" }
    func instance(_ id: String) -> String { prefix + "instance:" + id }
    func inbox(_ id: String) -> String { prefix + "inbox:" + id }
    func reply(_ nonce: String) -> String { prefix + "reply:" + nonce }
}
