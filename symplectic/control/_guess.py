"""The first guess of a control problem's unknowns (:meth:`Problem.solve`'s
``guess=``): the default (a straight line between the given ends' positions
at rest, no input; with holonomic constraints, or with inputs given and the
start whole, the start simulated under them), a dict of arrays, or a
:class:`Solution` (a warm start, resampled to this problem's nodes and
points)."""
import numpy as np

from .._run import _integrate
from ._ends import full_start, given
from ._solution import Solution


def initial(pb, guess):
    """z of the guess ``guess`` for the problem ``pb`` (its transcription,
    ends, inputs, method and options)."""
    tr = pb.transcription
    n, N, P, m = tr.n, tr.intervals, tr.P, tr.m
    if isinstance(guess, Solution):
        return _from_solution(pb, guess)
    T = pb.duration
    t = np.linspace(0.0, T, N + 1)
    if guess is None:
        guess = {}
    if not isinstance(guess, dict) or set(guess) - {"q", "p", "u"}:
        raise TypeError("guess must be None, a control.Solution or a dict with keys 'q' "
                        "(N+1, n), 'p' (N+1, n), 'u' (N, P, m)")
    U = np.zeros((N, P, m))
    if guess.get("u") is not None:
        U = np.broadcast_to(np.asarray(guess["u"], dtype=float), (N, P, m)).copy()
    simulate = (guess.get("u") is not None or pb.system.n_constraints > 0) and \
        not tr.inputs.state_dependent
    start = full_start(pb.system, pb.start)
    if guess.get("q") is None and simulate and start:
        # a simulated guess: the start state driven by the guessed inputs (the default
        # with constraints: a straight line in q would leave their manifold)
        tra = _integrate.integrate(pb.system, start[0], start[1], pb.h, N, method=pb.method,
                                   force=U @ tr.inputs.matrix_constant.T, **pb.method_options)
        return tr.pack(tra.q, tra.p, U, T)
    if guess.get("q") is not None:
        q = np.broadcast_to(np.asarray(guess["q"], dtype=float), (N + 1, n))
    else:           # the straight line between the given ends' positions
        qa = given("q", pb.start, np.zeros(n))
        qb = given("q", pb.end, qa)
        q = qa + np.outer(t / T, qb - qa)
    p = np.zeros((N + 1, n)) if guess.get("p") is None else \
        np.broadcast_to(np.asarray(guess["p"], dtype=float), (N + 1, n))
    return tr.pack(q, p, U, T)


def _from_solution(pb, sol):
    """z from a solved problem's states and inputs, at this problem's nodes
    and points (its inputs themselves when the grid and method are the
    same)."""
    tr = pb.transcription
    n, N, P, m = tr.n, tr.intervals, tr.P, tr.m
    T = sol.duration if pb.free else pb.duration
    t = np.linspace(0.0, T, N + 1)
    s = t * (sol.duration / T)              # the guess's time at the same fraction
    q = np.column_stack([np.interp(s, sol.t, sol.q[:, j]) for j in range(n)])
    p = np.column_stack([np.interp(s, sol.t, sol.p[:, j]) for j in range(n)])
    F = None
    if sol.u.shape == (N, P, m) and sol.method == pb.method and \
            abs(sol.duration - T) <= 1e-12 * T:
        U = sol.u.copy()
        F = sol.forces.copy() if tr.inputs.state_dependent else None
    else:
        tu = tr.point_times(T / N).ravel() * (sol.duration / T)
        U = sol.u_at(np.clip(tu, 0.0, sol.duration)).reshape(N, P, m)
    return tr.pack(q, p, U, T, F)
