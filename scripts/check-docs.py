#!/usr/bin/env python3
"""Checks README.md, scripts/README.md and docs/**/*.md (Python 3 standard library only).

    python3 scripts/check-docs.py [--binary PATH] [--skip-walkthrough]

1. Links: every relative link and #anchor in those documents resolves, to a file or
   directory of the repository and, with an anchor, to a heading of the target Markdown file
   (GitHub's slug rules: lower case, punctuation dropped, spaces to hyphens, -1, -2 … for repeats).
2. Words: no document holds session or issue numbers, hexadecimal strings of 7 to 40 digits
   outside code (commit hashes), paths of a developer's machine, or before/after diary phrasing.
3. API reference: every operation of openapi/viewportd.openapi.json is in docs/api.md's Endpoints
   table (and the other way round) and has its section, which names every field of its request
   and success bodies.
4. Settings table: docs/operations/configuration.md holds the table between its markers, with
   the rows of `viewportd --help` (the Swift test SettingsTableTests compares it cell for cell
   with Setting.all; with --binary this script compares keys, environment names, flags and
   defaults with the binary's --help).
5. Walkthrough: with --binary, every shell block of the README's first session, of
   docs/guides/walkthrough.md and of the other guides that need nothing but the binary
   (RUNNABLE_GUIDES) runs, in order, in one bash per document in a temporary directory (with
   links to scripts/ and docs/), against the binary started on a free loopback port (the port
   8080 in the commands rewritten to it) and stopped after. The output of each block must match
   the answer blocks the document shows after it, whitespace aside, with `…` standing for any
   text and session ids (random) for any id.

Exits 1 and names every failure.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAILURES = []


def fail(message):
    FAILURES.append(message)
    print(f"FAIL {message}", flush=True)


def documents():
    paths = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "scripts", "README.md")]
    for directory, _, names in os.walk(os.path.join(ROOT, "docs")):
        paths += [os.path.join(directory, n) for n in sorted(names) if n.endswith(".md")]
    return sorted(paths)


def rel(path):
    return os.path.relpath(path, ROOT)


# ---------------------------------------------------------------------------------------------
# Markdown structure

FENCE = re.compile(r"^\s*(```|~~~)")


def split_code(text):
    """Yields (line_number, line, in_fence) for each line."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        match = FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)
                yield number, line, True
                continue
            if line.strip().startswith(fence):
                fence = None
                yield number, line, True
                continue
        yield number, line, fence is not None


def strip_inline_code(line):
    """The line with `code spans` blanked out (double-backtick spans too)."""
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def github_slug(heading):
    """GitHub's anchor for a heading: markup removed, lower case, every character that is not a
    letter, digit, space, hyphen or underscore dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|__|\*|_(?=\w)|(?<=\w)_)", lambda m: m.group(0) if m.group(0) == "_" else "", text)
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        slugs, counts = set(), {}
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for _, line, in_fence in split_code(text):
            if in_fence:
                continue
            match = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not match:
                continue
            slug = github_slug(match.group(2))
            n = counts.get(slug, 0)
            counts[slug] = n + 1
            slugs.add(slug if n == 0 else f"{slug}-{n}")
        for anchor in re.findall(r'<a\s+(?:name|id)="([^"]+)"', text):
            slugs.add(anchor)
        cache[path] = slugs
    return cache[path]


LINK = re.compile(r"(?<!\\)!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)")


def check_links():
    checked = 0
    for path in documents():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for number, line, in_fence in split_code(text):
            if in_fence:
                continue
            targets = LINK.findall(strip_inline_code(line))
            match = REFERENCE_DEF.match(line)
            if match:
                targets.append(match.group(1))
            for target in targets:
                checked += 1
                check_link(path, number, target)
    print(f"links: {checked} checked")


def check_link(path, number, target):
    where = f"{rel(path)}:{number}"
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
        return
    file_part, _, anchor = target.partition("#")
    if file_part.startswith("/"):
        fail(f"{where}: link {target} is absolute; links in docs are relative")
        return
    resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
    if not resolved.startswith(ROOT + os.sep) and resolved != ROOT:
        fail(f"{where}: link {target} leaves the repository")
        return
    if not os.path.exists(resolved):
        fail(f"{where}: link {target}: {rel(resolved)} does not exist")
        return
    if anchor:
        if not resolved.endswith(".md"):
            fail(f"{where}: link {target}: an anchor into a file that is not Markdown")
        elif anchor not in anchors_of(resolved):
            fail(f"{where}: link {target}: {rel(resolved)} has no heading with the anchor #{anchor}")


# ---------------------------------------------------------------------------------------------
# Forbidden words

PROSE_RULES = [
    (re.compile(r"\bsessions? [0-9]", re.I), "a session number"),
    (re.compile(r"\bissues? #?[0-9]", re.I), "an issue number"),
    (re.compile(r"\bstops? [0-9]", re.I), "a stop number"),
    (re.compile(r"\bsittings?\b", re.I), "a sitting (a lab-notebook entry)"),
    (re.compile(r"(?<![\w.])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w.])"), "a hexadecimal string (a commit hash?)"),
    (re.compile(r"\b(?:this|the) (?:branch|commit)\b|\bmerging main\b|\bbefore this (?:change|fix)\b", re.I),
     "history of a change"),
    (re.compile(r"\b(?:used to|now (?:does|is|takes|answers|keeps)|was changed|we changed|fixed in|"
                r"(?:an|the) audit (?:saw|found|had|lost)|a local change, not kept|until (?:this|the) fix)\b", re.I),
     "before/after diary phrasing"),
    (re.compile(r"\bbefore\s*/\s*after\b(?!/)|\bafter\s*/\s*before\b(?!/)", re.I), "before/after diary phrasing"),
]
# Paths of a developer's machine, in code too.
PATH_RULE = (re.compile(r"(?<![\w.])/(?:work|root|home|Users|tmp/bash_jobs)/"), "a path of a developer's machine")
# A word that may stand in prose when it names something else.
ALLOWED = [
    re.compile(r"\bsession [0-9]+ (?:ms|s|µs|KB|MB|bytes?)\b"),
]


def check_words():
    count = 0
    for path in documents():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for number, line, in_fence in split_code(text):
            where = f"{rel(path)}:{number}"
            pattern, what = PATH_RULE
            match = pattern.search(line)
            if match:
                fail(f"{where}: {what}: {line.strip()[:100]}")
            if in_fence:
                continue
            prose = strip_inline_code(line)
            prose = re.sub(r"\]\([^)]*\)", "]()", prose)  # link targets (anchors hold digits)
            for pattern, what in PROSE_RULES:
                for match in pattern.finditer(prose):
                    if any(a.search(prose) for a in ALLOWED):
                        continue
                    count += 1
                    fail(f"{where}: {what}: \"{match.group(0)}\" in: {line.strip()[:100]}")
    print(f"words: {len(documents())} documents, {count} forbidden")


# ---------------------------------------------------------------------------------------------
# The settings table

TABLE_BEGIN = "<!-- settings table: generated from Setting.all -->\n"
TABLE_END = "\n<!-- end of settings table -->"


def settings_table():
    path = os.path.join(ROOT, "docs", "operations", "configuration.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    begin = text.find(TABLE_BEGIN)
    end = text.find(TABLE_END, begin + 1)
    if begin < 0 or end < 0:
        fail(f"{rel(path)}: the settings table's markers are missing")
        return None
    rows = text[begin + len(TABLE_BEGIN):end].split("\n")[2:]
    table = {}
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        key = cells[0].strip("`")
        table[key] = (cells[1].strip("`"), cells[2].strip("`"), cells[3].strip("`"))
    return table


def check_settings_table(binary):
    table = settings_table()
    if table is None:
        return
    print(f"settings table: {len(table)} rows")
    if not binary:
        return
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30).stdout
    shown = {}
    for line in help_text.split("\n"):
        match = re.match(r"^\s+([a-z]+\.[A-Za-z]+)\s+([A-Z_]+)\s+(--[a-z-]+)\s+(.*?)\s*$", line)
        if match:
            default = re.sub(r" \(s\)$", "", match.group(4))
            shown[match.group(1)] = (match.group(2), match.group(3), default)
    if not shown:
        fail("settings table: viewportd --help shows no settings")
        return
    for key in sorted(set(shown) - set(table)):
        fail(f"settings table: viewportd --help names {key}, docs/operations/configuration.md does not")
    for key in sorted(set(table) - set(shown)):
        fail(f"settings table: docs/operations/configuration.md names {key}, viewportd --help does not")
    for key in sorted(set(table) & set(shown)):
        if table[key] != shown[key]:
            fail(f"settings table: {key} is {table[key]} in the table, {shown[key]} in viewportd --help")
    print(f"settings table: the same {len(shown)} keys, environment names, flags and defaults as viewportd --help")


# ---------------------------------------------------------------------------------------------
# docs/api.md against the OpenAPI document

# Operations whose section in docs/api.md is not headed by their method and path.
API_SECTIONS = {
    ("put", "/v1/sessions/{id}/layout"): "## Layout changes",
    ("get", "/v1/sessions/{id}/socket"): "### The WebSocket",
}
# Schemas described once, in a section of their own, that the endpoints' sections refer to.
API_SCHEMA_SECTIONS = {"Plan": "## Plans", "Layout": "## Layouts", "SessionState": "### `GET /v1/sessions/{id}`"}


def check_api_reference():
    api_path = os.path.join(ROOT, "docs", "api.md")
    with open(os.path.join(ROOT, "openapi", "viewportd.openapi.json"), encoding="utf-8") as f:
        document = json.load(f)
    with open(api_path, encoding="utf-8") as f:
        api = f.read()
    schemas = document.get("components", {}).get("schemas", {})

    def properties(schema, seen):
        out = set()
        if not isinstance(schema, dict):
            return out
        if "$ref" in schema:
            name = schema["$ref"].split("/")[-1]
            if name in seen:
                return out
            seen.add(name)
            return properties(schemas.get(name, {}), seen)
        out |= set(schema.get("properties", {}))
        for key in ("oneOf", "anyOf", "allOf"):
            for alternative in schema.get(key, []):
                out |= properties(alternative, seen)
        return out

    def section(heading):
        start = api.find("\n" + heading + "\n")
        if start < 0:
            return None
        level = len(heading.split(" ")[0])
        following = re.compile(r"^#{1,%d} " % level, re.M).search(api, start + len(heading) + 2)
        return api[start:following.start() if following else len(api)]

    endpoints = section("## Endpoints") or ""
    operations = 0
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if method not in ("get", "put", "post", "patch", "delete") or not isinstance(operation, dict):
                continue
            operations += 1
            name = f"{method.upper()} {path}"
            if f"`{name}`" not in endpoints:
                fail(f"docs/api.md: the Endpoints table does not list `{name}` (in the OpenAPI document)")
            heading = API_SECTIONS.get((method, path), f"### `{name}`")
            text = section(heading)
            if text is None:
                fail(f"docs/api.md: no section {heading} for `{name}`")
                continue
            bodies = [c.get("schema", {}) for c in operation.get("requestBody", {}).get("content", {}).values()]
            for status, response in operation.get("responses", {}).items():
                if status.startswith("2"):
                    bodies += [c.get("schema", {}) for c in response.get("content", {}).values()]
            for schema in bodies:
                schema_name = schema.get("$ref", "").split("/")[-1]
                where = text
                if schema_name in API_SCHEMA_SECTIONS:
                    where = section(API_SCHEMA_SECTIONS[schema_name]) or ""
                for field in sorted(properties(schema, set())):
                    if f"`{field}`" not in where and f'"{field}"' not in where:
                        fail(f"docs/api.md: {heading} does not name `{field}` of {schema_name or 'the body'} "
                             f"(`{name}` in the OpenAPI document)")
    for listed in re.findall(r"^\| `(GET|PUT|POST|PATCH|DELETE) ([^`]+)`", endpoints, re.M):
        method, path = listed[0].lower(), listed[1]
        if method not in document.get("paths", {}).get(path, {}):
            fail(f"docs/api.md: the Endpoints table lists `{listed[0]} {path}`, the OpenAPI document does not")
    print(f"api.md: {operations} operations of the OpenAPI document, their sections and fields")


# ---------------------------------------------------------------------------------------------
# The walkthrough, run against a binary

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def blocks(path, start_heading=None, end_heading=None):
    """The fenced blocks of a document (or of the part between two level-2 headings), as
    (kind, text, line) with kind "sh" for shell blocks and "answer" for the others."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    inside = start_heading is None
    out, current, kind, first = [], None, None, 0
    for number, line in enumerate(lines, 1):
        if start_heading is not None and current is None:
            if line.strip() == start_heading:
                inside = True
                continue
            if inside and end_heading is not None and line.startswith("## ") and line.strip() != start_heading:
                break
        if not inside:
            continue
        match = re.match(r"^\s*```(\w*)\s*$", line)
        if match and current is None:
            current, kind, first = [], match.group(1), number
            continue
        if current is not None and re.match(r"^\s*```\s*$", line):
            out.append(("sh" if kind in ("sh", "bash", "shell") else "answer", "\n".join(current), first))
            current = None
            continue
        if current is not None:
            current.append(line)
    return out


def answer_pattern(answer):
    """A regular expression matching the output a documented answer stands for: whitespace
    between tokens free, `…` any text, the values of random ids any hex."""
    pattern, i = "", 0
    # Session ids are random: the document's id, or its abbreviation (`d750…`), stands for any.
    text = re.sub(r'"session":"[0-9a-f]*…?"', '"session":"\x00"', answer.strip())
    while i < len(text):
        c = text[i]
        if c == "\x00":
            pattern += r"[0-9a-f]{32}"
        elif c == "…":
            pattern += r".*?"
        elif c.isspace():
            while i + 1 < len(text) and text[i + 1].isspace():
                i += 1
            pattern += r"\s*"
        else:
            pattern += re.escape(c)
        i += 1
    return re.compile(pattern, re.S)


def divergence(answer, got):
    """Where the documented answer and the output part: the longest prefix of the answer (without
    whitespace) that still matches, and what follows it on both sides."""
    text = re.sub(r'"session":"[0-9a-f]*…?"', '"session":"\x00"', normalise_output(answer))
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if answer_pattern(text[:middle]).search(got):
            low = middle
        else:
            high = middle - 1
    found = answer_pattern(text[:low]).search(got)
    at = found.end() if found else 0
    return (f"\n  documented: …{text[max(0, low - 60):low]}>>>{text[low:low + 80]}"
            f"\n  printed:    …{got[max(0, at - 60):at]}>>>{got[at:at + 80]}")


def normalise_output(output):
    return re.sub(r"\s+", "", output)


# Guides whose shell blocks run as they stand against one local binary (the others need Docker,
# Redis, a release build or Chromium: CI runs those in their own steps).
RUNNABLE_GUIDES = ["walkthrough.md", "scrolling-helpers.md", "layout-changes.md", "generated-layouts.md",
                   "stacks.md", "websocket.md"]


def run_walkthrough(binary):
    sources = [(os.path.join(ROOT, "README.md"), "## A first session with curl", "##")]
    sources += [(os.path.join(ROOT, "docs", "guides", name), None, None) for name in RUNNABLE_GUIDES]
    for path, start, end in sources:
        found = blocks(path, start, end)
        shell = [b for b in found if b[0] == "sh"]
        if not shell:
            fail(f"{rel(path)}: no shell block to run")
            continue
        run_document(binary, path, found)


def run_document(binary, path, found):
    port = free_port()
    work = tempfile.mkdtemp(prefix="check-docs-")
    # The commands run "from the repository root": its scripts and docs, read-only, by link.
    for name in ("scripts", "docs"):
        os.symlink(os.path.join(ROOT, name), os.path.join(work, name))
    log = open(os.path.join(work, "viewportd.log"), "w")
    env = dict(os.environ, HTTP_HOST="127.0.0.1", HTTP_PORT=str(port), LOG_LEVEL="warning")
    for key in ("AUTH_TOKEN", "STORE_URL", "VIEWPORTD_CONFIG"):
        env.pop(key, None)
    server = subprocess.Popen([binary], cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    fail(f"{rel(path)}: {binary} did not start on port {port}")
                    return
                time.sleep(0.1)
        shell = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=work, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                                 env=dict(os.environ, PATH=os.environ.get("PATH", "/usr/bin:/bin")))
        ran = 0
        for index, (kind, text, line) in enumerate(found):
            if kind != "sh":
                continue
            command = re.sub(r"\blocalhost:8080\b|\b127\.0\.0\.1:8080\b",
                             f"127.0.0.1:{port}", text)
            output = run_block(shell, command)
            ran += 1
            if output is None:
                fail(f"{rel(path)}:{line}: the block did not finish within 30 s")
                break
            expected = expected_answers(found, index)
            check_output(path, line, output, expected)
        shell.stdin.close()
        shell.wait(timeout=10)
        print(f"walkthrough: {rel(path)}: {ran} shell blocks run against {os.path.basename(binary)} on port {port}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
        shutil.rmtree(work, ignore_errors=True)


MARK = "__check_docs_block_done__"


def run_block(shell, command):
    shell.stdin.write(command + f"\necho; echo {MARK} $?\n")
    shell.stdin.flush()
    lines, deadline = [], time.monotonic() + 30
    while time.monotonic() < deadline:
        line = shell.stdout.readline()
        if not line:
            return None
        if line.startswith(MARK):
            status = line.split()[-1]
            out = "".join(lines)
            return out if status == "0" else out + f"\n[exit status {status}]"
        lines.append(line)
    return None


def expected_answers(found, index):
    """The answer blocks after shell block `index`, up to the next shell block, and the answers
    the prose between them quotes as `{…}` (the documented JSON in the text)."""
    answers = []
    for kind, text, _ in found[index + 1:]:
        if kind == "sh":
            break
        answers.append(text)
    return answers


def check_output(path, line, output, expected):
    where = f"{rel(path)}:{line}"
    if "[exit status" in output:
        fail(f"{where}: the block failed: {output.strip()[-300:]}")
        return
    if not expected:
        return
    got = normalise_output(output)
    if not got:
        fail(f"{where}: the block printed nothing, the document shows an answer after it")
        return
    for answer in expected:
        pattern = answer_pattern(normalise_output(answer))
        if not pattern.search(got):
            fail(f"{where}: the output does not match the documented answer{divergence(answer, got)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", help="a viewportd binary to run the walkthrough against")
    args = parser.parse_args()
    check_links()
    check_words()
    check_settings_table(args.binary)
    check_api_reference()
    if args.binary:
        if not os.access(args.binary, os.X_OK):
            fail(f"--binary {args.binary} is not an executable")
        else:
            run_walkthrough(os.path.abspath(args.binary))
    else:
        print("walkthrough: skipped (no --binary)")
    if FAILURES:
        print(f"check-docs: {len(FAILURES)} failures")
        sys.exit(1)
    print("check-docs: ok")


if __name__ == "__main__":
    main()
