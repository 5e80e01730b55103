/*
 * sym_simpson.c -- the Simpson variational integrator (order 4).
 *
 * Quadratic (P2) finite-element interpolation through q_j, q_{j+1/2},
 * q_{j+1} and Simpson's rule for the action (FVCA eq. (15), AXIOMS Section
 * 3, TOP eq. (6)):
 *
 *   L_d = h [ 1/6 L(q_j, g_l) + 2/3 L(q_m, g_m) + 1/6 L(q_{j+1}, g_r) ],
 *   g_l = (-3 q_j + 4 q_m - q_{j+1})/h,  g_m = (q_{j+1} - q_j)/h,
 *   g_r = (q_j - 4 q_m + 3 q_{j+1})/h.
 *
 * It is the 3-node Lobatto member ("lobatto3") of the Galerkin engine:
 * nodes 0, 1/2, 1; quadrature at the nodes with weights 1/6, 2/3, 1/6.
 * Newton runs on the 2n unknowns (q_m, q_{j+1}) (docs/errata.md#simpson-newton-on-2n-unknowns); the printed
 * equations of TOP Appendix A need the corrections listed there.
 */
#include "symplectic.h"

const sym_galerkin_table sym_simpson_table = {
    3, 3,
    {0.0, 0.5, 1.0},
    {0.0, 0.5, 1.0},
    {1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0},
};

const sym_method sym_method_simpson = {
    "simpson",
    "Simpson variational integrator: quadratic interpolation, Simpson "
    "quadrature of the action; symplectic, symmetric, order 4; Newton on "
    "(q_mid, q_next). Conditionally stable on linear systems: "
    "omega_max h < 2 sqrt(2).",
    4, SYM_KIND_GALERKIN, 1, 1, &sym_simpson_table,
};
