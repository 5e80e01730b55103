"""GSL rk8pd: the compiled explicit high-order reference.

- ``gsl_rk8pd_dp.c``: the double pendulum, Hamilton's equations in closed form;
- ``gsl_rk8pd_chain.c``: the n-link chain with any masses and lengths, the Euler-Lagrange
  equations solved for the accelerations by LU at every right-hand-side call;
- ``gsl_rk8pd_chain_aba.c``: the same chain, the accelerations by an O(n) articulated-body
  recursion (benchmarks/chain_baselines.py).

The two chain programs share their command line and output (``gsl_chain.h``), all three the clock
and GSL's integration loop (``gsl_bench.h``).  The chain programs also print GSL's accepted and
rejected step counts when asked
(``run_chain(..., counts=True)``) and evaluate one right-hand side (``rhs_chain``).

``build`` compiles one of them (next to this file) against the system's GSL (Debian:
``apt-get install libgsl-dev``) into a temporary directory.  Nothing of GSL is vendored; without
GSL or a compiler ``build`` returns None and the benchmark reports the comparison as skipped.
"""
import os
import shutil
import subprocess
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "gsl_rk8pd_dp.c")
CHAIN_SOURCE = os.path.join(HERE, "gsl_rk8pd_chain.c")
CHAIN_ABA_SOURCE = os.path.join(HERE, "gsl_rk8pd_chain_aba.c")


def build(workdir=None, source=SOURCE):
    """Compile the program; returns its path, or None if GSL/compiler are missing."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    cc = cc.split()[0]
    if shutil.which(cc) is None:
        return None
    workdir = workdir or tempfile.mkdtemp(prefix="symplectic-gsl-")
    exe = os.path.join(workdir, os.path.splitext(os.path.basename(source))[0])
    cmd = [cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-o", exe, source,
           "-lgsl", "-lgslcblas", "-lm"]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except (subprocess.CalledProcessError, OSError):
        return None
    return exe


def _call(exe, T, tol, repeats, track, stdin=None, counts=False):
    args = [exe, repr(float(T)), repr(float(tol)), str(int(repeats))] + ([] if track else ["notrack"])
    out = subprocess.run(args + (["counts"] if counts else []),
                         input=stdin, check=True, capture_output=True, text=True).stdout.strip()
    f = out.split(",")
    extra = {}
    if counts:                    # the last two fields: accepted and rejected steps
        extra = dict(accepted=int(f[-2]), rejected=int(f[-1]))
        f = f[:-2]
    return dict(T=float(f[0]), tol=float(f[1]), steps=int(f[2]), seconds=float(f[3]),
                e_H=float(f[4]), y_final=[float(x) for x in f[5:]], **extra)


def run(exe, T, tol, repeats=3, track=True):
    """One (T, tol) point of the double pendulum: dict with steps, seconds (min over repeats),
    e_H (nan with track=False: no untimed pass measuring it), final state."""
    return _call(exe, T, tol, repeats, track)


def _chain_words(m, l, q0, qd0, g):
    words = [str(len(m)), repr(float(g))] + [repr(float(x)) for x in (*m, *l, *q0, *qd0)]
    return " ".join(words) + "\n"


def run_chain(exe, T, tol, m, l, q0, qd0, g=9.81, repeats=1, track=True, counts=False):
    """One (T, tol) point of the chain with masses m, lengths l from (q0, qd0); as ``run``.
    counts=True adds ``accepted`` and ``rejected``: GSL's step counts of an untimed run."""
    return _call(exe, T, tol, repeats, track, stdin=_chain_words(m, l, q0, qd0, g), counts=counts)


def rhs_chain(exe, m, l, q, qd, g=9.81):
    """The program's right-hand side at (q, qd): the list (qd, qdd) of 2n floats."""
    out = subprocess.run([exe, "rhs"], input=_chain_words(m, l, q, qd, g), check=True, capture_output=True,
                         text=True).stdout.strip()
    return [float(x) for x in out.split(",")]
