#!/usr/bin/env python3
"""Host dispatch time per kernel launch, measured on real PyTorch training traces.

The figure behind Strategy::host_dispatch_s (src/spec/strategy.h). In an eager PyTorch step the
CPU thread launches one kernel after another; when the GPU finishes kernels faster than the host
launches them, the step runs at the host's pace. That pace is the interval between consecutive
kernel launches (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel) on one host thread.
Intervals of 1 ms or more are excluded: they are waits (synchronisation, data loading), not
dispatch. The mean, not the median, is the pace: N launches take N x mean interval.

Traces used (../shared/traces, see its README): the complete Kineto traces of training steps whose
layers are matmuls and elementwise ops, as a transformer's are:
  - DLRM training, 8 ranks on V100 (facebookresearch/param, MIT);
  - DeepSeek-V3 training, one DualPipe chunk pair on H800 (deepseek-ai/profile-data; read here for
    this figure only, the file is not copied into the project: its origin has no licence).
Left out, and why: the ResNet DDP trace (cuDNN convolutions and batch norm carry host work a
transformer layer does not have: 167 us per launch), and the Meta "sampled" traces (their events
were sampled out, so launch intervals are overstated).

Usage:
  tools/measure_host_dispatch.py                 the figure above, from ../shared/traces
  tools/measure_host_dispatch.py TRACE.json ...  the same statistic for your own Kineto traces
                                                 (.json or .json.gz); pass the result to stepcast
                                                 as --host-dispatch "<mean> us"
"""
import glob
import gzip
import json
import os
import statistics
import sys
from collections import defaultdict

LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx")
WAIT_US = 1000.0


def launch_intervals(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    by_thread = defaultdict(list)
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("name") in LAUNCHES:
            by_thread[(e["pid"], e["tid"])].append(float(e["ts"]))
    intervals = []
    for stamps in by_thread.values():
        stamps.sort()
        intervals += [b - a for a, b in zip(stamps, stamps[1:]) if b - a < WAIT_US]
    return intervals


def shared_traces():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "traces")
    files = sorted(glob.glob(os.path.join(root, "param/et_replay/tests/inputs/dlrm_kineto/*.json")))
    return files + [os.path.join(root, "profile-data/train.json")]


def main():
    files = sys.argv[1:] or shared_traces()
    pooled = []
    for path in files:
        try:
            intervals = launch_intervals(path)
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"measure_host_dispatch: {path}: not a readable Kineto trace ({e})")
        if not intervals:
            sys.exit(f"measure_host_dispatch: {path}: no kernel launches (cuda_runtime/cuda_driver events)")
        pooled += intervals
        print(f"{os.path.basename(path):60s} {len(intervals):5d} intervals, mean {statistics.mean(intervals):6.1f} us,"
              f" median {statistics.median(intervals):6.1f} us")
    print(f"pooled: {len(pooled)} intervals, mean {statistics.mean(pooled):.1f} us per kernel launch")


if __name__ == "__main__":
    main()
