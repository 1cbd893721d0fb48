#!/usr/bin/env python3
"""How far apart the closed form (`stepcast estimate`) and the simulation (`stepcast simulate`) are
over random strategies: dense and MoE models, 8-128 GPUs of five clusters, every kind of
parallelism and ZeRO stage, host time left out. Prints the mean and worst relative gap per kind
of model, how many exceed 3%, and the worst cases as command lines to rerun.

    tools/engine_agreement.py build/stepcast [--seed 40] [--count 120] [--async-sends] [--worst 5]
                              [--max-mean DENSE MOE]

With --max-mean (percent) it exits 1 when either kind's mean gap is above its limit: a ratchet
that ctest runs (CMakeLists.txt).

The same seed draws the same candidates; a build that accepts different strategies (memory,
validation) keeps a different sample, so compare builds on one binary's sample only when both
accept the same ones. docs/accuracy.md quotes its figures.
"""
import argparse
import json
import random
import subprocess
import sys

MODELS = ["llama3.1-8b", "llama3.1-70b", "llama2-70b", "qwen3-32b",
          "mixtral-8x7b", "llama4-scout", "llama4-maverick", "gpt-oss-120b"]
MOE = {"mixtral-8x7b", "llama4-scout", "llama4-maverick", "gpt-oss-120b"}
CLUSTERS = ["dgx-h100", "dgx-a100-80g", "llama3-h100-roce", "dgx-b200", "gb200-nvl72"]


def candidate(rng):
    """One random strategy's options, or None where its degrees do not divide."""
    model, cluster = rng.choice(MODELS), rng.choice(CLUSTERS)
    gpus, tp, pp = rng.choice([8, 16, 32, 64, 128]), rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4])
    vp, zero = rng.choice([1, 1, 2]), rng.choice([0, 1, 2, 3])
    ep = rng.choice([1, 2, 4, 8]) if model in MOE else 1
    micro_batch, seq = rng.choice([1, 2]), rng.choice([2048, 4096])
    cp, exchange = rng.choice([1, 1, 2, 4]), rng.choice(["ring", "all-gather"])
    if gpus % (tp * pp * cp):
        return None
    dp = gpus // (tp * pp * cp)
    if dp % ep:
        return None
    global_batch = dp * micro_batch * rng.choice([1, 2, 4, 8])
    args = ["--model", model, "--cluster", cluster, "--gpus", str(gpus), "--tp", str(tp),
            "--pp", str(pp), "--vp", str(vp), "--cp", str(cp), "--cp-exchange", exchange,
            "--zero", str(zero), "--ep", str(ep),
            "--micro-batch", str(micro_batch), "--global-batch", str(global_batch),
            "--seq", str(seq), "--host-dispatch", "0us", "--json"]
    if tp > 1 and rng.random() < 0.5:
        args.append("--sp")
    return model in MOE, args


def step_time(binary, command, args):
    run = subprocess.run([binary, command] + args, capture_output=True, text=True)
    return json.loads(run.stdout)["step_time_s"] if run.returncode == 0 else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", help="the stepcast executable")
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--count", type=int, default=120, help="strategies both engines accept")
    parser.add_argument("--async-sends", action="store_true", help="--pipeline-transfers async")
    parser.add_argument("--worst", type=int, default=5, help="worst cases to print")
    parser.add_argument("--max-mean", type=float, nargs=2, metavar=("DENSE", "MOE"),
                        help="exit 1 when a kind's mean gap exceeds its limit, in percent")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    rows = []
    for _ in range(20 * options.count):
        if len(rows) >= options.count:
            break
        drawn = candidate(rng)
        if drawn is None:
            continue
        moe, args = drawn
        if options.async_sends:
            args += ["--pipeline-transfers", "async"]
        estimated = step_time(options.binary, "estimate", args)
        simulated = step_time(options.binary, "simulate", args) if estimated else None
        if simulated:
            rows.append((moe, estimated / simulated - 1, args))
    if not rows:
        sys.exit("no strategy was accepted by both engines")
    above = False
    for moe in (False, True):
        gaps = [abs(gap) for kind, gap, _ in rows if kind == moe]
        if gaps:
            mean = 100 * sum(gaps) / len(gaps)
            print(f"{'moe' if moe else 'dense'} {len(gaps)} mean {mean:.2f}% "
                  f"max {100 * max(gaps):.1f}% >3%: {sum(1 for g in gaps if g > 0.03)}")
            if options.max_mean and mean > options.max_mean[1 if moe else 0]:
                print(f"{'moe' if moe else 'dense'} mean gap {mean:.2f}% is above its limit "
                      f"{options.max_mean[1 if moe else 0]}%")
                above = True
    for _, gap, args in sorted(rows, key=lambda row: -abs(row[1]))[:options.worst]:
        print(f"{100 * gap:+.1f}% (estimate vs simulate) {' '.join(args)}")
    sys.exit(1 if above else 0)


if __name__ == "__main__":
    main()
