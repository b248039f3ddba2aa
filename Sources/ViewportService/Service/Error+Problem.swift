import ViewportCore

extension Error {
    /// Any error thrown while answering, as a problem: decoding errors are 400 (or 422), session
    /// errors 422 or 409, problems are themselves, anything else is a 400 naming it.
    var problem: Problem {
        if let problem = self as? Problem { return problem }
        if let json = self as? JSONError { return Problem(json) }
        if let store = self as? StoreFailure { return store.problem }
        if let session = self as? SessionError {
            switch session {
            case .invalid: return .invalid(session.description)
            case .sequenceConflict(let current, _): return .sequenceConflict(current: current, detail: session.description)
            case .tooLarge: return .tooLarge(session.description)
            }
        }
        return .badRequest(String(describing: self))
    }
}
