"""MuJoCo as a fixed-step explicit baseline: the planar n-link chain and URDF arms.

MuJoCo (PyPI ``mujoco``, Google DeepMind's physics engine: a compiled ``libmujoco`` inside the
``mujoco-core`` wheel that the ``mujoco`` wheel depends on) is optional; :func:`load` returns
None without it and the benchmark reports MuJoCo as skipped.

**The chain** (``symplectic.systems.pendulum_chain``: point masses m_k at the ends of massless
rods l_k, q_k the *absolute* angle of rod k from the downward vertical) as MJCF: body k hangs
from hinge joint k at the end of rod k-1 (the world's origin for k = 1), the hinge axis
(0, -1, 0) so that a positive angle swings the rod from -z towards +x (rod k's direction is
(sin q_k, 0, -cos q_k)), the body's mass m_k at (0, 0, -l_k) in its frame.  MuJoCo's hinge
angles are *relative*: theta_1 = q_1, theta_k = q_k - q_{k-1}, so q = cumsum(theta),
qd = cumsum(theta_dot), qdd = cumsum(theta_ddot).  MuJoCo refuses a moving body whose rotational
inertia is not above mjMINVAL (1e-15), so each mass carries ``POINT_INERTIA`` = 1e-12 kg m^2
about its centre (in every direction).  That adds 1e-12 to the diagonal of M(q) in the absolute
angles: a relative change of M of at most 1e-12 / min_k(mu_k l_k^2) (5e-11 for the arm chain,
1e-12 for unit chains), far below the 1e-8 energy target, and of the same size in the
accelerations (:func:`check_chain` measures it).  No geoms (so no contacts), no damping,
armature, limits, actuators or springs; contacts and constraints are disabled as well.
Gravity (0, 0, -g).  Integrator RK4 (MuJoCo's classical 4-stage Runge-Kutta), fixed step.

**URDF arms**: ``MjModel.from_xml_path`` on the URDF, then joint damping, friction loss and
armature set to zero and limits, contacts and constraints disabled (``opt.disableflags``), so
that the model is the frictionless, unlimited tree of ``symplectic.multibody.from_urdf``;
:func:`check_urdf` compares MuJoCo's M(q) (``mj_fullM``) and bias forces with ours.

e_H is computed from the recorded states with the *caller's* energy function (the same H as for
our integrators and GSL), outside the timed runs; the timed run is one ``mj_step(model, data,
nstep=N)`` call from the initial state (MuJoCo's own loop in C; the energy flag off).
"""
import math
import time

import numpy as np

POINT_INERTIA = 1e-12     # kg m^2: the rotational inertia MuJoCo needs on each point mass


def load():
    """The mujoco module, or None if it cannot be imported (or is not the compiled engine)."""
    try:
        import mujoco
    except ImportError:
        return None
    return mujoco if hasattr(mujoco, "MjModel") and hasattr(mujoco, "mj_step") else None


def chain_mjcf(m, l, g=9.81, h=1e-3):
    """The MJCF text of the planar chain with masses m, lengths l (RK4, step h)."""
    lines = ['<mujoco model="pendulum_chain">',
             f'  <option gravity="0 0 {-float(g)!r}" integrator="RK4" timestep="{float(h)!r}">',
             '    <flag contact="disable" constraint="disable"/>',
             '  </option>',
             '  <worldbody>']
    I = POINT_INERTIA
    indent = "    "
    for k, (mk, lk) in enumerate(zip(m, l)):
        pos = "0 0 0" if k == 0 else f"0 0 {-float(l[k - 1])!r}"
        lines.append(f'{indent}<body name="link{k + 1}" pos="{pos}">')
        lines.append(f'{indent}  <joint name="j{k + 1}" type="hinge" axis="0 -1 0" damping="0" armature="0"/>')
        lines.append(f'{indent}  <inertial pos="0 0 {-float(lk)!r}" mass="{float(mk)!r}" '
                     f'diaginertia="{I!r} {I!r} {I!r}"/>')
        indent += "  "
    for _ in m:
        indent = indent[:-2]
        lines.append(f"{indent}</body>")
    lines += ["  </worldbody>", "</mujoco>"]
    return "\n".join(lines)


def relative(q_abs):
    """Absolute rod angles (rows) -> MuJoCo's relative hinge angles."""
    q_abs = np.asarray(q_abs, float)
    return np.diff(q_abs, axis=-1, prepend=0.0)


def absolute(theta):
    """MuJoCo's relative hinge angles (or their rates) -> absolute rod angles (rows)."""
    return np.cumsum(np.asarray(theta, float), axis=-1)


class Sim:
    """A MuJoCo model with a start state; runs over [0, T] with a fixed step h.

    ``to_q(qpos, qvel)`` maps recorded rows to the coordinates of ``energy(q, qd)`` (rows)."""

    def __init__(self, mj, model, qpos0, qvel0, energy, to_q=lambda a, b: (a, b)):
        self.mj, self.model = mj, model
        self.data = mj.MjData(model)
        self.qpos0, self.qvel0 = np.array(qpos0, float), np.array(qvel0, float)
        self.energy, self.to_q = energy, to_q
        self.model.opt.integrator = mj.mjtIntegrator.mjINT_RK4
        self.model.opt.enableflags &= ~int(mj.mjtEnableBit.mjENBL_ENERGY)
        self.H0 = float(self.energy(*self.to_q(self.qpos0[None], self.qvel0[None]))[0])

    def _reset(self, h):
        mj, d = self.mj, self.data
        mj.mj_resetData(self.model, d)
        self.model.opt.timestep = float(h)
        d.qpos[:] = self.qpos0
        d.qvel[:] = self.qvel0
        mj.mj_forward(self.model, d)

    def measure(self, h, T, chunk=4096):
        """(e_H over the steps of [0, T], N, wall seconds of the whole measuring run)."""
        N = int(round(T / h))
        self._reset(h)
        mj, m, d = self.mj, self.model, self.data
        nq, nv = m.nq, m.nv
        Q, V = np.empty((chunk, nq)), np.empty((chunk, nv))
        worst, done = 0.0, 0
        w0 = time.perf_counter()
        while done < N:
            k = min(chunk, N - done)
            for j in range(k):
                mj.mj_step(m, d)
                Q[j] = d.qpos
                V[j] = d.qvel
            E = self.energy(*self.to_q(Q[:k], V[:k]))
            if not np.all(np.isfinite(E)):
                return math.inf, N, time.perf_counter() - w0
            worst = max(worst, float(np.max(np.abs(E - self.H0))) / abs(self.H0))
            done += k
        return worst, N, time.perf_counter() - w0

    def run(self, h, T):
        """One timed run: N = T/h steps in one mj_step call; its wall seconds."""
        N = int(round(T / h))
        self._reset(h)
        w0 = time.perf_counter()
        self.mj.mj_step(self.model, self.data, nstep=N)
        return time.perf_counter() - w0


def chain_sim(mj, m, l, q0, qd0, energy_qv, g=9.81):
    """The chain as a :class:`Sim` from absolute angles q0, rates qd0; energy_qv(q, qd) (rows)."""
    model = mj.MjModel.from_xml_string(chain_mjcf(m, l, g))
    return Sim(mj, model, relative(q0), relative(qd0), energy_qv,
               to_q=lambda Q, V: (absolute(Q), absolute(V)))


def chain_qdd(mj, m, l, q, qd, g=9.81):
    """MuJoCo's accelerations of the chain at absolute (q, qd), in absolute angles."""
    model = mj.MjModel.from_xml_string(chain_mjcf(m, l, g))
    d = mj.MjData(model)
    d.qpos[:] = relative(q)
    d.qvel[:] = relative(qd)
    mj.mj_forward(model, d)
    return absolute(d.qacc.copy())


def chain_mass_rhs(m, l, q, qd, g=9.81, dtype=float):
    """M(q) and r(q, qd) of the chain's M qdd = r in absolute angles, computed in ``dtype``
    (float, or np.longdouble for a reference): M_ij = l_i l_j mu_max(i,j) cos(q_i - q_j),
    r_i = -sum_j l_i l_j mu_max(i,j) sin(q_i - q_j) qd_j^2 - g mu_i l_i sin q_i."""
    m, l, q, qd = (np.asarray(x, dtype) for x in (m, l, q, qd))
    n = len(m)
    mu = np.cumsum(m[::-1])[::-1]
    i = np.arange(n)
    a = np.outer(l, l) * mu[np.maximum.outer(i, i)]
    d = q[:, None] - q[None, :]
    r = -(a * np.sin(d)) @ (qd * qd) - dtype(g) * mu * l * np.sin(q)
    return a * np.cos(d), r


def chain_qdd_formula(m, l, q, qd, g=9.81):
    """qdd of the chain from M(q) qdd = r (LU in NumPy): the formula of gsl_rk8pd_chain.c."""
    return np.linalg.solve(*chain_mass_rhs(m, l, q, qd, g))


def urdf_model(mj, path):
    """MuJoCo's model of a URDF with damping, friction loss, armature, limits, contacts and
    constraints removed (the frictionless unlimited tree of symplectic.multibody.from_urdf)."""
    model = mj.MjModel.from_xml_path(str(path))
    model.dof_damping[:] = 0.0
    model.dof_frictionloss[:] = 0.0
    model.dof_armature[:] = 0.0
    model.jnt_limited[:] = 0
    model.opt.disableflags |= int(mj.mjtDisableBit.mjDSBL_CONTACT) | int(mj.mjtDisableBit.mjDSBL_CONSTRAINT)
    model.opt.gravity[:] = (0.0, 0.0, -9.81)
    return model


def urdf_matrices(mj, model, q, qd):
    """MuJoCo's M(q) (mj_fullM) and bias forces C(q, qd) qd + g(q) (qfrc_bias) at (q, qd)."""
    d = mj.MjData(model)
    d.qpos[:] = q
    d.qvel[:] = qd
    mj.mj_forward(model, d)
    M = np.zeros((model.nv, model.nv))
    mj.mj_fullM(model, d, M)
    return M, d.qfrc_bias.copy()
