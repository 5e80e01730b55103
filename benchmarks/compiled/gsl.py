"""GSL rk8pd on the double pendulum: the compiled explicit high-order reference.

Builds ``gsl_rk8pd_dp.c`` (next to this file) against the system's GSL
(Debian: ``apt-get install libgsl-dev``) into a temporary directory and runs
it.  Nothing of GSL is vendored; without GSL ``available()`` is False and the
benchmark reports the comparison as skipped.
"""
import os
import shutil
import subprocess
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "gsl_rk8pd_dp.c")


def build(workdir=None):
    """Compile the program; returns its path, or None if GSL/compiler are missing."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    cc = cc.split()[0]
    if shutil.which(cc) is None:
        return None
    workdir = workdir or tempfile.mkdtemp(prefix="symplectic-gsl-")
    exe = os.path.join(workdir, "gsl_rk8pd_dp")
    cmd = [cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-o", exe, SOURCE,
           "-lgsl", "-lgslcblas", "-lm"]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except (subprocess.CalledProcessError, OSError):
        return None
    return exe


def run(exe, T, tol, repeats=3):
    """One (T, tol) point: dict with steps, seconds (min over repeats), e_H, final state."""
    out = subprocess.run([exe, repr(float(T)), repr(float(tol)), str(int(repeats))],
                         check=True, capture_output=True, text=True).stdout.strip()
    f = out.split(",")
    return dict(T=float(f[0]), tol=float(f[1]), steps=int(f[2]), seconds=float(f[3]),
                e_H=float(f[4]), y_final=[float(x) for x in f[5:9]])
