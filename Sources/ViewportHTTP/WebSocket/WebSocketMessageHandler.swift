/// The application's side of one WebSocket connection.
///
/// Every call for one connection comes from that connection's own thread, one at a time, in
/// order: any number of ``message(_:)``, then ``closed()`` exactly once. An implementation may
/// keep unsynchronised per-connection state (mark it `@unchecked Sendable` and say so): the
/// object is created on an MHD thread and then handed to the connection thread, never shared.
public protocol WebSocketMessageHandler: AnyObject, Sendable {
    /// One complete message (text or binary; text is valid UTF-8). The buffer is only valid
    /// during the call. The reply is sent before the next message is read.
    func message(_ bytes: UnsafeRawBufferPointer) -> WebSocketReply
    /// The connection is over (either side closed it, it failed, timed out, or the server
    /// stopped). Called once, after the last ``message(_:)``.
    func closed()
}
