#!/usr/bin/env python3
"""Print a GPU preset's `gemm_efficiency` block from measured BF16 GEMM throughput.

The block is what data/gpus/*.yaml carries for the GPUs OpenXLA measured (see
data/calibration/xla_gemm_throughput.csv): the throughput of single (b = 1) GEMMs on the grid
m, n, k in {256, ..., 4096}, as a fraction of the GPU's dense BF16 peak, so that the YAML carries
no bare rate. stepcast interpolates between the grid points (src/cost/compute.h).

Usage:
  tools/gemm_grid_yaml.py ARCH BF16_PEAK_TFLOPS [--table FILE.csv]
  tools/gemm_grid_yaml.py sm_90 989           # h100-sxm, h200, h100-96g-500w
  tools/gemm_grid_yaml.py sm_100_B200 2250    # b200
  tools/gemm_grid_yaml.py gfx942 1307.4       # mi300x
Your own measurements go in a CSV with the same columns (arch,b,m,n,k,dtype,flops).
"""
import argparse
import csv
import os
import sys

DTYPE = "bf16xbf16->bf16"
DEFAULT_TABLE = os.path.join(os.path.dirname(__file__), "..", "data", "calibration", "xla_gemm_throughput.csv")


def read_grid(path, arch):
    rates = {}
    with open(path) as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            if row["arch"] == arch and row["dtype"] == DTYPE and row["b"] == "1":
                rates[int(row["m"]), int(row["n"]), int(row["k"])] = float(row["flops"])
    return rates


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("arch")
    p.add_argument("bf16_peak_tflops", type=float)
    p.add_argument("--table", default=DEFAULT_TABLE)
    a = p.parse_args()
    rates = read_grid(a.table, a.arch)
    sizes = sorted({m for m, _, _ in rates})
    if not rates or len(rates) != len(sizes) ** 3:
        sys.exit(f"{a.table}: {a.arch} has no full grid of b = 1 {DTYPE} rows")
    print("gemm_efficiency:")
    print("  sizes: [" + ", ".join(str(s) for s in sizes) + "]")
    print("  bf16:")
    peak = a.bf16_peak_tflops * 1e12
    for m in sizes:
        rows = ["[" + ", ".join(f"{rates[m, n, k] / peak:.4f}" for k in sizes) + "]" for n in sizes]
        print(f"    - [{', '.join(rows)}]  # m = {m}")


if __name__ == "__main__":
    main()
