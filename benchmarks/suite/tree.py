"""Section 26: the cost per step of a rigid-body tree (``symplectic.multibody``, the built-in C
"tree") against the same Lagrangian compiled from SymPy (``System.from_sympy``).

Two robots: arm6 (tests/data/urdf/arm6.urdf, a spatial 6-DOF arm with full inertia tensors on a
tilted base), whose SymPy Lagrangian is the tests' independent reference
(tests/support/urdf_reference.py: forward kinematics in SymPy from the URDF, M and V); and a
planar chain of 12 links (8 in a quick run) generated here as a URDF (revolute joints about y,
links of different lengths, masses, off-axis centres of mass and products of inertia), whose
SymPy Lagrangian is written here as M(q), V(q) from absolute angles (theta_i = q_1 + ... + q_i;
a compact form: SymPy still takes ~5 minutes to derive and compile it at n = 12, against ~10 s
for arm6).  Both SymPy systems are derived and
compiled to C in a fresh module cache: the build time is reported.  Each system then runs the same
start with simpson and lobatto5 at h = 1e-3 (a smooth run); per round the tree and the SymPy system
run once each, interleaved; the table gives the median over the rounds of the time per step, the
ratio tree / SymPy, Newton's iterations per step and the largest difference of a separate 400-step
run (q and p relative to their largest entries).
"""
import os
import sys
import tempfile
import time

import numpy as np
import sympy as sy

import symplectic as sp
from symplectic.multibody import from_urdf

from .common import REPO, md_table, timed_rounds

sys.path.insert(0, os.path.join(REPO, "tests"))
from support.urdf_reference import TreeReference  # noqa: E402

ARM6 = os.path.join(REPO, "tests", "data", "urdf", "arm6.urdf")
H = 1e-3
METHODS = ("simpson", "lobatto5")
# arm6 near its hanging equilibrium, moving (rad/s)
ARM6_Q0 = np.array([-0.6, 1.6, 0.0, -1.4, 0.7, 0.2])
ARM6_QDOT0 = np.array([0.4, -0.3, 0.5, -0.6, 0.8, -1.0])


# ---------------------------------------------------------------------- the planar chain
def chain_links(n):
    """(length, mass, com (x, z) in the link frame, Ixx, Iyy, Izz, Ixz) of the n links."""
    out = []
    for i in range(n):
        L = 0.3 + 0.05 * ((3 * i) % 5)
        m = 1.0 - 0.04 * i
        cx, cz = (0.015 if i % 2 == 0 else -0.012), -(0.45 + 0.02 * (i % 4)) * L
        Iyy = m * L * L / 12.0
        out.append((L, m, (cx, cz), 0.6 * Iyy, Iyy, 0.4 * Iyy, -0.1 * Iyy))
    return out


def chain_urdf(n):
    """A planar chain of n revolute joints about y hanging from a fixed world link (the x-z
    plane, gravity -z), as URDF text."""
    parts = [f'<?xml version="1.0"?>\n<robot name="planar_chain_{n}">\n  <link name="world"/>']
    parent, z0 = "world", 0.0
    for i, (L, m, (cx, cz), Ixx, Iyy, Izz, Ixz) in enumerate(chain_links(n)):
        parts.append(
            f'  <joint name="joint{i + 1}" type="revolute">\n'
            f'    <parent link="{parent}"/>\n    <child link="link{i + 1}"/>\n'
            f'    <origin xyz="0 0 {z0!r}" rpy="0 0 0"/>\n    <axis xyz="0 1 0"/>\n'
            f'  </joint>\n'
            f'  <link name="link{i + 1}">\n    <inertial>\n'
            f'      <origin xyz="{cx!r} 0 {cz!r}" rpy="0 0 0"/>\n      <mass value="{m!r}"/>\n'
            f'      <inertia ixx="{Ixx!r}" ixy="0" ixz="{Ixz!r}" iyy="{Iyy!r}" iyz="0" '
            f'izz="{Izz!r}"/>\n    </inertial>\n  </link>')
        parent, z0 = f"link{i + 1}", -L
    parts.append("</robot>\n")
    return "\n".join(parts)


def chain_lagrangian(n, g=9.81):
    """(M(q), V(q)) of chain_urdf(n) in SymPy, from absolute angles: a point (x, z) of link i is
    at o_i + R_y(theta_i) (x, 0, z), theta_i = q_1 + ... + q_i, with R_y(t) (x, z) =
    (x cos t + z sin t, -x sin t + z cos t); the angular velocity is theta_i' about y.  So
    M = sum_i m_i (Jx_i^T Jx_i + Jz_i^T Jz_i) + Iyy_i e_i e_i^T (Jx_i, Jz_i the rows d(x, z)/dq of
    the centre of mass, e_i = (1, ..., 1, 0, ...) with i ones) and V = sum_i m_i g z_i."""
    q = sy.symbols(f"q_0:{n}")
    qd = sy.symbols(f"qd_0:{n}")
    M, V = sy.zeros(n, n), sy.S.Zero
    ox, oz, theta = sy.S.Zero, sy.S.Zero, sy.S.Zero
    for i, (L, m, (cx, cz), _, Iyy, _, _) in enumerate(chain_links(n)):
        theta = theta + q[i]
        c, s = sy.cos(theta), sy.sin(theta)
        x = ox + sy.Float(cx) * c + sy.Float(cz) * s
        z = oz - sy.Float(cx) * s + sy.Float(cz) * c
        Jx = sy.Matrix([[sy.diff(x, qk) for qk in q]])
        Jz = sy.Matrix([[sy.diff(z, qk) for qk in q]])
        e = sy.Matrix([[1 if k <= i else 0 for k in range(n)]])
        M += sy.Float(m) * (Jx.T * Jx + Jz.T * Jz) + sy.Float(Iyy) * (e.T * e)
        V += sy.Float(m * g) * z
        ox, oz = ox - sy.Float(L) * s, oz - sy.Float(L) * c       # the next joint: (0, 0, -L)
    return (M, V), list(q), list(qd)


# ---------------------------------------------------------------------- the section
def agreement(a, b, q0, p0, method):
    ra = sp.integrate(a, q0, p0, H, 400, method=method)
    rb = sp.integrate(b, q0, p0, H, 400, method=method)
    return max(np.max(np.abs(ra.q - rb.q)) / np.max(np.abs(rb.q)),
               np.max(np.abs(ra.p - rb.p)) / np.max(np.abs(rb.p)))


def robots(n):
    """[(label, n, tree system, build() -> SymPy system, q0, qdot0)] for arm6 and the chain of n."""
    rng = np.random.default_rng(12)
    chain_q0 = rng.uniform(-0.4, 0.4, n)
    chain_qd0 = rng.uniform(-0.5, 0.5, n)

    def arm6_sympy():
        return TreeReference(ARM6).system()

    def chain_sympy():
        MV, q, _ = chain_lagrangian(n)
        return sp.System.from_sympy(MV, q, name=f"planar chain {n} (SymPy)")

    return [("arm6 (spatial, URDF)", 6, from_urdf(ARM6), arm6_sympy, ARM6_Q0, ARM6_QDOT0),
            (f"planar chain of {n} (URDF generated)", n, from_urdf(chain_urdf(n)), chain_sympy,
             chain_q0, chain_qd0)]


def run_section(cfg, ctx):
    steps, rounds = cfg["tree_steps"], cfg["tree_rounds"]
    old = os.environ.get("SYMPLECTIC_CACHE")
    cache = tempfile.mkdtemp(prefix="tree-sympy-cache-", dir=ctx.get("tmp"))
    os.environ["SYMPLECTIC_CACHE"] = cache          # a fresh cache: the build time is a build's
    rows, builds = [], []
    try:
        for label, n, tree, build, q0, qd0 in robots(cfg["tree_chain_n"]):
            t0 = time.perf_counter()
            ref = build()
            builds.append(f"{label} {time.perf_counter() - t0:.1f} s")
            p0 = tree.mass(q0) @ qd0
            for method in METHODS:
                paths = {"tree (C built-in)": tree, "SymPy -> C": ref}
                fns = {k: (lambda S=S: sp.integrate(S, q0, p0, H, steps, method=method))
                       for k, S in paths.items()}
                its = {k: float(fn().newton_iterations.mean()) for k, fn in fns.items()}  # warm-up
                t, paired = timed_rounds(fns, rounds)
                us = {k: 1e6 * t[k]["wall"] / steps for k in fns}
                ratio = np.median([1.0 / r for r in paired["SymPy -> C"]])
                diff = agreement(tree, ref, q0, p0, method)
                rows.append([label, n, method, f"{us['tree (C built-in)']:.1f}",
                             f"{us['SymPy -> C']:.1f}", f"{ratio:.2f}",
                             f"{its['tree (C built-in)']:.2f}", f"{its['SymPy -> C']:.2f}",
                             f"{diff:.1e}"])
    finally:
        if old is None:
            os.environ.pop("SYMPLECTIC_CACHE", None)
        else:
            os.environ["SYMPLECTIC_CACHE"] = old
    return "\n".join([
        f"h = {H:g}, {steps} steps a run (arm6 from q0 = ({', '.join(f'{x:g}' for x in ARM6_Q0)}) "
        "near its hanging equilibrium with q̇0 = "
        f"({', '.join(f'{x:g}' for x in ARM6_QDOT0)}) rad/s; the chain from a seeded start, "
        "|q0| ≤ 0.4 rad, |q̇0| ≤ 0.5 rad/s). The tree system is `multibody.from_urdf`; the SymPy "
        "system is the same Lagrangian through `System.from_sympy` (arm6: "
        "tests/support/urdf_reference.py's forward kinematics; the chain: absolute angles, "
        "written in suite/tree.py), compiled to C. Per round each runs once, interleaved; "
        f"median over {rounds} rounds of the time per step, the ratio the median of the rounds' "
        "paired ratios. \"Max rel. diff.\" compares separate 400-step runs of the two (q and p, "
        f"relative to their largest entries). SymPy {sy.__version__}.\n",
        md_table(["robot", "n", "method", "tree µs/step", "SymPy µs/step", "tree / SymPy",
                  "Newton it./step (tree)", "Newton it./step (SymPy)", "max rel. diff., 400 steps"],
                 rows),
        "\nSymPy derivation, C generation and compilation, in a fresh cache: "
        + "; ".join(builds) + "."]) + "\n"
