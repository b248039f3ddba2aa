#!/usr/bin/env python3
"""Keeps openapi/viewportd.openapi.json in forms that client generators understand.

Apple's swift-openapi-generator (1.14) and openapi-python-client (0.29) refuse or skip some
JSON Schema 2020-12 forms that the document used. Each has an equivalent they take, which this
script writes in place (same key order, same formatting, so a diff shows only what changed):

  - `"items": false` after `prefixItems` (a tuple)  ->  `"items": <the union of the prefix items>`
    with the same `minItems`/`maxItems`; `prefixItems` stays when the positions differ (a Rect's
    width and height are >= 0, its x and y are not) and goes when they are all alike.
  - `"const": v`  ->  `"type": <v's type>, "enum": [v]`.
  - `"oneOf": [S, {"type": "null"}]` (a nullable field)  ->  S's own keys with
    `"type": [<S's type>, "null"]` (a `$ref` to a scalar schema is inlined for it).

  - `"allOf": [{"$ref": X}]` that only attaches a description or default  ->  `"$ref": X` with
    those keys beside it (OpenAPI 3.1 allows them): generators then use X itself, not a wrapper
    type around it.
  - an error response's `allOf: [Problem, {"properties": {"status": {"enum": [N]}}}]`  ->
    `$ref` to a shared `ProblemN` schema (one generated type per status, not per operation).

It does not rewrite what needs a decision (it reports it and exits 1 with --check):
  - `not`, and `required` naming properties that the same schema does not define (in an object,
    or a subschema of `oneOf`/`anyOf`/`allOf`): define them there, or split the schema into
    variants that each define their properties;
  - any `{"type": "null"}` left, and `const` or `"items": false` anywhere.

Usage: scripts/openapi-generator-forms.py [--check] [FILE]   (default openapi/viewportd.openapi.json)
The build embeds the rewritten file as it is (nothing to regenerate): rebuild to serve it.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = {"example", "examples", "x-invalid-examples", "x-websocket-messages"}


def json_type(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "array" if isinstance(value, list) else "object"


def without(schema, keys):
    return {k: v for k, v in schema.items() if k not in keys}


def replace_key(schema, key, replacement):
    """`schema` with `key` replaced, in its place, by the pairs of `replacement`."""
    out = {}
    for k, v in schema.items():
        if k == key:
            for rk, rv in replacement.items():
                if rk not in schema or rk == key:
                    out[rk] = rv
        else:
            out[k] = v
    return out


def fix(node, schemas):
    if isinstance(node, list):
        return [fix(v, schemas) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: (v if k in SKIP else fix(v, schemas)) for k, v in node.items()}
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and set(all_of[0]) == {"$ref"} and set(node) <= {"allOf", "description", "default"}:
        node = replace_key(node, "allOf", {"$ref": all_of[0]["$ref"]})
    if "const" in node:
        value = node["const"]
        replacement = {"enum": [value]} if "type" in node else {"type": json_type(value), "enum": [value]}
        node = replace_key(node, "const", replacement)
    if node.get("items") is False and isinstance(node.get("prefixItems"), list):
        prefix = node["prefixItems"]
        shapes = [without(p, {"description"}) for p in prefix]
        if all(s == shapes[0] for s in shapes):
            node = replace_key(node, "prefixItems", {})
            node["items"] = shapes[0]
        else:
            types = {p.get("type") for p in prefix}
            node["items"] = {"type": types.pop()} if len(types) == 1 else {}
    one_of = node.get("oneOf")
    if isinstance(one_of, list) and len(one_of) == 2 and {"type": "null"} in one_of:
        other = one_of[0] if one_of[1] == {"type": "null"} else one_of[1]
        if "$ref" in other:
            target = schemas.get(other["$ref"].rsplit("/", 1)[-1], {})
            if target.get("type") in ("string", "integer", "number", "boolean"):
                other = without(target, {"description"})
        if isinstance(other.get("type"), str):
            merged = dict(other)
            merged["type"] = [other["type"], "null"]
            node = replace_key(node, "oneOf", merged)
    return node


def status_problem(schema):
    """N when `schema` is the problem of one status, `allOf: [Problem, {status: enum [N]}]`."""
    if not isinstance(schema, dict) or set(schema) != {"allOf"} or len(schema["allOf"]) != 2:
        return None
    base, extra = schema["allOf"]
    if base != {"$ref": "#/components/schemas/Problem"} or set(extra) != {"properties"}:
        return None
    status = extra["properties"].get("status") if set(extra["properties"]) == {"status"} else None
    if status in ({"type": "integer", "enum": [n]} for n in range(400, 600)):
        return status["enum"][0]
    return None


def share_problems(document):
    """Every response's `allOf: [Problem, {status: N}]` becomes a `$ref` to a shared `ProblemN`
    (after `Problem` in components), so generators make one type per status, not one per
    operation and status."""
    used = {}
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for response in operation.get("responses", {}).values():
                for media in response.get("content", {}).values():
                    status = status_problem(media.get("schema"))
                    if status is not None:
                        used[status] = media["schema"]
                        media["schema"] = {"$ref": f"#/components/schemas/Problem{status}"}
    if not used:
        return document
    schemas = document["components"]["schemas"]
    out = {}
    for name, schema in schemas.items():
        if name.startswith("Problem") and name[7:].isdigit() and int(name[7:]) in used:
            continue
        out[name] = schema
        if name == "Problem":
            for status in sorted(used | {int(n[7:]): None for n in schemas if n.startswith("Problem") and n[7:].isdigit()}):
                existing = schemas.get(f"Problem{status}")
                out[f"Problem{status}"] = existing or {
                    "description": f"The problem of a {status} answer: `status` is {status}.",
                    **used[status],
                }
    document["components"]["schemas"] = out
    return document


def problems(node, path, out):
    if isinstance(node, list):
        for i, v in enumerate(node):
            problems(v, f"{path}/{i}", out)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in SKIP:
            continue
        here = f"{path}/{key}"
        if key == "const":
            out.append(f"{here}: const (write enum)")
        if key == "not":
            out.append(f"{here}: not (split the schema into variants)")
        if key == "items" and value is False:
            out.append(f"{here}: items false (give the items' schema)")
        if key == "type" and (value == "null"):
            out.append(f"{here}: a null type on its own (write type: [T, \"null\"])")
        if key == "required" and isinstance(value, list) and "properties" in node and "allOf" not in node:
            missing = [name for name in value if name not in node["properties"]]
            if missing:
                out.append(f"{here}: required {missing} without their properties")
        if key in ("oneOf", "anyOf", "allOf") and isinstance(value, list):
            for i, sub in enumerate(value):
                if isinstance(sub, dict) and "required" in sub:
                    defined = set(sub.get("properties", {}))
                    missing = [name for name in sub["required"] if name not in defined]
                    if missing:
                        out.append(f"{here}/{i}: required {missing} without their properties")
        problems(value, here, out)


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    check = "--check" in sys.argv[1:]
    path = args[0] if args else os.path.join(ROOT, "openapi/viewportd.openapi.json")
    text = open(path, encoding="utf-8").read()
    document = json.loads(text)
    if check:
        found = []
        problems(document, "", found)
        for line in found:
            print(f"openapi-generator-forms: {line}", file=sys.stderr)
        if found:
            print(f"openapi-generator-forms: {len(found)} forms generators refuse or skip "
                  f"(run scripts/openapi-generator-forms.py to rewrite the mechanical ones)", file=sys.stderr)
            return 1
        print("openapi-generator-forms: every schema is in a form the generators take")
        return 0
    fixed = share_problems(fix(document, document.get("components", {}).get("schemas", {})))
    out = json.dumps(fixed, indent=2, ensure_ascii=False) + "\n"
    if out != text:
        open(path, "w", encoding="utf-8").write(out)
        print(f"openapi-generator-forms: rewrote {path}")
    found = []
    problems(fixed, "", found)
    for line in found:
        print(f"openapi-generator-forms: left for a decision: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
