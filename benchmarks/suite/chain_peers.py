"""The chain's explicit baselines as methods of the peer searches (suite/peers.py), shared by section 10
(suite/peers_chain.py) and the standalone tool benchmarks/chain_baselines.py.

The systems: ``pendulum_chain(n)`` with the masses and lengths of ``models.chain_params(n, kind)``
("chain": unit masses and lengths; "arm": tapered from base to tip), from rest at
``models.chain_q0(n)``.  The methods:

- ``GSLChain``: GSL rk8pd on a compiled right-hand side (benchmarks/compiled/gsl_rk8pd_chain.c: M(q)
  assembled and solved by LU; gsl_rk8pd_chain_aba.c: the O(n) articulated-body recursion), run through
  benchmarks/compiled/gsl.py; a measurement also records GSL's accepted and rejected steps (of the
  untimed pass that measures e_H);
- ``MuJoCoRK4``: MuJoCo's fixed-step RK4 on a model of benchmarks/compiled/mujoco_chain.py (the chain,
  or a URDF arm);
- ``ours_chain``, ``gsl_chain``, ``mujoco_chain``: these methods built on the chain of a kind and n.

The GSL and MuJoCo helper modules (benchmarks/compiled/gsl.py, mujoco_chain.py) are passed in: the
suite loads them by path, benchmarks/chain_baselines.py imports them.
"""
import math
import time

import numpy as np

import models as M

from .peer_methods import Ours
from .peers import Method

NAN = float("nan")


def chain_energy(m, l):
    """H(q, p) of chain states (rows) for our runs (blocks of 256 states: the same values, less memory)."""
    return lambda q, p: M.chain_energy_qp(q, p, m, l, block=256)


class GSLChain(Method):
    """GSL rk8pd on the chain (compiled C): ``exe`` one of the chain programs of ``gslmod``."""

    def __init__(self, gslmod, name, label, exe, m, l, q0, grid):
        super().__init__(name, label, "GSL (compiled C)", grid)
        self.gsl, self.exe, self.args = gslmod, exe, (m, l, q0, np.zeros(len(m)))

    def measure(self, tol, T):
        try:
            r = self.gsl.run_chain(self.exe, T, tol, *self.args, repeats=1, counts=True)
        except Exception as exc:                 # noqa: BLE001 - a failed run is a data point
            return dict(status=f"failed: {exc}", e_H=float("inf"), wall=NAN)
        return dict(status="ok", e_H=r["e_H"], steps=r["steps"], wall=r["seconds"], accepted=r["accepted"],
                    rejected=r["rejected"])

    def timer(self, tol, T):
        return lambda: (self.gsl.run_chain(self.exe, T, tol, *self.args, repeats=1, track=False)["seconds"], NAN)


class MuJoCoRK4(Method):
    """MuJoCo's fixed-step RK4 on ``sim`` (a mujoco_chain.Sim); the grid: step sizes, largest first."""
    kind = "h"

    def __init__(self, sim, grid, name="mujoco-rk4", label="MuJoCo RK4"):
        super().__init__(name, label, "MuJoCo (compiled C)", grid)
        self.sim = sim

    def measure(self, h, T):
        try:
            e, N, wall = self.sim.measure(h, T)
        except Exception as exc:                 # noqa: BLE001
            return dict(status=f"failed: {exc}", e_H=float("inf"), wall=NAN)
        if not math.isfinite(e):
            return dict(status="ok", e_H=float("inf"), steps=N, wall=wall)
        # the projection of run times uses the timed loop (mj_step with nstep), not the recording loop
        return dict(status="ok", e_H=e, steps=N, wall=self.sim.run(h, T))

    def timer(self, h, T):
        def one():
            c0 = time.process_time()
            w = self.sim.run(h, T)
            return w, time.process_time() - c0
        return one


def ours_chain(kind, n, method, grid, chunk, label=None):
    """symplectic's ``method`` (newton="auto") on the chain of ``kind`` with n links."""
    m, l = M.chain_params(n, kind)
    return Ours(M.chain_system(n, kind), method, M.chain_q0(n), np.zeros(n), chain_energy(m, l), grid, chunk,
                newton="auto", label=label)


def gsl_chain(gslmod, exe, name, label, kind, n, grid):
    """GSL rk8pd with the chain program ``exe`` (LU or ABA) on the chain of ``kind`` with n links."""
    m, l = M.chain_params(n, kind)
    return GSLChain(gslmod, name, label, exe, m, l, M.chain_q0(n), grid)


def mujoco_chain(mjc, mj, kind, n, grid, name="mujoco-rk4", label="MuJoCo RK4"):
    """MuJoCo's RK4 on the chain of ``kind`` with n links; ``mjc`` the helper module mujoco_chain.py,
    ``mj`` the mujoco module."""
    m, l = M.chain_params(n, kind)
    sim = mjc.chain_sim(mj, m, l, M.chain_q0(n), np.zeros(n), lambda q, v: M.chain_energy_qv(q, v, m, l))
    return MuJoCoRK4(sim, grid, name, label)
