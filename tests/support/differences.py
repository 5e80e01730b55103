"""Central differences of whole runs: the independent check of the exact tangents."""
import numpy as np

import symplectic as sp


def central_differences(system, q0, p0, h, n_steps, eps=1e-6, **kw):
    """d(q_N, p_N)/d(q_0, p_0) by central differences of integrate (step eps max(1, |y_j|))."""
    n = system.n
    y0 = np.concatenate([q0, p0])
    D = np.empty((2 * n, 2 * n))
    for j in range(2 * n):
        e = np.zeros(2 * n)
        e[j] = eps * max(1.0, abs(y0[j]))
        ends = []
        for sgn in (1.0, -1.0):
            y = y0 + sgn * e
            tr = sp.integrate(system, y[:n], y[n:], h, n_steps, store_every=n_steps, **kw)
            ends.append(np.concatenate([tr.q[-1], tr.p[-1]]))
        D[:, j] = (ends[0] - ends[1]) / (2 * e[j])
    return D
