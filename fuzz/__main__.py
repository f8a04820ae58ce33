"""`python -m fuzz --n N --seed S [--ops pattern] [--report file]`: run N seeded random calls
in ember and torch, print counts per class and per op, list every difference (each with
its `--repro SEED:INDEX`); `python -m fuzz --repro SEED:INDEX` prints one case's code and
outcome. Exit status 1 when a crash, hang or unlisted difference was found."""

from __future__ import annotations

import argparse
import sys

from .run import format_report, reproduce, run


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=2000, help="number of calls")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ops", default=None,
                   help="comma-separated op names (substrings) to fuzz; default all")
    p.add_argument("--report", default=None, help="also write the report to this file")
    p.add_argument("--repro", default=None, metavar="SEED:INDEX",
                   help="print the reproducer of one case (with the same --ops)")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds per call")
    p.add_argument("--verbose", action="store_true", help="list known differences too")
    args = p.parse_args(argv)
    if args.repro:
        print(reproduce(args.repro, args.ops, args.timeout))
        return 0
    result = run(args.n, args.seed, args.ops, args.timeout)
    text = format_report(result, verbose=args.verbose)
    print(text)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text + "\n")
    return 1 if result.failures() else 0


if __name__ == "__main__":
    sys.exit(main())
