"""Published numbers of the three papers, with the conventions that reproduce them.

Values are copied from the papers' tables; ``notes`` record the errata of
``papers/ERRATA.md`` that apply (typos, truncated entries, entries that a
converged method cannot produce).
"""
import math

#: FVCA 2023, Table 1: nonlinear pendulum, one exact period, h = T/N, max over nodes.
FVCA_TABLE1 = {
    "meshes": [50, 100, 200],
    "rows": [
        # (method, quantity, values, printed order)
        ("midpoint", "momentum", [2.93e-2, 7.32e-3, 1.83e-3], 2.0),
        ("simpson", "momentum", [6.08e-6, 3.78e-7, 2.36e-8], 4.0),
        ("midpoint", "state", [5.26e-3, 1.31e-3, 3.29e-4], 2.0),
        ("simpson", "state", [1.05e-6, 6.51e-8, 4.06e-9], 4.0),
        ("midpoint", "relative energy", [9.06e-4, 2.29e-4, 5.73e-5], 2.0),
        ("simpson", "relative energy", [1.30e-6, 8.42e-8, 5.25e-9], 4.0),
    ],
    "conventions": ("m = 1, omega = 2 pi, q(0) = pi/2, p(0) = 0; T = 4 K(k^2)/omega "
                    "(one exact period), h = T/N; errors: max over all nodes j = 0..N"),
    "notes": {
        ("simpson", "momentum", 50): "printed truncated (6.0856e-6 -> 6.08e-6), ERRATA.md",
        ("midpoint", "state", 100): "printed truncated (1.3169e-3 -> 1.31e-3), ERRATA.md",
    },
}

#: Parameters of the FVCA pendulum.
FVCA_PENDULUM = dict(m=1.0, omega=2 * math.pi, q0=math.pi / 2, p0=0.0)
