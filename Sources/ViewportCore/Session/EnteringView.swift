/// The view an entering item gets in `makePlan`: reused from a pool (rebound unless it last
/// showed the same item) or new.
struct EnteringView {
    var view: Int
    var reused: Bool
    var rebind: Bool
}
