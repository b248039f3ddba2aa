#!/usr/bin/env bash
# CI for the OpenAPI document (called from .ci/run):
#   1. openapi-spec-validator on openapi/viewportd.openapi.json, and no schema form that client
#      generators refuse or skip (scripts/openapi-generator-forms.py --check);
#   2. scripts/openapi-conformance.py: every documented example against the running service,
#      and GET /openapi.json is openapi/viewportd.openapi.json byte for byte (the build embeds
#      the file itself, SwiftPM `.embedInCode`; `swift test` checks the same in
#      OpenAPIDocumentTests);
#   3. scripts/fuzz.sh: schemathesis with every check on.
# Each step installs what it needs with pip only when it is missing. Uses $VIEWPORTD, or builds
# .build-openapi/debug/viewportd when it is not there.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v openapi-spec-validator >/dev/null 2>&1; then
    echo "check-openapi: installing openapi-spec-validator with pip"
    python3 -m pip install -q openapi-spec-validator
fi

echo "== openapi-spec-validator"
openapi-spec-validator openapi/viewportd.openapi.json

echo "== forms client generators take (scripts/openapi-generator-forms.py --check)"
python3 scripts/openapi-generator-forms.py --check

if [[ -z ${VIEWPORTD:-} ]]; then
    export VIEWPORTD=$PWD/.build-openapi/debug/viewportd
    if [[ ! -x $VIEWPORTD ]]; then
        echo "== building viewportd (debug)"
        swift build --scratch-path .build-openapi --product viewportd
    fi
fi

echo "== conformance ($VIEWPORTD)"
python3 scripts/openapi-conformance.py --binary "$VIEWPORTD"

echo "== fuzz"
scripts/fuzz.sh
