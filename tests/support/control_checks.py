"""Finite-difference checks of a transcribed control problem's derivatives
(symplectic.control.Problem): the constraint Jacobian (dense and sparse), the
cost's gradient and the Lagrangian's Hessian, against central differences."""
import numpy as np


def central_columns(f, v0, steps):
    """Column j: (f(v0 + e_j) - f(v0 - e_j)) / (2 e_j), stacked on the last axis."""
    cols = []
    for j, e in enumerate(steps):
        vp, vm = v0.copy(), v0.copy()
        vp[j] += e
        vm[j] -= e
        cols.append((np.asarray(f(vp)) - np.asarray(f(vm))) / (2 * e))
    return np.stack(cols, axis=-1)


def check_derivatives(pb, z, nu, *, jac=1e-7, grad=1e-8, hess=1e-5, obj_factor=0.7):
    """Assert the problem's exact derivatives at z equal differences: the
    Jacobian (relative ``jac``; the sparse values the same numbers), the
    cost's gradient (``grad``) and the Hessian of obj_factor J + nu . c
    (``hess``; the end conditions must be linear there: their curvature is
    left out)."""
    n = pb.n_variables
    J = pb.constraints_jac(z)
    fd = central_columns(pb.constraints, z, np.full(n, 1e-6))
    assert np.abs(J - fd).max() < jac * max(1.0, np.abs(fd).max())
    rows, cols = pb.jac_structure()
    sparse = np.zeros_like(J)
    np.add.at(sparse, (rows, cols), pb.jac_values(z))
    assert np.array_equal(sparse, J)                  # the same numbers, every nonzero listed
    g = pb.objective_grad(z)
    gfd = central_columns(pb.objective, z, np.full(n, 1e-6))
    assert np.abs(g - gfd).max() < grad * max(1.0, np.abs(gfd).max())
    hr, hc = pb.hess_structure()
    assert np.all(hr >= hc)
    H = np.zeros((n, n))
    np.add.at(H, (hr, hc), pb.hess_values(z, obj_factor, nu))
    H = H + np.tril(H, -1).T
    fdH = central_columns(lambda v: obj_factor * pb.objective_grad(v)
                          + pb.constraints_jac(v).T @ nu, z, 1e-5 * np.maximum(1.0, np.abs(z)))
    assert np.abs(H - fdH).max() < hess * np.abs(fdH).max()
    return J, g


def random_point(pb, seed):
    """A random point z of the problem's unknowns (the step h = T / N = 0.2 with a free
    duration, whose unknown is T) and random multipliers nu of its constraints."""
    rng = np.random.default_rng(seed)
    z = rng.normal(scale=0.3, size=pb.n_variables)
    if pb.free:
        z[-1] = 0.2 * pb.intervals
    return z, rng.normal(size=len(pb.constraints(z)))
