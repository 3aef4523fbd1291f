#!/usr/bin/env python3
"""Peer benchmarks: harbor against NumPy, JAX and a plain C loop on the same members.

For each config: `harbor export-members` writes the members, stage inputs and step
operators; `harbor simulate --backend cpu` gives the final states every peer must reproduce
(max relative difference ≤ 1e-9, else the peer's cell says so and the run exits 1);
`harbor bench --config` (where the binary has it) gives harbor's own rates; then the peers
run on the export. Prints a markdown table of member-steps per second (stepping only) and
the ratio to harbor cpu, the agreement of every peer, and this machine's f64 FMA peak.

    python3 benches/peers/run_peers.py                 # all three configs, full size
    python3 benches/peers/run_peers.py --quick         # 1024 members each: a smoke run
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_CONFIGS = [
    os.path.join(HERE, "configs", name)
    for name in ("oscillator_n2.toml", "chain_n8.toml", "chain_n32.toml")
]
QUICK_MEMBERS = 1024
TOLERANCE = 1e-9
C_FLAGS = ["-O3", "-march=native", "-fopenmp"]


def log(message):
    print(message, file=sys.stderr, flush=True)


def run(command, **kwargs):
    """Runs `command`, returning the CompletedProcess (text, captured)."""
    log("$ " + " ".join(command))
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def last_json(stdout):
    """The last line of `stdout` that parses as a JSON object, or None."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def compile_c(source, output):
    """Compiles `source` with cc (or $CC); returns None on success, else why not."""
    compiler = os.environ.get("CC", "cc")
    if shutil.which(compiler) is None:
        return f"not installed (no C compiler `{compiler}`)"
    done = run([compiler, *C_FLAGS, "-o", output, source, "-lm"])
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["?"])[0]
        return f"not installed ({compiler} {' '.join(C_FLAGS)} failed: {first})"
    return None


def jax_missing():
    """None when JAX imports, else why not."""
    done = subprocess.run(
        [sys.executable, "-c", "import jax"], capture_output=True, text=True
    )
    if done.returncode == 0:
        return None
    return "not installed (`pip install jax`)"


def machine():
    """CPU model and logical cores, as one line."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        flags = " with AVX-512" if "avx512f" in text else (" with AVX2" if "avx2" in text else "")
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical cores{flags}"


def idle_percent(seconds=2.0):
    """How idle all cores were over the next `seconds` (Linux /proc/stat), or None."""

    def sample():
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:8]]
        return sum(values), values[3]

    try:
        total, idle = sample()
        time.sleep(seconds)
        total2, idle2 = sample()
    except (OSError, ValueError, IndexError):
        return None
    return 100.0 * (idle2 - idle) / max(total2 - total, 1)


def fma_peak(binary):
    """fma_peak's JSON result, or None."""
    done = run([binary])
    return last_json(done.stdout)


class Harbor:
    """The harbor binary and the commands the benchmark runs."""

    def __init__(self, path):
        self.path = path

    def export(self, config, out, overrides):
        done = run([self.path, "export-members", config, "--out", out, *overrides])
        if done.returncode != 0:
            sys.exit(f"harbor export-members {config} failed:\n{done.stderr}")
        with open(os.path.join(out, "scheme.json")) as f:
            return json.load(f)

    def simulate(self, config, out, overrides, backend="cpu", precision=None):
        """The rate harbor simulate prints (member-steps/s), or an error string."""
        command = [self.path, "simulate", config, "--out", out, "--backend", backend]
        if precision:
            command += ["--precision", precision]
        done = run(command + overrides)
        if done.returncode != 0:
            return None, (done.stderr.strip().splitlines() or ["failed"])[-1]
        rate = re.search(r"^backend .*: [0-9.]+ s, ([0-9.eE+-]+) member-steps/s", done.stdout, re.M)
        return (float(rate.group(1)) if rate else None), None

    def bench(self, config, json_path, overrides):
        """harbor bench --config rows, or None when the binary has no --config."""
        command = [self.path, "bench", "--config", config, "--json", json_path]
        done = run(command + overrides)
        if done.returncode != 0 and overrides and "--set" in done.stderr:
            done = run(command)
        if done.returncode != 0:
            if "--config" in done.stderr:
                return None, "harbor bench has no --config"
            return None, "harbor bench failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
        with open(json_path) as f:
            rows = json.load(f)
        return rows, None

    def hardware_adapters(self):
        """Names of GPU adapters that are not software rasterisers."""
        done = run([self.path, "devices", "--json"])
        if done.returncode != 0:
            return []
        try:
            adapters = json.loads(done.stdout)
        except json.JSONDecodeError:
            return []
        return [a["name"] for a in adapters if not a.get("software", False)]


def harbor_rows(harbor, config, work, overrides, simulate_rate, notes):
    """{implementation: cell} for harbor on one config; cells are dicts with `rate`, or
    `text` when there is no figure. `simulate_rate()` gives the rate `harbor simulate
    --backend cpu` prints, the fallback when the binary has no `bench --config`."""
    cells = {}
    # What the peers compute: the final state only. A second pass records everything
    # (energy balance, outputs, trajectory at the record points) on the CPU engine.
    final_state = ["--set", "output.energy=false", "--set", "output.outputs=false",
                   "--set", "output.trajectory=false"]
    rows, why = harbor.bench(config, os.path.join(work, "bench.json"), overrides + final_state)
    if rows is not None:
        for row in rows:
            for m in row.get("measurements", []):
                backend, precision = m.get("backend"), m.get("precision", "f64")
                name = f"harbor {backend}"
                if backend == "gpu":
                    name = f"harbor gpu {precision}"
                    notes.add(f"harbor gpu: {m.get('device', '?')}")
                rate = m.get("member_steps_per_second")
                cells[name] = {"rate": rate, "result": m} if rate else {"text": "—"}
            for skipped in row.get("skipped", []):
                notes.add(f"harbor skipped {skipped}")
        full, _ = harbor.bench(
            config, os.path.join(work, "bench_all.json"), overrides + ["--no-reference", "--no-gpu"]
        )
        for row in full or []:
            for m in row.get("measurements", []):
                if m.get("backend") == "cpu":
                    cells["harbor cpu, energy balance"] = {
                        "rate": m["member_steps_per_second"], "result": m}
        return cells
    notes.add(
        f"{why}: harbor's rows are the rate `harbor simulate` prints "
        "(`backend … : X s, R member-steps/s`, which includes its setup and the writing of "
        "its results), not stepping alone"
    )
    rate = simulate_rate()
    cells["harbor cpu"] = {"rate": rate} if rate else {"text": "no rate printed"}
    cells["harbor reference"] = {"text": "needs harbor bench --config"}
    adapters = harbor.hardware_adapters()
    for precision in ("f32", "f64"):
        name = f"harbor gpu {precision}"
        if not adapters:
            cells[name] = {"text": "no hardware GPU adapter"}
            continue
        notes.add("harbor gpu: " + ", ".join(adapters))
        rate, error = harbor.simulate(
            config, os.path.join(work, f"sim_gpu_{precision}"), overrides, "gpu", precision
        )
        cells[name] = {"rate": rate} if rate else {"text": error}
    return cells


def peer(command):
    """Runs one peer; its JSON result, or a cell saying why there is none."""
    done = run(command)
    result = last_json(done.stdout)
    if result is None:
        first = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"text": f"failed: {first}"}
    cell = {"rate": result["member_steps_per_second"], "result": result}
    if not result.get("agrees", False):
        cell["disagrees"] = True
    return cell


def better(kept, cell):
    """The cell with the higher rate (a disagreement anywhere is kept)."""
    if kept is None:
        return cell
    best = cell if (cell.get("rate") or 0) > (kept.get("rate") or 0) else kept
    if kept.get("disagrees") or cell.get("disagrees"):
        best = dict(best, disagrees=True)
    return best


def fmt_rate(rate):
    return f"{rate:.3g}".replace("e+0", "e").replace("e+", "e")


def fmt_ratio(ratio):
    """Two significant digits, no exponent: 0.52×, 6.8×, 67×, 1200×."""
    return f"{float(f'{ratio:.2g}'):g}×"


def table(configs, rows, order):
    """The markdown ratio table: rows = implementations, columns = configs."""
    head = ["implementation"] + [
        f"n = {c['states']} ({c['members']} members)" for c in configs
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in order:
        cells = []
        for c in configs:
            cell = rows.get(name, {}).get(c["name"], {"text": "—"})
            base = rows.get("harbor cpu", {}).get(c["name"], {}).get("rate")
            if "rate" in cell and cell["rate"]:
                text = fmt_rate(cell["rate"])
                if base:
                    text += f" ({fmt_ratio(cell['rate'] / base)})"
                if cell.get("disagrees"):
                    text += " DISAGREES"
                cells.append(text)
            else:
                cells.append(cell.get("text", "—"))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def agreement(configs, rows, peers):
    head = ["peer"] + [f"n = {c['states']}" for c in configs]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in peers:
        cells = []
        for c in configs:
            result = rows.get(name, {}).get(c["name"], {}).get("result")
            if result is None:
                cells.append("—")
                continue
            text = f"{result['max_relative_difference']:.1e}"
            if "operator_max_abs_difference" in result:
                text += f" (Δ: {result['operator_max_abs_difference']:.1e})"
            cells.append(text)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 2)[2],
    )
    parser.add_argument(
        "--harbor",
        default=os.path.join(ROOT, "target", "release", "harbor"),
        help="the harbor binary (default: target/release/harbor; cargo build --release)",
    )
    parser.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS, help="config files")
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_MEMBERS} members per config (smoke run)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="measure every cell this many times, interleaved, and keep the best (default 3): "
        "a cell caught while other work takes the cores is measured again later",
    )
    parser.add_argument("--work", help="keep the exports and results here (default: a temporary directory)")
    parser.add_argument("--json", help="also write every measurement as JSON to this file")
    args = parser.parse_args()
    if args.rounds < 1:
        sys.exit(f"--rounds must be ≥ 1, got {args.rounds}")
    if not os.access(args.harbor, os.X_OK):
        sys.exit(f"--harbor {args.harbor}: no executable there; build it with cargo build --release")
    harbor = Harbor(os.path.abspath(args.harbor))

    work_root = args.work or tempfile.mkdtemp(prefix="harbor-peers-")
    os.makedirs(work_root, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    idle = idle_percent()
    if idle is not None and idle < 90:
        log(f"warning: the cores were only {idle:.0f}% idle: other work shares the machine")
    try:
        c_loop = os.path.join(work_root, "c_loop")
        c_missing = compile_c(os.path.join(HERE, "c_loop.c"), c_loop)
        fma = os.path.join(work_root, "fma_peak")
        fma_missing = compile_c(os.path.join(HERE, "fma_peak.c"), fma)
        # The peak before and after the peers: the better of each figure is kept, and the
        # two tell whether other work took cores meanwhile.
        fma_runs = [] if fma_missing else [fma_peak(fma)]
        jax_why = jax_missing()

        rows, configs, notes = {}, [], set()
        overrides = ["--set", f"ensemble.members={QUICK_MEMBERS}"] if args.quick else []
        prepared = []
        for config in args.configs:
            config = os.path.abspath(config)
            name = os.path.splitext(os.path.basename(config))[0]
            work = os.path.join(work_root, name)
            os.makedirs(work, exist_ok=True)
            export, sim = os.path.join(work, "export"), os.path.join(work, "sim")
            scheme = harbor.export(config, export, overrides)
            configs.append({"name": name, "states": scheme["states"], "members": scheme["members"]})
            simulate_rate, error = harbor.simulate(config, sim, overrides)
            if error:
                sys.exit(f"harbor simulate {config} failed: {error}")
            final = os.path.join(sim, "final_state.npy")
            prepared.append((config, name, work, export, final, simulate_rate))
        python = [sys.executable]
        for round_index in range(args.rounds):
            for config, name, work, export, final, first_rate in prepared:

                def simulate_rate():
                    if round_index == 0:  # the run that gave the final states
                        return first_rate
                    out = os.path.join(work, "sim_rate")
                    return harbor.simulate(config, out, overrides)[0]

                cells = dict(harbor_rows(harbor, config, work, overrides, simulate_rate, notes))
                cells["NumPy"] = peer(
                    python + [os.path.join(HERE, "numpy_peer.py"), export, "--check", final]
                )
                cells["JAX"] = (
                    {"text": jax_why}
                    if jax_why
                    else peer(python + [os.path.join(HERE, "jax_peer.py"), export, "--check", final])
                )
                cells["C loop"] = {"text": c_missing} if c_missing else peer([c_loop, export, final])
                for impl, cell in cells.items():
                    kept = rows.setdefault(impl, {}).get(name)
                    rows[impl][name] = better(kept, cell)
            if not fma_missing and round_index + 1 < args.rounds:
                fma_runs.append(fma_peak(fma))

        if not fma_missing:
            fma_runs.append(fma_peak(fma))
        fma_runs = [r for r in fma_runs if r]
        fma_result = None
        if fma_runs:
            fma_result = dict(fma_runs[0])
            for key in ("gflops_per_core", "gflops_total"):
                fma_result[key] = max(r[key] for r in fma_runs)
    finally:
        if not args.work:
            shutil.rmtree(work_root, ignore_errors=True)

    fixed = ["harbor cpu", "harbor reference"]
    harbor_names = [k for k in fixed if k in rows] + sorted(
        k for k in rows if k.startswith("harbor") and k not in fixed
    )
    order = harbor_names + ["NumPy", "JAX", "C loop"]
    versions = []
    for peer_name in ("NumPy", "JAX"):
        for cell in rows.get(peer_name, {}).values():
            if "result" in cell:
                versions.append(f"{peer_name} {cell['result']['version']}")
                break
    print(f"# Peer benchmarks, {started:%Y-%m-%d %H:%M} UTC")
    print()
    idle_text = f", {idle:.0f}% idle at the start" if idle is not None else ""
    print(f"machine: {machine()}{idle_text}")
    print(f"peers: {', '.join(versions) or 'none'}; C loop: {os.environ.get('CC', 'cc')} {' '.join(C_FLAGS)}")
    print(f"command: python3 benches/peers/run_peers.py{' --quick' if args.quick else ''}")
    print()
    print("Member-steps per second, stepping only (ratio to harbor cpu):")
    print()
    print(table(configs, rows, order))
    print()
    print("Agreement with harbor's final states (max |x − x_harbor| / max |x_harbor|; "
          "Δ: max abs difference of the peer's own step operator from harbor's):")
    print()
    print(agreement(configs, rows, ["NumPy", "JAX", "C loop"]))
    print()
    if fma_result:
        print(
            f"f64 FMA peak (fma_peak.c, {fma_result['lanes']} lanes × {fma_result['chains']} chains): "
            f"{fma_result['gflops_per_core']:.1f} GFLOP/s on one core, "
            f"{fma_result['gflops_total']:.1f} GFLOP/s on {fma_result['threads']} threads"
        )
        parts = []
        for c in configs:
            result = rows.get("C loop", {}).get(c["name"], {}).get("result")
            if result:
                gflops = result["member_steps_per_second"] * result["flops_per_member_step"] / 1e9
                parts.append(
                    f"n = {c['states']}: {gflops:.1f} GFLOP/s "
                    f"({100 * gflops / fma_result['gflops_total']:.0f}% of the peak)"
                )
        if parts:
            print("C loop (2 n p flops per member-step): " + "; ".join(parts))
        parts = []
        for impl in ("harbor cpu", "harbor cpu, energy balance"):
            for c in configs:
                result = rows.get(impl, {}).get(c["name"], {}).get("result")
                if result and "flops_per_second" in result:
                    gflops = result["flops_per_second"] / 1e9
                    parts.append(
                        f"{impl} n = {c['states']}: {gflops:.1f} GFLOP/s "
                        f"({100 * gflops / fma_result['gflops_total']:.0f}%)"
                    )
        if parts:
            print("harbor (flops counted from its step): " + "; ".join(parts))
    else:
        print(f"f64 FMA peak: {fma_missing}")
    shared = idle is not None and idle < 90
    for r in fma_runs:
        if r["threads"] > 1 and r["gflops_total"] < 0.9 * r["threads"] * r["gflops_per_core"]:
            shared = True
    if shared:
        notes.add(
            "other work shared the cores during this run (idle < 90% at the start, or an "
            "FMA peak on all threads below 90% of threads × one core): the rates are lower bounds"
        )
    for note in sorted(notes):
        print(f"\nnote: {note}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"date": started.isoformat(), "machine": machine(), "idle_percent": idle, "fma_runs": fma_runs, "configs": configs,
                 "rows": rows, "fma_peak": fma_result, "notes": sorted(notes)},
                f, indent=2,
            )
    disagreeing = [
        f"{impl} on {name}"
        for impl, cells in rows.items()
        for name, cell in cells.items()
        if cell.get("disagrees")
    ]
    if disagreeing:
        log(f"final states differ from harbor's by more than {TOLERANCE:g}: {', '.join(disagreeing)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
