#!/usr/bin/env python3
"""Writes a synthetic scroll trace as NDJSON viewport updates (the body format of
POST /v1/sessions/{id}/viewport), for `viewportd replay` and load tests.

Each gesture is a drag sampled at 60 Hz (drag-begin, dragging with velocity, drag-end), then
UIScrollView's deceleration (rate 0.998 per millisecond) as decelerating updates, then idle;
now and then a jump (`scrollTo` an item, or an offset far away). Offsets are clamped to
[0, content height - viewport height]. Deterministic for a seed.

Usage: scripts/make-trace.py --content-height H [--viewport-height 667] [--gestures 40]
                             [--seed 1] [--start Y] [--scroll-to ID ...] > trace.ndjson
"""
import argparse
import json
import random
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--content-height", type=float, required=True)
    parser.add_argument("--viewport-height", type=float, default=667)
    parser.add_argument("--gestures", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=float, default=0, help="the offset of the first gesture")
    parser.add_argument("--scroll-to", nargs="*", default=[], help="item ids a jump may scroll to")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    top = max(0.0, args.content_height - args.viewport_height)
    seq = 0
    out = sys.stdout

    def emit(update):
        nonlocal seq
        seq += 1
        update["seq"] = seq
        out.write(json.dumps(update, separators=(",", ":")) + "\n")

    def clamp(value):
        return min(top, max(0.0, value))

    y = clamp(args.start)
    for _ in range(args.gestures):
        if rng.random() < 0.1:
            if args.scroll_to and rng.random() < 0.5:
                emit({"scrollTo": {"id": rng.choice(args.scroll_to), "align": "start"}, "phase": "idle"})
                continue
            y = clamp(rng.uniform(0, top))
            emit({"offset": [0, round(y, 1)], "phase": "idle"})
            continue
        direction = 1 if rng.random() < 0.6 else -1
        emit({"offset": [0, round(y, 1)], "phase": "drag-begin"})
        speed = rng.uniform(300, 4000) * direction  # points per second during the drag
        for _ in range(rng.randint(4, 12)):
            y = clamp(y + speed / 60)
            emit({"offset": [0, round(y, 1)], "velocity": [0, round(speed)], "phase": "dragging"})
        emit({"offset": [0, round(y, 1)], "velocity": [0, round(speed)], "phase": "drag-end"})
        velocity = speed
        while abs(velocity) > 20:
            velocity *= 0.998 ** (1000 / 60)
            y2 = clamp(y + velocity / 60)
            if y2 == y:
                break
            y = y2
            emit({"offset": [0, round(y, 1)], "velocity": [0, round(velocity)], "phase": "decelerating"})
        emit({"offset": [0, round(y, 1)], "phase": "idle"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
