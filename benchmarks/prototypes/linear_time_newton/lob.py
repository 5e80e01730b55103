"""Lobatto-5 Galerkin table (the engine's row, csrc/core/sym_methods.c) and the generic step residual.

Nodes = quadrature points (B = I).  Unknowns X_a = Q_a - q_j, a = 1..s-1 (X_0 = 0).
  q_i = q_j + X_i,  g_i = sum_a D_ia X_a / h,
  R_a = [a == 0] p_j + sum_i b_i D_ia P_i + h b_a f_a   (a = 0..s-2),
  p_{j+1} = p_j + h sum_i b_i f_i.
"""
import numpy as np

C = np.array([0.0, 0.172673164646011428101, 0.5, 0.827326835353988571899, 1.0])
W = np.array([1 / 20, 49 / 180, 16 / 45, 49 / 180, 1 / 20])
S = 5          # nodes
R = 5          # points
M_ = S - 1     # node unknowns per coordinate


def lagrange_D(c):
    s = len(c)
    D = np.zeros((s, s))
    for a in range(s):
        # derivative of l_a at c_i
        for i in range(s):
            tot = 0.0
            for k in range(s):
                if k == a:
                    continue
                prod = 1.0 / (c[a] - c[k])
                for l in range(s):
                    if l in (a, k):
                        continue
                    prod *= (c[i] - c[l]) / (c[a] - c[l])
                tot += prod
            D[i, a] = tot
    return D


D = lagrange_D(C)        # D[i, a] = l_a'(c_i)
B = np.eye(S)            # Lobatto: points at the nodes


def points(q, X, h):
    """X: (s-1, n) -> qi, gi: (r, n)."""
    Q = np.vstack([np.zeros_like(q)[None], X]) + q[None]
    G = D[:, 1:] @ X / h
    return Q, G


def residual(pointfun, q, p, X, h):
    """pointfun(Qi, Gi) -> (P, f) arrays (r, n)."""
    Qi, Gi = points(q, X, h)
    P, f = pointfun(Qi, Gi)
    Rr = (D[:, :S - 1].T * W[None, :]) @ P + h * (W[:S - 1, None] * f[:S - 1])
    Rr[0] += p
    return Rr, P, f


def residual_lin(jvpfun, q, X, h, dX):
    """the Newton matrix times dX, jvpfun(dQi, dGi) -> (dP, df) at the current points."""
    dQ = np.vstack([np.zeros((1, dX.shape[1])), dX])
    dG = D[:, 1:] @ dX / h
    dP, df = jvpfun(dQ, dG)
    return (D[:, :S - 1].T * W[None, :]) @ dP + h * (W[:S - 1, None] * df[:S - 1])


def Kmat(h=1.0):
    """constant-M leading term: R_a ~ sum_b K_ab M X_b / h, K_ab = sum_i b_i D_ia D_ib (a = 0..s-2, b = 1..s-1)."""
    return (D[:, :S - 1].T * W[None, :]) @ D[:, 1:]


def predictor_poly(Xprev, q_prev, q):
    """SYM_PRED_POLY: extrapolate the last step's polynomial, Q_a(new) = sum_b l_b(1 + c_a) Q_b(prev)."""
    Qp = np.vstack([np.zeros((1, Xprev.shape[1])), Xprev]) + q_prev[None]
    X = np.zeros_like(Xprev)
    for a in range(1, S):
        t = 1.0 + C[a]
        lv = np.array([np.prod([(t - C[k]) / (C[b] - C[k]) for k in range(S) if k != b]) for b in range(S)])
        X[a - 1] = lv @ Qp - q
    return X
