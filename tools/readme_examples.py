#!/usr/bin/env python3
"""Runs every `$ stepcast ...` and `$ tools/...` example of the README and checks that its output
is the one the README shows: the README promises real output, and a modelling change that moves
a figure must move it there too.

    tools/readme_examples.py build/stepcast [--readme README.md]

A line `...` in the README's output stands for any number of lines; a command whose own text
holds `...` is shown, not run. The commands run in a scratch directory that sees the project's
examples/, data/, tools/, tests/ and the binary as build/stepcast and on the PATH, and ../shared
beside it, with the inputs the README assumes: GPT-2's Hugging Face config.json in gpt2/
(tests/data/good/gpt2: openai-community/gpt2 on the Hugging Face Hub, MIT licence) and a
run.yaml whose fourth line is the misspelt option the README's error example reads. Exits 1
naming each mismatch.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def examples(readme):
    """(command, expected output lines) for each runnable example, in README order."""
    for block in re.findall(r"```\n(.*?)```", readme, re.S):
        lines = block.split("\n")
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ "):
                i += 1
                continue
            command = lines[i][2:]
            while command.endswith("\\"):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            i += 1
            expected = []
            while i < len(lines) and not lines[i].startswith("$ "):
                expected.append(lines[i])
                i += 1
            while expected and expected[-1] == "":
                expected.pop()
            shown_only = " ... " in command or command.endswith("...")
            if not shown_only and command.startswith(("stepcast ", "tools/")):
                yield command, expected


def matches(expected, output):
    """Where `output` first departs from `expected` (None when it does not), `...` matching any
    run of lines."""
    j = k = 0
    while j < len(expected):
        if expected[j].strip() == "...":
            j += 1
            if j == len(expected):
                return None
            while k < len(output) and output[k] != expected[j]:
                k += 1
            if k == len(output):
                return expected[j], "<end>"
            continue
        if k >= len(output) or output[k] != expected[j]:
            return expected[j], output[k] if k < len(output) else "<end>"
        j += 1
        k += 1
    if k < len(output):
        return "<end>", output[k]
    return None


def scratch_directory(binary):
    """A directory beside a `shared` link, holding links to the project's inputs and the README's
    assumed files."""
    base = tempfile.mkdtemp(prefix="stepcast-readme-")
    shared = os.path.join(os.path.dirname(ROOT), "shared")
    if os.path.isdir(shared):
        os.symlink(shared, os.path.join(base, "shared"))
    work = os.path.join(base, "work")
    os.mkdir(work)
    for name in ("examples", "data", "tools", "tests"):
        os.symlink(os.path.join(ROOT, name), os.path.join(work, name))
    os.mkdir(os.path.join(work, "build"))
    os.symlink(os.path.abspath(binary), os.path.join(work, "build", "stepcast"))
    shutil.copytree(os.path.join(ROOT, "tests", "data", "good", "gpt2"), os.path.join(work, "gpt2"))
    with open(os.path.join(work, "run.yaml"), "w") as f:
        f.write("model: llama3.1-8b\ngpus: 8\ntp: 8\ntpp: 8\n")
    return base, work


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", help="the stepcast executable")
    parser.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    args = parser.parse_args()
    with open(args.readme, encoding="utf-8") as f:
        readme = f.read()
    base, work = scratch_directory(args.binary)
    env = dict(os.environ, PATH=os.path.join(work, "build") + os.pathsep + os.environ["PATH"])
    mismatches = runs = 0
    try:
        for command, expected in examples(readme):
            runs += 1
            run = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=work, env=env)
            output = (run.stdout + run.stderr).rstrip("\n")
            where = matches(expected, output.split("\n") if output else [])
            if where:
                mismatches += 1
                print(f"MISMATCH: {command}\n  README: {where[0]}\n  output: {where[1]}")
    finally:
        shutil.rmtree(base)
    print(f"{runs} README examples run, {mismatches} with other output than the README shows")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
