"""Timing helpers, formatting, CSV output and the machine description shared by every section.

Timing: wall-clock time (time.perf_counter) of the call alone, median of repeats that are
interleaved round-robin between the configurations being compared, so that slow phases of a
noisy shared machine hit all of them.  CPU time (time.process_time) is recorded next to it.
"""
import csv
import gc
import importlib.util
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

SUITE = os.path.dirname(os.path.abspath(__file__))
HERE = os.path.dirname(SUITE)          # benchmarks/
REPO = os.path.dirname(HERE)
if HERE not in sys.path:                # benchmarks/models.py is imported as `models`
    sys.path.insert(0, HERE)


def say(*args):
    print(*args, flush=True)


def clock(fn):
    """Run fn(); return (its result, wall seconds, cpu seconds)."""
    gc.collect()
    c0 = time.process_time()
    w0 = time.perf_counter()
    out = fn()
    w = time.perf_counter() - w0
    return out, w, time.process_time() - c0


def timer(fn):
    """fn -> a function returning (wall, cpu) of one call of fn()."""
    return lambda: clock(fn)[1:]


def cpu_busy():
    """Seconds of CPU time used by everything on the machine so far (all CPUs, /proc/stat),
    or None where /proc/stat is missing."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    steal = v[7] if len(v) > 7 else 0
    return (sum(v[:8]) - idle - steal) / os.sysconf("SC_CLK_TCK")


def foreign_load(fn):
    """Run fn(); return (result, wall, own cpu, CPU-seconds used by other processes meanwhile)."""
    b0, c0, w0 = cpu_busy(), time.process_time(), time.perf_counter()
    out = fn()
    w, c, b1 = time.perf_counter() - w0, time.process_time() - c0, cpu_busy()
    other = float("nan") if b0 is None else max(0.0, (b1 - b0) - c)
    return out, w, c, other


def med(xs):
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    return statistics.median(xs) if xs else float("nan")


def interleave(configs, rounds, budget=None, seeded=None, min_rounds=0):
    """Round-robin timing.  configs: {key: fn() -> (wall, cpu)}.

    Every config runs in round 0 (unless seeded samples exceed the budget) and in the
    first ``min_rounds`` rounds; in later rounds a config is skipped once its samples
    add up to more than ``budget`` seconds (so the samples of an unseeded config are
    those of rounds 0, 1, ... in order, up to where it stopped).  The
    order of the configs alternates between rounds.  Returns {key: [(wall, cpu), ...]}.
    """
    samples = {k: list((seeded or {}).get(k, [])) for k in configs}
    keys = list(configs)
    for r in range(rounds):
        order = keys if r % 2 == 0 else keys[::-1]
        for k in order:
            if (r >= min_rounds and samples[k] and budget is not None
                    and sum(s[0] for s in samples[k]) > budget):
                continue
            samples[k].append(configs[k]())
    return samples


def summarize(samples):
    w = [s[0] for s in samples]
    c = [s[1] for s in samples]
    return dict(wall=med(w), wall_min=min(w), wall_max=max(w), cpu=med(c), samples=len(w))


def timed_rounds(fns, rounds):
    """{key: summarize()} of the functions ``fns`` {key: fn()} timed in ``rounds`` interleaved rounds,
    and {key: [wall of round r / wall of the first key in round r]} (the paired ratios)."""
    samples = interleave({k: timer(fn) for k, fn in fns.items()}, rounds)
    first = samples[next(iter(fns))]
    paired = {k: [a[0] / b[0] for a, b in zip(v, first)] for k, v in samples.items()}
    return {k: summarize(v) for k, v in samples.items()}, paired


def per_unit(t, k, scale=1e6):
    """Median, min, max and cpu of a summarize() dict divided by k units (µs per unit by default)."""
    return dict(us=t["wall"] / k * scale, us_min=t["wall_min"] / k * scale, us_max=t["wall_max"] / k * scale,
                cpu_us=t["cpu"] / k * scale)


def write_csv(path, rows, columns=None):
    if not rows:
        return
    columns = columns or list(rows[0])
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: _fmt_csv(r.get(k)) for k in columns})


def _fmt_csv(v):
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return repr(v)
    return "" if v is None else v


def fmt_t(seconds):
    """Human-readable time."""
    if seconds is None or not math.isfinite(seconds):
        return "–"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def fmt_e(x):
    return "–" if x is None or not math.isfinite(x) else f"{x:.2e}"


def fmt_x(x, digits=3):
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}g}×"


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def load_module(name, path):
    """Import a helper module by file path (benchmarks/compiled/*.py); None if it is missing."""
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True).stdout.strip()


def _lscpu():
    info = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return info
    for line in out.splitlines():
        k, _, v = line.partition(":")
        info.setdefault(k.strip(), v.strip())
    return info


def _versions(extra=("scipy", "sksundae", "matplotlib")):
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    for mod in extra:
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:                      # noqa: BLE001
            versions[mod] = "not installed"
    return versions


def machine_info(extra_versions=("scipy", "sksundae", "matplotlib")):
    from models import compiler
    info = _lscpu()
    cc = compiler()
    cc_version = ""
    if cc:
        cc_version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    try:
        commit = _git("rev-parse", "--short", "HEAD")
        commit += " (+ local changes)" if _git("status", "--porcelain", "--", "csrc", "symplectic") else ""
    except OSError:
        commit = "?"
    return dict(
        model=info.get("Model name", platform.processor() or "?"),
        cpus=info.get("CPU(s)", str(os.cpu_count())),
        threads_per_core=info.get("Thread(s) per core", "?"),
        mhz=info.get("CPU MHz", info.get("CPU max MHz", "?")),
        hypervisor=info.get("Hypervisor vendor", ""),
        platform=platform.platform(),
        compiler=cc_version,
        commit=commit,
        versions=_versions(extra_versions),
    )


class LoadMeter:
    """CPU time used by other processes on the machine between start and stop, in CPUs on average
    (/proc/stat minus this process and its children)."""

    def __init__(self):
        import resource
        self._resource = resource
        self.t0 = time.perf_counter()
        self.busy0, self.own0 = cpu_busy(), time.process_time()
        self.ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())

    def stop(self):
        elapsed = time.perf_counter() - self.t0
        ch1 = self._resource.getrusage(self._resource.RUSAGE_CHILDREN)
        own = (time.process_time() - self.own0) + (ch1.ru_utime + ch1.ru_stime
                                                   - self.ch0.ru_utime - self.ch0.ru_stime)
        foreign = (float("nan") if self.busy0 is None
                   else max(0.0, cpu_busy() - self.busy0 - own) / elapsed)
        return dict(elapsed=elapsed, foreign=foreign, load_before=self.load_before,
                    load_after=" ".join(f"{x:.2f}" for x in os.getloadavg()))
