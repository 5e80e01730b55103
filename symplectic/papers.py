"""Published numbers of the three papers, with the conventions that reproduce them.

Values are copied from the papers' tables; ``notes`` record why a printed
value differs from what we compute (typos, truncated entries, entries that a
converged method cannot produce).  :func:`flags` lists every flagged value under
a key; ``docs/errata.md`` in the repository has one row per key with the
printed value, ours and the reason (a test keeps the two in step).
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
        ("simpson", "momentum", 50): "printed truncated (6.0856e-6 -> 6.08e-6)",
        ("midpoint", "state", 100): "printed truncated (1.3169e-3 -> 1.31e-3)",
    },
}

#: Parameters of the FVCA pendulum.
FVCA_PENDULUM = dict(m=1.0, omega=2 * math.pi, q0=math.pi / 2, p0=0.0)


#: AXIOMS 2024, Table 2: linearised double pendulum, ||e||_inf of p and q over
#: [0, T] against the exact solution, h = 0.1, 0.05, 0.025 t_bar in every block.
AXIOMS_TABLE2 = {
    "horizons": [1, 10, 100, 1000],            # T in units of t_bar = 1 s
    "meshes": {1: [10, 20, 40], 10: [100, 200, 400], 100: [1000, 2000, 4000],
               1000: [10000, 20000, 40000]},
    "rows": [
        # (T, method, quantity, values, printed order)
        (1, "newmark", "p", [0.0751, 0.0230, 0.00606], 1.81),
        (1, "rk4", "p", [0.0139, 0.000800, 0.0000540], 4.01),
        (1, "simpson", "p", [0.000640, 0.0000416, 0.00000257], 3.98),
        (1, "newmark", "q", [0.342, 0.0961, 0.0251], 1.88),
        (1, "rk4", "q", [0.0483, 0.00340, 0.000200], 3.91),
        (1, "simpson", "q", [0.00201, 0.000141, 0.00000876], 3.92),
        (10, "newmark", "p", [0.273, 0.206, 0.0782], 0.90),
        (10, "rk4", "p", [0.0822, 0.00990, 0.0137], 1.29),
        (10, "simpson", "p", [0.00720, 0.000433, 0.0000268], 4.03),
        (10, "newmark", "q", [0.694, 0.657, 0.244], 0.75),
        (10, "rk4", "q", [0.284, 0.0329, 0.0157], 2.09),
        (10, "simpson", "q", [0.0235, 0.00141, 0.0000906], 4.01),
        (100, "newmark", "p", [0.521, 0.492, 0.223], 0.61),
        (100, "rk4", "p", [0.108, 0.0786, 0.00640], 2.03),
        (100, "simpson", "p", [0.0705, 0.00439, 0.000272], 4.01),
        (100, "newmark", "q", [1.02, 0.964, 0.665], 0.31),
        (100, "rk4", "q", [0.328, 0.2650, 0.0216], 1.96),
        (100, "simpson", "q", [0.237, 0.0147, 0.000914], 4.01),
        (1000, "newmark", "p", [0.545, 0.551, 0.548], 0.00),
        (1000, "rk4", "p", [0.326, 0.119, 0.0595], 1.23),
        (1000, "simpson", "p", [0.190, 0.0438, 0.00274], 3.06),
        (1000, "newmark", "q", [1.02, 1.03, 1.03], 0.01),
        (1000, "rk4", "q", [0.581, 0.397, 0.200], 0.77),
        (1000, "simpson", "q", [0.638, 0.147, 0.00922], 3.06),
    ],
    "conventions": ("m1 = m2 = 1, l = g/omega0^2, g = 9.81, omega0 = 2 pi, q(0) = (0, pi/6), "
                    "p(0) = 0; t_bar = 2 pi/omega0 = 1 s; h = T/N; error: max over nodes of the "
                    "Euclidean norm; order: least-squares slope over the three meshes"),
    "notes": {
        (10, "newmark", "p", 400): "printed 0.782, a typo for 0.0782",
        (10, "rk4", "p", 400): "printed 0.0137: not a converged fixed-step RK4",
        (10, "rk4", "q", 400): "printed 0.0157: not a converged fixed-step RK4",
        (10, "rk4", "p", "order"): "printed 1.29: the slope through the flagged 0.0137",
        (10, "rk4", "q", "order"): "printed 2.09: the slope through the flagged 0.0157",
        (1, "rk4", "p", 20): "printed 0.000800, truncated to 1 digit",
        (1, "rk4", "q", 20): "printed 0.00340, truncated to 2 digits",
        (1, "rk4", "q", 40): "printed 0.000200, truncated to 1 digit",
    },
    #: The five RK4 entries not to use as targets (the two at
    #: T = 10 t_bar, 400 meshes, and the three T = 1 t_bar entries printed with
    #: only 1-2 significant digits), and the order entries computed from them.
    "not_targets": {(10, "rk4", "p", 400), (10, "rk4", "q", 400), (1, "rk4", "p", 20),
                    (1, "rk4", "q", 20), (1, "rk4", "q", 40),
                    (10, "rk4", "p", "order"), (10, "rk4", "q", "order")},
}

#: Parameters of the AXIOMS linearised double pendulum (Table 1).
AXIOMS_DOUBLE_PENDULUM = dict(m1=1.0, m2=1.0, g=9.81, omega0=2 * math.pi,
                              q0=(0.0, math.pi / 6), p0=(0.0, 0.0), t_bar=1.0)

# ---------------------------------------------------------------- TOP paper (2025)
# "Simpson variational integrator for nonlinear systems: a tutorial on the Lagrange
# top" (Rojas-Quintero, Dubois et al.; papers/simpson-lagrange-top-2025.txt).  The text version of
# the paper prints Tables 1, 3 and 6; Tables 2, 4 and 5 (error norms and orders
# against simulation length) are images whose values are not in the text, so
# they are not recorded here -- only what the text says about them.

#: TOP Table 1: nonlinear double pendulum (Section 3).  The text's l = g/omega0 is
#: dimensionally odd; l = g/omega0^2 (omega0 = sqrt(g/l)) is the natural reading
#: and the one used here (docs/errata.md).  V has no constant, so H0 < 0.
TOP_TABLE1 = dict(m1=1.0, m2=1.0, omega0=2 * math.pi, g=9.81, l=9.81 / (2 * math.pi) ** 2,
                  q0=(math.pi / 4, math.pi / 3), p0=(0.0, 0.0), T=10.0,
                  notes=("l = g/omega0 as printed; g/omega0^2 used. Energy error "
                         "max_n |H_n - H0|/|H0|; orders 2 (midpoint), 4 (Simpson), about 5 for "
                         "RK4 (Figure 4)."))

#: TOP Table 3: the toy top of Laos 2022, a motion with loops (Section 4.2).
#: g = 9.81 is missing from the table.  q = (phi, theta, psi) ZXZ Euler angles.
TOP_TABLE3 = dict(m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15, g=9.81,
                  q0=(0.0, math.pi / 3, 0.0), qdot0=(9.2, 0.0, 252.0))

#: Nutation period of Table 3 as printed (s) -- it corresponds to I rounded to 0.00233 --
#: and the exact period of the printed parameters (docs/errata.md), which is the t-bar used
#: for h = t-bar / N.  ``symplectic.exact.LagrangeTop`` computes the latter.
TOP_NUTATION_PERIOD_PRINTED = 1.84671
TOP_NUTATION_PERIOD = 1.8472390

#: Conventions of TOP Tables 4 and 5 (values not available in the text version):
#: errors over increasing simulation lengths T (the text mentions 100 and 1000
#: nutation periods; the full list is in the images), steps h = t-bar / N (the
#: text mentions h = 0.05); nutation error relative, max_n |theta_n - theta_ex,n| /
#: theta_ex,n; energy error max_n |H_n - H0| / |H0|; orders by least squares.
#: What the text states: Simpson keeps order 4 on both measures for long runs;
#: midpoint's nutation order falls to ~0 at 1000 periods while its energy order
#: stays 2; RK4's nutation order approaches 6 at 100 periods ("because the error
#: at h = 0.05 is very high") and its energy order approaches 5.
TOP_TABLES45 = dict(periods_mentioned=(100, 1000), values=None,
                    statements={
                        ("simpson", "nutation"): "order 4, minimal fluctuation over many periods",
                        ("simpson", "energy"): "order 4 preserved for long simulations",
                        ("midpoint", "nutation"): "order degrades, ~0 at 1000 periods",
                        ("midpoint", "energy"): "order 2, stable over time",
                        ("rk4", "nutation"): "fluctuates, approaches 6 at 100 periods",
                        ("rk4", "energy"): "fluctuates, approaches 5",
                    })

#: TOP Table 6: reduced Lagrange top, a motion with cusps (Section 4.3).
#: m g l = I A = 4 pi^2 (l = 4 pi^2 / g, so g does not matter); the conserved
#: momenta (18ab) follow from the initial state.  Reference: RK4 on the reduced
#: system (18aq) with h = 1e-5 (Figure 13); Figure 14: max over [0, 1 s] of
#: |theta_Simpson(complete) - theta_RK4(reduced)| at equal h, halved successively,
#: converges with order 4.
TOP_TABLE6 = dict(m=1.0, I=1.0, I3=2.0, A=4 * math.pi ** 2, l=4 * math.pi ** 2 / 9.81, g=9.81,
                  q0=(0.0, math.pi / 6, 0.0), qdot0=(0.0, 0.0, 2 * math.pi),
                  p_phi=2 * math.pi * math.sqrt(3.0), p_psi=4 * math.pi, T=1.0, h_reference=1e-5)

#: Printed TOP values that the reproduction replaces by something else:
#: {(table, entry): note}.
TOP_NOTES = {
    ("top-t1", "l"): "printed l = g/omega0, which has units m/s",
    ("top-t3", "nutation period"): "printed 1.84671 s, the period for I rounded to 0.00233",
}


def _key(*parts):
    return "/".join(str(x).replace(" ", "-") for x in parts)


def flag_key(table, entry):
    """The key of a flagged value: ``table`` is ``"fvca-t1"``, ``"axioms-t2"``,
    ``"top-t1"`` or ``"top-t3"``, ``entry`` the tuple used in that table's notes (for example
    ``flag_key("axioms-t2", (10, "rk4", "p", 400)) == "axioms-t2/10/rk4/p/400"``)."""
    return _key(table, *entry)


def flags():
    """Every printed value the reproduction flags, as {key: note}.

    Collects the ``notes`` of FVCA Table 1 and AXIOMS Table 2, the AXIOMS
    entries that are not used as targets, and :data:`TOP_NOTES`.  The keys are
    those printed by ``python -m symplectic reproduce`` next to a flagged value
    and those of the table in ``docs/errata.md``.
    """
    out = {}
    for entry, note in FVCA_TABLE1["notes"].items():
        out[flag_key("fvca-t1", entry)] = note
    for entry, note in AXIOMS_TABLE2["notes"].items():
        out[flag_key("axioms-t2", entry)] = note
    for entry in sorted(AXIOMS_TABLE2["not_targets"], key=str):
        out.setdefault(flag_key("axioms-t2", entry), "not a target")
    for (table, entry), note in TOP_NOTES.items():
        out[flag_key(table, (entry,))] = note
    return out
