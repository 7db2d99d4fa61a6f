"""Every output format of every real input, written to one folder, to check a refactor changes
no byte: run it before and after, then `diff -r BEFORE AFTER`.

    python benchmarks/snapshot.py OUT [--quick]

It drives the command line in-process (click's CliRunner), the interface no refactor changes:
`report` in each format for the bundled fixtures and those under ../shared/fixtures, `diff` in
each format for a few pairs. Each output file is named after its input and format; an exit code
and the command's stderr are kept beside it, so a changed message shows too. `--quick` takes
the bundled fixtures only; `--folders` runs the folder cases alone (each fixtures folder as one
run, in the formats rooflint.reduced makes, and its gates); `--only WORD` the inputs whose path
holds WORD (e.g. kineto), and the folders and pairs all of whose paths do.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from click.testing import CliRunner

from rooflint.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "fixtures"
REPORT_FORMATS = ["table", "json", "markdown", "html", "csv", "svg"]
DIFF_FORMATS = ["table", "markdown", "json"]
DIFF_PAIRS = [
    ("fixtures/ncu/a100-gemm-details.csv", "fixtures/ncu/rtx2080ti-sgemm-raw-base.csv"),
    ("fixtures/ncu/h200-block-raw-stdout.csv", "fixtures/ncu/h200-block-raw-stdout.csv"),
    ("fixtures/kineto/h200-train-trace.json.gz", "fixtures/kineto/h200-block-trace.json.gz"),
]


# Folders reported as one run, in the formats that merge each file's partial sums (and the
# above-roof gate, which reads the worst launch from them): rooflint.reduced's path.
FOLDER_FORMATS = ["table", "markdown"]


def folders(quick: bool) -> list[Path]:
    """Every folder of fixtures (the bundled ones, then ../shared/fixtures and its folders)."""
    found = sorted(p for p in (ROOT / "fixtures").iterdir() if p.is_dir() and p.name != "bad")
    if not quick and SHARED.is_dir():
        found += [SHARED, *sorted(p for p in SHARED.iterdir() if p.is_dir())]
    return found


def inputs(quick: bool) -> list[Path]:
    found = sorted(p for p in (ROOT / "fixtures").rglob("*") if p.is_file())
    found = [p for p in found if "bad" not in p.parts and p.suffix != ".md"]
    if not quick and SHARED.is_dir():
        found += sorted(
            p
            for p in SHARED.rglob("*")
            if p.is_file() and p.suffix not in (".md",) and "known-answers" not in str(p)
        )
    return found


def label(path: Path) -> str:
    try:
        rel = path.relative_to(ROOT)
    except ValueError:
        rel = Path("shared") / path.relative_to(SHARED)
    return str(rel).replace(os.sep, "__")


def run(runner: CliRunner, args: list[str], out: Path) -> None:
    result = runner.invoke(main, args, catch_exceptions=True)
    text = f"exit {result.exit_code}\n{result.stderr}"
    if result.exception and not isinstance(result.exception, SystemExit):
        text += f"exception {type(result.exception).__name__}: {result.exception}\n"
    out.with_name(out.name + ".status").write_text(text)
    if result.stdout and not out.exists():
        out.write_text(result.stdout)


def _reports(runner: CliRunner, path: Path, formats, stem: Path) -> str:
    """`rooflint report` of one input in each format, to STEM.FORMAT; the input's name as given."""
    name = os.path.relpath(path, ROOT)
    for fmt in formats:
        out = stem.parent / f"{stem.name}.{fmt}"
        run(runner, ["report", name, "-q", "-f", fmt, "-o", str(out)], out)
    return name


def main_(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--folders", action="store_true", help="the folder cases only")
    parser.add_argument("--only", default="", help="the inputs whose path holds this word")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    args.out = args.out.resolve()
    runner = CliRunner()
    os.environ["COLUMNS"] = "100"
    os.chdir(ROOT)  # inputs named relative to the checkout: messages do not depend on where it is
    for path in [] if args.folders else inputs(args.quick):
        if args.only not in str(path):
            continue
        name = _reports(runner, path, REPORT_FORMATS, args.out / label(path))
        out = args.out / f"{label(path)}.kernels.csv"
        run(runner, ["report", name, "-q", "--per", "kernel", "-o", str(out)], out)
    for path in folders(args.quick):
        if args.only not in str(path):
            continue
        name = _reports(runner, path, FOLDER_FORMATS, args.out / f"folder__{label(path)}")
        out = args.out / f"folder__{label(path)}.gate"
        gate = ["--fail-if-above-roof", "--fail-under", "50%"]
        run(runner, ["report", name, "-q", "-f", "table", *gate, "-o", str(out)], out)
    for base, head in [] if args.folders else DIFF_PAIRS:
        if not all(args.only in x for x in (base, head)):
            continue
        for fmt in DIFF_FORMATS:
            out = args.out / f"diff__{label(ROOT / base)}__{label(ROOT / head)}.{fmt}"
            run(runner, ["diff", base, head, "-f", fmt], out)
    print(f"{len(list(args.out.iterdir()))} files in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main_(sys.argv[1:]))
