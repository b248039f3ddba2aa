#!/usr/bin/env python3
"""Generates the Python client of openapi/viewportd.openapi.json with openapi-python-client and
runs its round trip (clients/python/roundtrip.py) against a live viewportd.

- openapi-python-client 0.29 is installed with pip when missing.
- It generates from the document as it is, except for the `application/x-ndjson` media types
  (update streams): the generator does not support NDJSON ("Unsupported content type") and, told to
  treat it as bytes, writes a request builder that fails on every call. The client sends
  `application/json`; streams are for httpx directly (docs/guides/websocket.md).
- Any warning or error of the generator fails the run.
- The client is written to .build/python-client (not committed): `--output DIR` to keep it.

Usage: scripts/python-client.py [--binary PATH] [--output DIR]
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = "openapi-python-client>=0.29,<0.30"


def log(*parts):
    print("python-client:", *parts, flush=True)


def ensure_generator():
    try:
        version = subprocess.run(["openapi-python-client", "--version"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        version = ""
    if "0.29." not in version:
        log(f"pip install '{GENERATOR}'")
        for extra in (["--root-user-action=ignore"], [], ["--break-system-packages"]):
            if subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *extra, GENERATOR],
                              stderr=subprocess.DEVNULL).returncode == 0:
                break
        version = subprocess.run(["openapi-python-client", "--version"], capture_output=True, text=True).stdout
    log(version.strip())


def without_ndjson(document):
    for operations in document["paths"].values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            operation.get("requestBody", {}).get("content", {}).pop("application/x-ndjson", None)
            for response in operation.get("responses", {}).values():
                response.get("content", {}).pop("application/x-ndjson", None)
    return document


def generate(output):
    with open(os.path.join(ROOT, "openapi/viewportd.openapi.json"), encoding="utf-8") as f:
        document = without_ndjson(json.load(f))
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "viewportd.openapi.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document, f)
        if os.path.exists(output):
            shutil.rmtree(output)
        result = subprocess.run(
            ["openapi-python-client", "generate", "--path", path, "--output-path", output,
             "--config", os.path.join(ROOT, "clients/python/config.yaml"), "--meta", "none"],
            capture_output=True, text=True)
    text = result.stdout + result.stderr
    print(text.strip())
    if result.returncode != 0 or "Warning" in text or "Error" in text or not os.path.isdir(output):
        log("FAIL: the generator reported problems (above)")
        return False
    models = len([n for n in os.listdir(os.path.join(output, "models")) if n.endswith(".py") and n != "__init__.py"])
    log(f"generated {output}: {models} model modules, no warnings")
    return True


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.environ.get("VIEWPORTD"), help="viewportd binary ($VIEWPORTD, .build/release, .build/debug)")
    parser.add_argument("--output", default=os.path.join(ROOT, ".build/python-client/viewportd_client"))
    args = parser.parse_args()
    binary = args.binary or next((p for p in (f"{ROOT}/.build/release/viewportd", f"{ROOT}/.build/debug/viewportd") if os.access(p, os.X_OK)), None)
    if not binary:
        sys.exit("python-client: no viewportd binary (build one, or pass --binary)")

    ensure_generator()
    if not generate(args.output):
        return 1

    port = free_port()
    token = f"client-{os.getpid()}"
    logfile = tempfile.NamedTemporaryFile(prefix="viewportd-python-client-", suffix=".log", delete=False)
    server = subprocess.Popen([binary, "--http-host", "127.0.0.1", "--http-port", str(port), "--auth-token", token],
                              cwd=ROOT, stdout=logfile, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while "listening on http://" not in open(logfile.name, errors="replace").read():
            if server.poll() is not None or time.monotonic() > deadline:
                log("FAIL: viewportd did not start")
                return 1
            time.sleep(0.05)
        env = dict(os.environ, PYTHONPATH=os.path.dirname(args.output) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        result = subprocess.run([sys.executable, os.path.join(ROOT, "clients/python/roundtrip.py"),
                                 f"http://127.0.0.1:{port}", "--token", token], env=env)
        return result.returncode
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        os.unlink(logfile.name)


if __name__ == "__main__":
    sys.exit(main())
