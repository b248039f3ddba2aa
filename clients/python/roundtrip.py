"""A round trip through the Python client generated from openapi/viewportd.openapi.json by
openapi-python-client (scripts/python-client.py generates it and runs this against a live
viewportd): post a layout, open a session, update with seq, read a 409 as a problem, read the
state, end the session. Every answer is checked to be the typed model its status documents.

Usage: python3 clients/python/roundtrip.py BASE_URL [--token T]   (viewportd_client importable)
"""
import sys

from viewportd_client import AuthenticatedClient, Client
from viewportd_client.api.layouts import get_layout, store_layout
from viewportd_client.api.sessions import close_session, get_session, open_session, update_viewport
from viewportd_client.models import (
    ItemsLayout,
    LayoutInfo,
    LayoutItem,
    LayoutStored,
    OffsetUpdate,
    Plan,
    PoolCaps,
    Problem404,
    Problem422,
    ScrollAlignment,
    ScrollTo,
    ScrollToUpdate,
    ScrollPhase,
    SequenceProblem,
    SequenceProblemStatus,
    Session,
    SessionRequestAtOffset,
    SessionState,
)


def expect(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"python-client: ok: {what}")


def main(argv):
    base = argv[1]
    token = argv[argv.index("--token") + 1] if "--token" in argv else None
    client = AuthenticatedClient(base_url=base, token=token) if token else Client(base_url=base)
    with client as c:
        # A layout of 100 rows, 100 points tall: a 375 x 250 viewport with no buffer shows 3.
        items = [LayoutItem(id=f"row-{k}", rect=[0, 100 * k, 375, 100], reuse="row") for k in range(100)]
        items[50].reuse = None
        stored = store_layout.sync_detailed(client=c, body=ItemsLayout(items=items))
        expect(stored.status_code in (200, 201) and isinstance(stored.parsed, LayoutStored),
               f"POST /v1/layouts -> {stored.status_code} LayoutStored {getattr(stored.parsed, 'layout', None)}")
        layout_id = stored.parsed.layout
        expect(stored.parsed.items == 100 and stored.parsed.content_size == [375, 10000], "100 items, content 375 x 10000")

        info = get_layout.sync_detailed(layout_id, client=c).parsed
        expect(isinstance(info, LayoutInfo) and info.layout == layout_id, "GET /v1/layouts/{id} -> LayoutInfo")

        opened = open_session.sync_detailed(
            client=c, body=SessionRequestAtOffset(layout=layout_id, viewport=[375, 250], buffer=0, pool=PoolCaps(max_=4)))
        expect(opened.status_code == 201 and isinstance(opened.parsed, Session), "POST /v1/sessions -> 201 Session")
        session = opened.parsed.session
        plan0 = opened.parsed.plan
        expect(isinstance(plan0, Plan) and plan0.seq == 0 and [e.id for e in plan0.create] == ["row-0", "row-1", "row-2"],
               "the opening plan (seq 0) creates row-0, row-1, row-2")

        moved = update_viewport.sync_detailed(
            session, client=c, body=OffsetUpdate(offset=[0, 100], seq=1, phase=ScrollPhase.DRAGGING, velocity=[0, 600]))
        plan1 = moved.parsed
        expect(moved.status_code == 200 and isinstance(plan1, Plan) and plan1.seq == 1, "update seq 1 -> 200 Plan seq 1")
        expect([(e.id, e.view) for e in plan1.recycle] == [("row-0", 1)], "row-0's view 1 is recycled")
        expect([(e.id, e.view, e.rebind) for e in plan1.reuse] == [("row-3", 1, True)], "row-3 reuses view 1, rebind")

        retry = update_viewport.sync_detailed(
            session, client=c, body=OffsetUpdate(offset=[0, 100], seq=1, phase=ScrollPhase.DRAGGING, velocity=[0, 600]))
        expect(isinstance(retry.parsed, Plan) and retry.parsed.to_dict() == plan1.to_dict(), "a retry (seq 1 again) answers the same plan")

        conflict = update_viewport.sync_detailed(session, client=c, body=OffsetUpdate(offset=[0, 900], seq=5))
        problem = conflict.parsed
        expect(conflict.status_code == 409 and isinstance(problem, SequenceProblem), "seq 5 -> 409 SequenceProblem")
        expect(problem.status == SequenceProblemStatus.VALUE_409 and problem.seq == 1 and "seq" in problem.detail,
               f"the problem names the session's seq: {problem.seq} ({problem.detail})")

        jumped = update_viewport.sync_detailed(
            session, client=c, body=ScrollToUpdate(scroll_to=ScrollTo(id="row-60", align=ScrollAlignment.START), seq=2))
        expect(isinstance(jumped.parsed, Plan) and jumped.parsed.offset == [0, 6000], "scrollTo row-60 (start) -> offset [0, 6000]")

        missing = update_viewport.sync_detailed(session, client=c, body=ScrollToUpdate(scroll_to=ScrollTo(id="nope"), seq=3))
        expect(missing.status_code == 422 and isinstance(missing.parsed, Problem422), "scrollTo an unknown id -> 422 Problem422")

        state = get_session.sync_detailed(session, client=c).parsed
        expect(isinstance(state, SessionState) and state.seq == 2 and state.offset == [0, 6000], "GET state -> SessionState seq 2")
        expect([e.id for e in state.visible] == ["row-60", "row-61", "row-62"], "visible: row-60 … row-62")
        expect(state.stats.updates == 2 and state.stats.created == 3 and state.stats.reused == 4,
               f"stats: {state.stats.updates} updates, {state.stats.created} created, {state.stats.reused} reused")
        pooled = sum(len(views) for views in state.pool.additional_properties.values())
        expect(pooled == state.stats.created - state.stats.discarded - len(state.visible),
               f"pool ({pooled} views) = views alive - visible")

        ended = close_session.sync_detailed(session, client=c)
        expect(ended.status_code == 204, "DELETE /v1/sessions/{id} -> 204")
        gone = get_session.sync_detailed(session, client=c)
        expect(gone.status_code == 404 and isinstance(gone.parsed, Problem404), "then GET -> 404 Problem404")
    print("python-client: round trip passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
