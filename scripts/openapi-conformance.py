#!/usr/bin/env python3
"""Holds openapi/viewportd.openapi.json against the running service.

Starts the built viewportd on a free loopback port (with an auth token and small limits, so 401,
413 and 429 can be provoked), then:

- checks every example in the document against its own schema (examples must be valid);
- checks that GET /openapi.json serves the document byte for byte;
- sends every documented request example, in an order that makes sense (store the layout, open
  sessions, update them, change their layout, read their state, close them), with the real ids
  substituted; an update or layout change example goes to the session opened by the POST
  /v1/sessions example its `x-session` names (`feed` when absent). A request
  example named X expects the response status whose examples include X; the response must have
  that status, the documented media type, and a body valid against the documented schema, and it
  must equal the documented example X (after id substitution), so examples stay real responses;
- provokes 401 (every operation but /healthz), 404, 405 (with Allow), 413, 415 and 429 and
  validates each against the documented schema for that status.

Prints one line per check and a final "N passed, N failed"; exits 1 on any failure.

    scripts/openapi-conformance.py [--binary .build-openapi/debug/viewportd] [--spec openapi/viewportd.openapi.json]
"""
import argparse
import copy
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ensure(*modules):
    missing = []
    for module, package in modules:
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        print(f"installing {' '.join(missing)} with pip", flush=True)
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", *missing])


ensure(("jsonschema", "jsonschema"), ("requests", "requests"))
import jsonschema  # noqa: E402
import requests  # noqa: E402

TOKEN = "conformance-token"
MAX_BODY = 2048      # matches the 413 examples
MAX_ITEMS = 16       # matches the tooManyItems example
MAX_SESSIONS = 12    # the examples keep nine sessions open
UNKNOWN_ID = "00000000000000000000000000000000"  # the id the 404/422 examples use
ID_RE = re.compile(r"^[0-9a-f]{32}$")


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def record(self, ok, what, why=""):
        if ok:
            self.passed += 1
            print(f"PASS {what}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {what}: {why}", flush=True)
        return ok


def pointer(*parts):
    return "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


class Spec:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.raw = f.read()
        self.doc = json.loads(self.raw)
        self.validators = {}

    def validator(self, ref):
        # The whole document is the root schema, so "#/components/…" references resolve; the
        # schema checked is the one `ref` points at (other top-level keys are unknown keywords).
        if ref not in self.validators:
            root = dict(self.doc)
            root["$ref"] = ref
            root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
            self.validators[ref] = jsonschema.Draft202012Validator(root, format_checker=jsonschema.FormatChecker())
        return self.validators[ref]

    def errors(self, ref, value):
        return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in self.validator(ref).iter_errors(value)]

    def operation(self, path, method):
        return self.doc["paths"][path][method]

    def operations(self):
        for path, item in self.doc["paths"].items():
            for method in ("get", "put", "post", "delete", "patch"):
                if method in item:
                    yield path, method, item[method]


def ndjson_lines(text):
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def parse_body(media, text):
    if media == "application/x-ndjson":
        return ndjson_lines(text)
    if media.startswith("text/"):
        return text
    return json.loads(text)


def normalize(value):
    """Session ids are random: compare them as placeholders."""
    if isinstance(value, dict):
        return {k: ("<session>" if k == "session" and isinstance(v, str) and ID_RE.match(v) else normalize(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def substitute(value, mapping):
    if isinstance(value, str):
        for old, new in mapping.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {k: substitute(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, mapping) for v in value]
    return value


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_service(binary, args, log):
    port = free_port()
    command = [binary, "--http-host", "127.0.0.1", "--http-port", str(port), *args]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    deadline = time.time() + 30
    while time.time() < deadline:
        if process.poll() is not None:
            log.seek(0)
            sys.exit(f"viewportd exited with {process.returncode} before listening:\n{log.read().decode(errors='replace')}")
        log.seek(0)
        if b"listening on http://" in log.read():
            return process, f"http://127.0.0.1:{port}"
        time.sleep(0.05)
    process.kill()
    sys.exit("viewportd did not log 'listening on http://' within 30 s")


class Runner:
    def __init__(self, spec, base, checks):
        self.spec = spec
        self.base = base
        self.checks = checks
        self.ids = {}  # documented id → real id
        self.sessions = {}  # POST /v1/sessions example name → real session id
        self.session = requests.Session()

    def send(self, method, path, body=None, media="application/json", auth=True, raw=None, headers=None):
        h = dict(headers or {})
        if auth:
            h["Authorization"] = f"Bearer {TOKEN}"
        data = raw
        if data is None and body is not None:
            if media == "application/x-ndjson":
                data = body.encode() if isinstance(body, str) else "".join(json.dumps(x) + "\n" for x in body).encode()
            else:
                data = json.dumps(body).encode()
        if data is not None and "Content-Type" not in h:
            h["Content-Type"] = media
        return self.session.request(method.upper(), self.base + path, data=data, headers=h, timeout=30)

    def expect(self, label, template, method, response, status, example=None):
        """Checks status, media type, body schema and (when given) the example's value."""
        op = self.spec.operation(template, method)
        what = f"{method.upper()} {template} {label} → {status}"
        if response.status_code != status:
            return self.checks.record(False, what, f"got {response.status_code}: {response.text[:300]}")
        documented = op["responses"].get(str(status))
        if documented is None:
            return self.checks.record(False, what, f"status {status} is not documented")
        for name, header in documented.get("headers", {}).items():
            if header.get("required") and name not in response.headers:
                return self.checks.record(False, what, f"missing documented header {name}")
        content = documented.get("content")
        if not content:
            ok = response.content == b""
            return self.checks.record(ok, what, "" if ok else f"expected no body, got {response.text[:200]}")
        given = (response.headers.get("Content-Type") or "").strip()
        if given not in content:
            return self.checks.record(False, what, f"Content-Type {given!r} is not one of {list(content)}")
        try:
            body = parse_body(given, response.text)
        except ValueError as error:
            return self.checks.record(False, what, f"body does not parse as {given}: {error}")
        ref = pointer("paths", template, method, "responses", str(status), "content", given, "schema")
        errors = self.spec.errors(ref, body)
        if errors:
            return self.checks.record(False, what, "; ".join(errors[:5]))
        if example is not None:
            documented_example = content[given].get("examples", {}).get(example)
            if documented_example is None:
                return self.checks.record(False, what, f"no response example named {example!r}")
            want = substitute(parse_body(given, documented_example["value"]) if isinstance(documented_example["value"], str) and given != "text/plain" else documented_example["value"], self.ids)
            if normalize(want) != normalize(body):
                return self.checks.record(False, what + f" (example {example})",
                                          f"documented example differs from the live response:\n  documented {json.dumps(want)}\n  live       {json.dumps(body)}")
            what += f" (example {example} matches)"
        return self.checks.record(True, what)

    def run_examples(self, template, method, path, after=None):
        """Sends every request example of an operation, in document order. In `path`, `{session}`
        is the session opened by the example that the request example's `x-session` names."""
        op = self.spec.operation(template, method)
        results = {}
        for media, content in op.get("requestBody", {}).get("content", {}).items():
            named = [(name, example) for key in ("examples", "x-invalid-examples") for name, example in content.get(key, {}).items()]
            # An operation whose request media type has no example checks nothing: a failure.
            self.checks.record(bool(content.get("examples")), f"{method.upper()} {template} {media} has request examples", "none are documented")
            for name, example in named:
                statuses = [s for s, r in op["responses"].items()
                            if any(name in c.get("examples", {}) for c in r.get("content", {}).values())]
                if len(statuses) != 1:
                    self.checks.record(False, f"{method.upper()} {template} example {name}", f"matched response statuses {statuses}, want exactly one")
                    continue
                value = substitute(example["value"], self.ids)
                session = example.get("x-session", "feed")
                if "{session}" in path and session not in self.sessions:
                    self.checks.record(False, f"{method.upper()} {template} example {name}", f"no session was opened by the example {session!r}")
                    continue
                target = substitute(path, self.ids).replace("{session}", self.sessions.get(session, ""))
                response = self.send(method, target, body=value, media=media)
                self.expect(f"example {name} ({media})", template, method, response, int(statuses[0]), example=name)
                results[name] = response
                if after:
                    after(name, response)
        return results


def check_examples_against_schemas(spec, checks):
    """Every example in the document is valid against the schema next to it."""
    count = 0
    for path, method, op in spec.operations():
        places = []
        for media, content in op.get("requestBody", {}).get("content", {}).items():
            places.append((("paths", path, method, "requestBody", "content", media), content, media, "request"))
        for status, response in op["responses"].items():
            for media, content in response.get("content", {}).items():
                places.append((("paths", path, method, "responses", status, "content", media), content, media, status))
        for parts, content, media, where in places:
            for key in ("examples", "x-invalid-examples"):
                for name, example in content.get(key, {}).items():
                    value = example["value"]
                    if media == "application/x-ndjson":
                        value = ndjson_lines(value)
                    if media.startswith("text/"):
                        continue
                    errors = spec.errors(pointer(*parts, "schema"), value)
                    count += 1
                    if key == "examples":
                        checks.record(not errors, f"example {method.upper()} {path} {where} {media} {name} is valid", "; ".join(errors[:5]))
                    else:
                        checks.record(bool(errors), f"invalid example {method.upper()} {path} {where} {media} {name} breaks the schema", "it is valid: move it to examples")
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.environ.get("VIEWPORTD", os.path.join(ROOT, ".build-openapi/debug/viewportd")))
    parser.add_argument("--spec", default=os.path.join(ROOT, "openapi/viewportd.openapi.json"))
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"{args.binary}: not an executable; build viewportd first (or pass --binary / set VIEWPORTD)")

    spec = Spec(args.spec)
    checks = Checks()
    started = time.time()
    check_examples_against_schemas(spec, checks)

    log = tempfile.TemporaryFile()
    process, base = start_service(args.binary, [
        "--auth-token", TOKEN, "--http-max-body-bytes", str(MAX_BODY),
        "--layouts-max-items", str(MAX_ITEMS), "--sessions-max", str(MAX_SESSIONS)], log)
    try:
        run(spec, base, checks)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            code = "killed"
        checks.record(code == 0, "viewportd stops with exit status 0 on SIGTERM", f"exit status {code}")
        if checks.failed:
            log.seek(0)
            print("--- viewportd log (last 40 lines) ---")
            print("\n".join(log.read().decode(errors="replace").splitlines()[-40:]))
    print(f"{checks.passed} passed, {checks.failed} failed ({time.time() - started:.1f} s)")
    sys.exit(1 if checks.failed else 0)


def check_socket(spec, r, checks, base, session):
    """GET /v1/sessions/{id}/socket: the handshake's errors as documented, then a live WebSocket
    (scripts/ws-client.py's client) whose replies are a Plan and a Problem carrying `message`."""
    template, path = "/v1/sessions/{id}/socket", f"/v1/sessions/{session}/socket"
    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    r.expect("without the upgrade headers", template, "get", r.send("get", path), 426, example="notAnUpgrade")
    r.expect("Sec-WebSocket-Version 8", template, "get", r.send("get", path, headers={**upgrade, "Sec-WebSocket-Version": "8"}), 426, example="wrongVersion")
    r.expect("a 5-byte key", template, "get", r.send("get", path, headers={**upgrade, "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "c2hvcnQ="}), 400, example="badKey")
    r.expect("unknown session", template, "get", r.send("get", f"/v1/sessions/{UNKNOWN_ID}/socket"), 404, example="unknownSession")
    loader = importlib.util.spec_from_file_location("ws_client", os.path.join(ROOT, "scripts", "ws-client.py"))
    ws_client = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(ws_client)
    try:
        ws = ws_client.ViewportSocket(base, session, TOKEN)
    except (ConnectionError, OSError) as error:
        checks.record(False, f"GET {template} WebSocket handshake → 101", str(error))
        return
    checks.record(ws.headers.get("sec-websocket-protocol") == "viewportd.v1" and ws.headers.get("upgrade", "").lower() == "websocket",
                  f"GET {template} WebSocket handshake (token as subprotocol) → 101 with viewportd.v1", f"headers {ws.headers}")
    ws.send(json.dumps({"offset": [0, 5]}))
    plan = json.loads(ws.receive())
    errors = spec.errors("#/components/schemas/Plan", plan)
    checks.record(not errors, f"GET {template} message: an update → a Plan", f"{errors} {plan}")
    ws.send("{")
    problem = json.loads(ws.receive())
    errors = spec.errors("#/components/schemas/Problem", problem)
    checks.record(not errors and problem.get("status") == 400 and problem.get("message") == 2,
                  f"GET {template} message: bad JSON → a Problem with status 400 and message 2", f"{errors} {problem}")
    ws.send(json.dumps({"patch": {"remove": ["a"]}}))
    problem = json.loads(ws.receive())
    errors = spec.errors("#/components/schemas/Problem", problem)
    checks.record(not errors and problem.get("status") == 422 and problem.get("message") == 3,
                  f"GET {template} message: a patch of a layout without stacks → a Problem with status 422 and message 3", f"{errors} {problem}")
    ws.close()


def run(spec, base, checks):
    r = Runner(spec, base, checks)
    doc = spec.doc
    documented_layout = doc["paths"]["/v1/layouts/{id}"]["parameters"][0]["example"]
    documented_session = doc["paths"]["/v1/sessions/{id}"]["parameters"][0]["example"]

    # Service endpoints.
    r.expect("without Authorization", "/healthz", "get", r.send("get", "/healthz", auth=False), 200, example="ok")
    response = r.send("get", "/openapi.json")
    r.expect("", "/openapi.json", "get", response, 200)
    checks.record(response.content == spec.raw, "GET /openapi.json serves openapi/viewportd.openapi.json byte for byte",
                  "the served document differs from the file: rebuild the binary (the build embeds the file)")
    r.expect("", "/metrics", "get", r.send("get", "/metrics"), 200)

    # Layouts: every example, then the stored one by id.
    def layout_stored(name, response):
        if name == "feed" and response.status_code == 201:
            r.ids[documented_layout] = response.json()["layout"]
    r.run_examples("/v1/layouts", "post", "/v1/layouts", after=layout_stored)
    r.expect("unknown id", "/v1/layouts/{id}", "get", r.send("get", f"/v1/layouts/{UNKNOWN_ID}"), 404, example="unknownLayout")

    # Sessions: every example; the "feed" session is the one the update examples use.
    def session_opened(name, response):
        if response.status_code == 201:
            r.sessions[name] = response.json()["session"]
        if name == "feed" and response.status_code == 201:
            r.ids[documented_session] = response.json()["session"]
    r.run_examples("/v1/sessions", "post", "/v1/sessions", after=session_opened)
    r.expect("stored layout", "/v1/layouts/{id}", "get", r.send("get", f"/v1/layouts/{documented_layout}".replace(documented_layout, r.ids.get(documented_layout, documented_layout))), 200, example="feed")
    # Updates (paging drags, scrollTo, select, the carousel), then layout changes, each example on
    # the session its x-session names.
    r.run_examples("/v1/sessions/{id}/viewport", "post", "/v1/sessions/{session}/viewport")
    r.run_examples("/v1/sessions/{id}/layout", "put", "/v1/sessions/{session}/layout")
    # Resync (the client's views adopted), on the inline session.
    r.run_examples("/v1/sessions/{id}/resync", "post", "/v1/sessions/{session}/resync")
    r.expect("unknown session", "/v1/sessions/{id}/resync", "post", r.send("post", f"/v1/sessions/{UNKNOWN_ID}/resync", body={"seq": 1, "offset": [0, 0], "visible": []}), 404, example="unknownSession")
    r.expect("without Authorization", "/readyz", "get", r.send("get", "/readyz", auth=False), 200, example="ok")
    r.expect("unknown session", "/v1/sessions/{id}/layout", "put", r.send("put", f"/v1/sessions/{UNKNOWN_ID}/layout", body={"layout": documented_layout}), 404, example="unknownSession")
    # Edits of a session's stacks (the chat session), then its layout as it is now.
    r.run_examples("/v1/sessions/{id}/layout", "patch", "/v1/sessions/{session}/layout")
    r.expect("unknown session", "/v1/sessions/{id}/layout", "patch", r.send("patch", f"/v1/sessions/{UNKNOWN_ID}/layout", body={"remove": ["m1"]}), 404, example="unknownSession")
    if "chat" in r.sessions:
        r.expect("chat after its edits", "/v1/sessions/{id}/layout", "get", r.send("get", f"/v1/sessions/{r.sessions['chat']}/layout"), 200, example="chat")
    r.expect("unknown session", "/v1/sessions/{id}/layout", "get", r.send("get", f"/v1/sessions/{UNKNOWN_ID}/layout"), 404, example="unknownSession")
    r.expect("unknown session", "/v1/sessions/{id}/viewport", "post", r.send("post", f"/v1/sessions/{UNKNOWN_ID}/viewport", body={"offset": [0, 0]}), 404, example="unknownSession")
    r.expect("after the updates", "/v1/sessions/{id}", "get", r.send("get", substitute(f"/v1/sessions/{documented_session}", r.ids)), 200, example="feed")
    # A missing example is a failure, not a skipped check.
    for name, what in (("carousel", "carousel after recentering"), ("sticky", "sticky after its updates"),
                       ("viewability", "viewability after its updates"), ("stickyRow", "stickyRow after its updates")):
        if checks.record(name in r.sessions, f"POST /v1/sessions example {name!r} opened a session", "the document has no such request example"):
            r.expect(what, "/v1/sessions/{id}", "get", r.send("get", f"/v1/sessions/{r.sessions[name]}"), 200, example=name)
    r.expect("unknown session", "/v1/sessions/{id}", "get", r.send("get", f"/v1/sessions/{UNKNOWN_ID}"), 404, example="unknownSession")
    r.expect("", "/v1/sessions/{id}", "delete", r.send("delete", substitute(f"/v1/sessions/{documented_session}", r.ids)), 204)
    r.expect("closed session", "/v1/sessions/{id}", "delete", r.send("delete", f"/v1/sessions/{UNKNOWN_ID}"), 404, example="unknownSession")
    r.expect("closed session", "/v1/sessions/{id}", "get", r.send("get", substitute(f"/v1/sessions/{documented_session}", r.ids)), 404)

    # A live session and layout for the error checks below.
    response = r.send("post", "/v1/sessions", body={"layout": {"items": [{"id": "a", "rect": [0, 0, 10, 10]}]}, "viewport": [375, 300]})
    if not checks.record(response.status_code == 201, "POST /v1/sessions for the error checks → 201", f"got {response.status_code} {response.text[:200]}"):
        return
    opened = response.json()
    concrete = {"/v1/layouts/{id}": f"/v1/layouts/{opened['layout']}", "/v1/sessions/{id}": f"/v1/sessions/{opened['session']}",
                "/v1/sessions/{id}/viewport": f"/v1/sessions/{opened['session']}/viewport",
                "/v1/sessions/{id}/layout": f"/v1/sessions/{opened['session']}/layout",
                "/v1/sessions/{id}/socket": f"/v1/sessions/{opened['session']}/socket",
                "/v1/sessions/{id}/resync": f"/v1/sessions/{opened['session']}/resync"}
    bodies = {"/v1/layouts": {"items": []}, "/v1/sessions": {"layout": opened["layout"], "viewport": [1, 1]},
              "/v1/sessions/{id}/viewport": {"offset": [0, 0]}, "/v1/sessions/{id}/layout": {"layout": opened["layout"]},
              "/v1/sessions/{id}/resync": {"seq": 0, "offset": [0, 0], "visible": []}}

    for template, method, op in list(spec.operations()):
        path = concrete.get(template, template)
        # 401 without (and with a wrong) Authorization, everywhere but /healthz.
        if op.get("security", doc.get("security")) == []:
            continue
        r.expect("without Authorization", template, method, r.send(method, path, body=bodies.get(template), auth=False), 401, example="unauthorized")
        r.expect("with a wrong token", template, method, r.send(method, path, body=bodies.get(template), auth=False, headers={"Authorization": "Bearer wrong"}), 401)
        if method in ("post", "put", "patch"):
            # 415: an unsupported Content-Type; 413: a body over http.maxBodyBytes.
            r.expect("text/plain body", template, method, r.send(method, path, raw=b"{}", headers={"Content-Type": "text/plain"}), 415)
            r.expect("body over http.maxBodyBytes", template, method, r.send(method, path, raw=b" " * (MAX_BODY + 1)), 413, example="bodyTooLarge")

    # 413 for more items than layouts.maxItems.
    items = [{"id": str(i), "rect": [0, 0, 1, 1]} for i in range(MAX_ITEMS + 1)]
    r.expect("more items than layouts.maxItems", "/v1/layouts", "post", r.send("post", "/v1/layouts", body={"items": items}), 413, example="tooManyItems")

    # 405 with Allow on every path for a method it does not answer (not an operation: checked against Problem).
    for template, item in doc["paths"].items():
        methods = {m for m in ("get", "put", "post", "delete", "patch") if m in item}
        wrong = next(m for m in ("put", "patch", "post", "delete") if m not in item)
        response = r.send(wrong, concrete.get(template, template), body={})
        allow = {m.strip().lower() for m in response.headers.get("Allow", "").split(",") if m.strip()}
        errors = spec.errors("#/components/schemas/Problem", response.json()) if response.status_code == 405 else []
        checks.record(response.status_code == 405 and allow == methods and not errors,
                      f"{wrong.upper()} {template} → 405 with Allow: {', '.join(sorted(methods)).upper()}",
                      f"got {response.status_code}, Allow {response.headers.get('Allow')!r}, {errors} {response.text[:200]}")

    check_socket(spec, r, checks, base, opened["session"])

    # 404 on an unknown path.
    response = r.send("get", "/v1/nothing")
    checks.record(response.status_code == 404 and not spec.errors("#/components/schemas/Problem", response.json()),
                  "GET /v1/nothing → 404 problem", f"got {response.status_code} {response.text[:200]}")

    # 429: open sessions until sessions.max is reached.
    for _ in range(MAX_SESSIONS + 1):
        response = r.send("post", "/v1/sessions", body={"layout": opened["layout"], "viewport": [1, 1]})
        if response.status_code != 201:
            break
    r.expect(f"beyond sessions.max ({MAX_SESSIONS})", "/v1/sessions", "post", response, 429)


if __name__ == "__main__":
    main()
