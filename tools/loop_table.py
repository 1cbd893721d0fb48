#!/usr/bin/env python3
"""Print, as the markdown table of docs/accuracy.md ("Steps traced back to back"), what
`tools/measure_step.py --loop-trace` found: for each case, its kernels' GPU time in steps taken
back to back against the single profiled step, by kernel class, the idle time between kernels,
the time the GPU waited for the host, and the clocks.

Usage: tools/loop_table.py DIR [--earlier DIR2]
DIR holds measure_step.py's case folders (result.json with its `loop`); DIR2, where given, an
earlier run of the same cases, whose median step is printed beside this run's.
"""
import argparse
import json
import os
import statistics


def mean_of(steps, key):
    return statistics.mean(s[key] for s in steps)


def class_ratio(steps, single, cls):
    return mean_of([s["kernel_ms_by_class"] for s in steps], cls) / single["kernel_ms_by_class"][cls]


def table(run, earlier):
    cols = ["case", "single step: GPU busy (ms)", "back to back: GPU busy", "longer by",
            "GEMM + attention longer by", "other kernels longer by", "idle between kernels",
            "of it waiting for the host", "timed step (median)"]
    if earlier:
        cols.append("earlier run's timed step")
    cols.append("SM MHz: timed / single / back to back")
    lines = ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
    for case in sorted(os.listdir(run)):
        path = os.path.join(run, case, "result.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            r = json.load(f)
        if "loop" not in r:
            raise SystemExit(f"{path}: no field loop (run tools/measure_step.py with --loop-trace)")
        loop, single = r["loop"]["steps"], r["loop"]["single_step"][0]
        busy = mean_of(loop, "busy_ms")
        by = {c: mean_of([s["kernel_ms_by_class"] for s in loop], c) for c in ("gemm", "attention", "other")}
        one = single["kernel_ms_by_class"]
        compute = (by["gemm"] + by["attention"]) / (one["gemm"] + one["attention"])
        row = [case, f"{single['busy_ms']:.1f}", f"{busy:.1f}", f"{busy / single['busy_ms'] - 1:+.1%}",
               f"{compute - 1:+.1%}", f"{by['other'] / one['other'] - 1:+.1%}",
               f"{mean_of(loop, 'idle_ms'):.1f}", f"{mean_of(loop, 'idle_waiting_for_launch_ms'):.1f}",
               f"{r['step_s_median'] * 1e3:.1f}"]
        if earlier:
            with open(os.path.join(earlier, case, "result.json")) as f:
                row.append(f"{json.load(f)['step_s_median'] * 1e3:.1f}")
        row.append(f"{r['sm_mhz_mean']:.0f} / {r['profiled_sm_mhz_mean']:.0f} / {r['loop']['sm_mhz_mean']:.0f}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run")
    p.add_argument("--earlier")
    a = p.parse_args()
    print(table(a.run, a.earlier))


if __name__ == "__main__":
    main()
