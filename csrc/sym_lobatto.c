/*
 * sym_lobatto.c -- the Lobatto family of Galerkin variational integrators
 * (Marsden & West 2001, Section 2.6; Ober-Bloebaum & Saake 2015), members
 * s = 2, 3, 4, 5 (s = 3 is Simpson, sym_simpson.c, whose kernels are
 * specialised; "lobatto3" computes the same scheme generically).
 *
 * Interpolation of degree s-1 through the s Gauss-Lobatto nodes of [0, 1]
 * (the ends and the roots of P'_{s-1}(2c - 1)), and the Lobatto quadrature of
 * the action at those nodes, exact for polynomials of degree 2s - 3.  The
 * one-step map is symplectic and symmetric, of order 2s - 2:
 *
 *   s = 2: c = 0, 1;                      b = 1/2, 1/2          (order 2)
 *   s = 4: c = 0, 1/2 -+ sqrt(5)/10, 1;   b = 1/12, 5/12, 5/12, 1/12  (6)
 *   s = 5: c = 0, 1/2 -+ sqrt(21)/14, 1/2, 1;
 *          b = 1/20, 49/180, 16/45, 49/180, 1/20                       (8)
 *
 * Nodes are given to 21 significant digits (exact values above); the
 * engine derives the Lagrange basis values and derivatives from them.
 */
#include "symplectic.h"

const sym_galerkin_table sym_lobatto2_table = {
    2, 2,
    {0.0, 1.0},
    {0.0, 1.0},
    {0.5, 0.5},
};

/* Simpson's table again: "lobatto3" runs the generic Lobatto kernels and
 * so cross-checks the specialised ones that "simpson" uses. */
const sym_galerkin_table sym_lobatto3_table = {
    3, 3,
    {0.0, 0.5, 1.0},
    {0.0, 0.5, 1.0},
    {1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0},
};

const sym_galerkin_table sym_lobatto4_table = {
    4, 4,
    {0.0, 0.276393202250021030359, 0.723606797749978969641, 1.0},
    {0.0, 0.276393202250021030359, 0.723606797749978969641, 1.0},
    {1.0 / 12.0, 5.0 / 12.0, 5.0 / 12.0, 1.0 / 12.0},
};

const sym_galerkin_table sym_lobatto5_table = {
    5, 5,
    {0.0, 0.172673164646011428101, 0.5, 0.827326835353988571899, 1.0},
    {0.0, 0.172673164646011428101, 0.5, 0.827326835353988571899, 1.0},
    {1.0 / 20.0, 49.0 / 180.0, 16.0 / 45.0, 49.0 / 180.0, 1.0 / 20.0},
};

const sym_method sym_method_lobatto2 = {
    "lobatto2",
    "2-node Lobatto variational integrator (linear interpolation, trapezoidal "
    "quadrature of the action); symplectic, symmetric, order 2.",
    2, SYM_KIND_GALERKIN, 1, 0, &sym_lobatto2_table,
};

const sym_method sym_method_lobatto3 = {
    "lobatto3",
    "3-node Lobatto variational integrator: the Simpson scheme computed by the "
    "generic Lobatto kernels (a cross-check of 'simpson'); order 4.",
    4, SYM_KIND_GALERKIN, 1, 1, &sym_lobatto3_table,
};

const sym_method sym_method_lobatto4 = {
    "lobatto4",
    "4-node Lobatto variational integrator (cubic interpolation, Lobatto "
    "quadrature); symplectic, symmetric, order 6; Newton on 3n unknowns.",
    6, SYM_KIND_GALERKIN, 1, 2, &sym_lobatto4_table,
};

const sym_method sym_method_lobatto5 = {
    "lobatto5",
    "5-node Lobatto variational integrator (quartic interpolation, Lobatto "
    "quadrature); symplectic, symmetric, order 8; Newton on 4n unknowns.",
    8, SYM_KIND_GALERKIN, 1, 3, &sym_lobatto5_table,
};
