"""Schemathesis hooks for viewportd (loaded by scripts/fuzz.sh through SCHEMATHESIS_HOOKS).

NDJSON (`application/x-ndjson`) is not a format schemathesis knows. The document describes an
update stream as an array of ViewportUpdate objects (one per line) and the answer as an array of
plans and problems (one per line), as OpenAPI 3.2's itemSchema would; these hooks turn such an
array into NDJSON lines for requests and NDJSON lines back into an array for response checks.
"""
import json
import os

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson_request(ctx, value):
    if value is None:
        return None
    # Negative testing can generate something other than an array: send it as a single line.
    items = value if isinstance(value, list) else [value]
    return "".join(json.dumps(item, allow_nan=False) + "\n" for item in items).encode()


@schemathesis.deserializer("application/x-ndjson")
def ndjson_response(ctx, response):
    text = response.content.decode("utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


# scripts/fuzz.sh fuzzes the viewport operation once per body media type (FUZZ_MEDIA_TYPE), so
# that the NDJSON run alone can accept 200 for invalid data (see scripts/schemathesis-ndjson.toml).
_MEDIA_TYPE = os.environ.get("FUZZ_MEDIA_TYPE")


@schemathesis.hook
def filter_case(ctx, case):
    return _MEDIA_TYPE is None or case.media_type is None or case.media_type == _MEDIA_TYPE
