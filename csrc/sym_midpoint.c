/*
 * sym_midpoint.c -- the implicit-midpoint variational integrator (order 2).
 *
 *   L_d(q_l, q_r) = h [ 1/2 g^T M(q_m) g - V(q_m) ],
 *   q_m = (q_l + q_r)/2,  g = (q_r - q_l)/h
 *
 * (FVCA eq. (5), AXIOMS Section 2, TOP Appendix B with the docs/errata.md#top-appendix-b sign and
 * missing-term corrections).  On quadratic Lagrangians it is Newmark's
 * average-acceleration scheme.  In the Galerkin engine: linear
 * interpolation (nodes 0, 1) and the one-point Gauss rule at 1/2.
 */
#include "symplectic.h"

const sym_galerkin_table sym_midpoint_table = {
    2, 1,
    {0.0, 1.0},
    {0.5},
    {1.0},
};

const sym_method sym_method_midpoint = {
    "midpoint",
    "Implicit-midpoint variational integrator (Newmark on quadratic "
    "Lagrangians): linear interpolation, midpoint quadrature; symplectic, "
    "symmetric, order 2; Newton on q_next.",
    2, SYM_KIND_GALERKIN, 1, 0, &sym_midpoint_table,
};
