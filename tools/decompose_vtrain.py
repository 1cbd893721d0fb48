#!/usr/bin/env python3
"""Split vTrain's measured iteration times into per-layer and per-micro-batch costs, and stepcast's
predictions the same way, to show where a prediction goes wrong.

vTrain's rows (../shared/validation/vtrain_single_node_a100.csv) vary layers L, pipeline stages p
and micro-batches m for each hidden size h, micro-batch size b and TP degree. A 1F1B step of
stages that differ only in the head on the last one lasts

    t = (m + p - 1) * (L / p) * l  +  m * H  +  c

l: one layer's forward, recompute and backward for one micro-batch; H: the rest of the slowest
stage per micro-batch (output head, loss, embedding); c: per step (optimizer, gradient
reduction). The script fits l, H and c by least squares per (h, b, TP) group, once to the
measured times and once to stepcast's predictions, and prints them side by side. Last, it
compares how well the measured times fit this form and the form in which the head counts in
every slot, (m + p - 1)((L / p) l + H) + c. It fits nothing into stepcast: it is a diagnostic of
the error table.

Usage:
  tools/decompose_vtrain.py [--engine analytic|sim] [--stepcast build/stepcast] [CSV]
"""
import argparse
import csv
import json
import os
import subprocess
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CSV = os.path.join(HERE, "..", "..", "shared", "validation", "vtrain_single_node_a100.csv")


def least_squares(rows, targets):
    """Solve the 3x3 normal equations of rows . x = targets (Gaussian elimination)."""
    n = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    y = [sum(r[i] * t for r, t in zip(rows, targets)) for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda k: abs(a[k][col]))
        a[col], a[pivot], y[col], y[pivot] = a[pivot], a[col], y[pivot], y[col]
        if abs(a[col][col]) < 1e-12:
            return None
        for k in range(n):
            if k != col:
                f = a[k][col] / a[col][col]
                a[k] = [x - f * z for x, z in zip(a[k], a[col])]
                y[k] -= f * y[col]
    return [y[i] / a[i][i] for i in range(n)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="?", default=DEFAULT_CSV)
    parser.add_argument("--engine", default="analytic", choices=["analytic", "sim"])
    parser.add_argument("--stepcast", default=os.path.join(HERE, "..", "build", "stepcast"))
    args = parser.parse_args()

    report = json.loads(subprocess.run([args.stepcast, "validate", args.csv, "--engine", args.engine, "--json"],
                                       check=True, capture_output=True, text=True).stdout)
    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    groups = defaultdict(list)
    for row, result in zip(rows, report["rows"]):
        dp, b = int(row["data parallelism"]), int(row["micro batch"])
        p, layers = int(row["pipeline parallelism"]), int(row["# layers"])
        m = int(row["global batch"]) // (b * dp)
        key = (int(row["hidden size"]), b, int(row["tensor parallelism"]))
        groups[key].append(([(m + p - 1) * layers / p, m, 1.0], 1000 * result["measured"], 1000 * result["predicted"],
                            [(m + p - 1) * layers / p, m + p - 1, 1.0]))

    print(f"t = (m + p - 1)(L/p) l + m H + c, in ms; stepcast {args.engine}")
    print(f"{'h':>5} {'b':>2} {'tp':>2} {'rows':>4} | {'l meas':>7} {'l pred':>7} | {'H meas':>7} {'H pred':>7} | {'c meas':>7} {'c pred':>7}")
    for key in sorted(groups):
        design = [g[0] for g in groups[key]]
        measured = least_squares(design, [g[1] for g in groups[key]])
        predicted = least_squares(design, [g[2] for g in groups[key]])
        if measured is None or predicted is None:
            continue  # every row of the group has the same shape: nothing to separate
        h, b, tp = key
        print(f"{h:>5} {b:>2} {tp:>2} {len(design):>4} | {measured[0]:7.2f} {predicted[0]:7.2f} | "
              f"{measured[1]:7.2f} {predicted[1]:7.2f} | {measured[2]:7.1f} {predicted[2]:7.1f}")

    for name, column in (("head once per micro-batch", 0), ("head in every slot", 3)):
        residuals = []
        for group in groups.values():
            design = [g[column] for g in group]
            fit = least_squares(design, [g[1] for g in group])
            if fit is None or len(design) <= len(fit):
                continue
            residuals += [abs(sum(x * c for x, c in zip(row, fit)) - g[1]) / g[1] for row, g in zip(design, group)]
        print(f"measured times fitted with the {name}: mean residual {100 * sum(residuals) / len(residuals):.2f}%")


if __name__ == "__main__":
    main()
