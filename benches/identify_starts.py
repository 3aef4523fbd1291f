#!/usr/bin/env python3
"""Multi-start against single start on the same budget of cost+gradient evaluations.

For each Monte-Carlo seed, four runs of `harbor identify` on one example, each capped at the
same `optimizer.evaluation_budget` E (Monte-Carlo evaluations included):

    multi    the example's Monte-Carlo initialisation (K candidates, best M kept) and
             conjugate gradients from the M starts with successive halving (the costlier
             half stops every `optimizer.prune_every` iterations, 10 by default);
    no-halve the same, all M starts running to the end (prune_every = 0);
    mc-best  the same K candidates, only the best one kept (keep = 1);
    single   one random candidate (candidates = keep = 1), no selection.

The iteration cap and the gradient and stall stops are lifted for every run, so each spends
all of E (a start stops early only when no step along −grad decreases the cost). Printed: the
median and the spread over seeds of the final cost, the relative max-norm output error
on the training data and, when the example has a test input, the cross-validation errors.

    python3 benches/identify_starts.py examples/identify_msd_chain.toml --budget 9300 \\
        --seeds 1-8 [--set model.order=20] [--harbor target/release/harbor]
"""

import argparse
import statistics
import tempfile
from pathlib import Path

from identify_runs import inclusive_range, run_identify

VARIANTS = {
    "multi": [],
    "no-halve": ["optimizer.prune_every=0"],
    "mc-best": ["monte_carlo.keep=1"],
    "single": ["monte_carlo.candidates=1", "monte_carlo.keep=1"],
}


def summary(values):
    values = sorted(values)
    return f"{statistics.median(values):.3e} [{values[0]:.2e}, {values[-1]:.2e}]"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example")
    parser.add_argument("--budget", type=int, required=True)
    parser.add_argument("--seeds", default="1-8")
    parser.add_argument("--set", action="append", default=[], dest="overrides")
    parser.add_argument("--harbor", default="target/release/harbor")
    args = parser.parse_args()

    rows = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as work:
        for seed in inclusive_range(args.seeds):
            for name, extra in VARIANTS.items():
                overrides = args.overrides + extra + [
                    f"monte_carlo.seed={seed}",
                    f"optimizer.evaluation_budget={args.budget}",
                    "optimizer.max_iterations=1000000",
                    "optimizer.gradient_tolerance=0",
                    "optimizer.relative_decrease=0",
                ]
                result = run_identify(args.harbor, args.example, overrides, Path(work) / name)
                rows[name].append(result)
                cv = result.get("cross_validation") or {}
                print(
                    f"seed {seed:3} {name:8} cost {result['cost_final']:.3e} "
                    f"rel {result['relative_max_error']:.3e} "
                    f"cv {cv.get('l2', float('nan')):.3e} / {cv.get('max', float('nan')):.3e} "
                    f"evals {result['gradient_evaluations']}",
                    flush=True,
                )

    print(f"\nbudget {args.budget} evaluations; median [min, max] over seeds {args.seeds}")
    print("| start | final cost | relative max error | CV L2 | CV max |")
    print("|---|---|---|---|---|")
    for name, results in rows.items():
        cvs = [r.get("cross_validation") for r in results]
        cv_l2 = summary([c["l2"] for c in cvs]) if all(cvs) else "–"
        cv_max = summary([c["max"] for c in cvs]) if all(cvs) else "–"
        print(
            f"| {name} | {summary([r['cost_final'] for r in results])} "
            f"| {summary([r['relative_max_error'] for r in results])} | {cv_l2} | {cv_max} |"
        )


if __name__ == "__main__":
    main()
