/*
 * sym_methods.c -- the method registry: every method is one row (name, doc,
 * order, symplectic, internal nodes per step, its Galerkin node/quadrature
 * table or NULL, flags, and the scheme's function table).
 *
 * Galerkin variational integrators (sym_galerkin.c) differ only in their
 * table: s interpolation nodes c_0 = 0 < ... < c_{s-1} = 1 and r quadrature
 * points x_i with weights b_i.  The engine derives everything else (Lagrange
 * basis values and derivatives, predictor, term lists) once per workspace,
 * and picks kernels unrolled for small sizes where they exist (Lobatto
 * quadrature at the nodes with s = 3, 4, 5 and n <= 4, or n <= 4 for other
 * quadratures) unless the row has SYM_METHOD_GENERIC.
 *
 * Simpson (FVCA eq. (15), AXIOMS Section 3, TOP eq. (6)): quadratic (P2)
 * interpolation through q_j, q_{j+1/2}, q_{j+1} and Simpson's rule for the
 * action,
 *   L_d = h [ 1/6 L(q_j, g_l) + 2/3 L(q_m, g_m) + 1/6 L(q_{j+1}, g_r) ],
 *   g_l = (-3 q_j + 4 q_m - q_{j+1})/h,  g_m = (q_{j+1} - q_j)/h,
 *   g_r = (q_j - 4 q_m + 3 q_{j+1})/h:
 * the 3-node Lobatto member, nodes 0, 1/2, 1 with weights 1/6, 2/3, 1/6.
 * Newton runs on the 2n unknowns (q_m, q_{j+1})
 * (docs/errata.md#simpson-newton-on-2n-unknowns); the printed equations of
 * TOP Appendix A need the corrections listed there.
 *
 * Implicit midpoint (FVCA eq. (5), AXIOMS Section 2, TOP Appendix B with the
 * docs/errata.md#top-appendix-b sign and missing-term corrections):
 *   L_d(q_l, q_r) = h [ 1/2 g^T M(q_m) g - V(q_m) ],
 *   q_m = (q_l + q_r)/2,  g = (q_r - q_l)/h,
 * linear interpolation (nodes 0, 1) and the one-point Gauss rule at 1/2; on
 * quadratic Lagrangians it is Newmark's average-acceleration scheme.
 *
 * The Lobatto family (Marsden & West 2001, Section 2.6; Ober-Bloebaum &
 * Saake 2015): interpolation of degree s-1 through the s Gauss-Lobatto
 * nodes of [0, 1] (the ends and the roots of P'_{s-1}(2c - 1)) and the
 * Lobatto quadrature of the action at those nodes, exact for polynomials of
 * degree 2s - 3; symplectic, symmetric, order 2s - 2:
 *   s = 2: c = 0, 1;                      b = 1/2, 1/2                (2)
 *   s = 3: Simpson                                                    (4)
 *   s = 4: c = 0, 1/2 -+ sqrt(5)/10, 1;   b = 1/12, 5/12, 5/12, 1/12  (6)
 *   s = 5: c = 0, 1/2 -+ sqrt(21)/14, 1/2, 1;
 *          b = 1/20, 49/180, 16/45, 49/180, 1/20                       (8)
 *   s = 6: P'_5(x) = (315 x^4 - 210 x^2 + 15)/8, roots x^2 = (7 -+ 2 sqrt 7)/21;
 *          c = 0, 1/2 -+ sqrt((7 + 2 sqrt 7)/21)/2, 1/2 -+ sqrt((7 - 2 sqrt 7)/21)/2, 1;
 *          b = 1/30, (14 - sqrt 7)/60, (14 + sqrt 7)/60 (symmetric)    (10)
 *   s = 7: P'_6(x) = x (1386 x^4 - 1260 x^2 + 210)/16, roots 0 and
 *          x^2 = (15 -+ 2 sqrt 15)/33;
 *          c = 0, 1/2 -+ sqrt((15 + 2 sqrt 15)/33)/2,
 *              1/2 -+ sqrt((15 - 2 sqrt 15)/33)/2, 1/2, 1;
 *          b = 1/42, (124 - 7 sqrt 15)/700, (124 + 7 sqrt 15)/700, 128/525
 *          (symmetric)                                                (12)
 * The weights are those of Lobatto's rule on [-1, 1], 2/(s (s-1) P_{s-1}(x)^2)
 * (2/(s (s-1)) at the ends), halved for [0, 1]: b = 1/(s (s-1) P_{s-1}(x)^2).
 * Nodes and irrational weights are given to 21 significant digits (computed
 * with mpmath at 40 digits from the closed forms above; each literal rounds
 * to the double nearest the exact value, and the rule integrates c^k exactly
 * for k <= 2s - 3).  A further order is one more row with its nodes and
 * weights (s <= SYM_MAX_NODES); s = 6, 7 run the generic Lobatto kernels
 * (sym_galerkin_kernels.c: fixed instances exist for s <= 5) and the
 * SYM_PRED_POLY1 predictor (sym_galerkin_step.c: s >= 5).
 *
 * The Gauss-Legendre members (issue 35): interpolation of degree s-1 and the
 * (s-1)-point Gauss quadrature of the action, at points that are not nodes
 * (exact for degree 2s - 3): the (s-1)-stage Gauss collocation method
 * (Hairer, Lubich & Wanner, GNI VI.6), symplectic, symmetric, order
 * 2s - 2 and A-stable on linear systems (on the oscillator the step's
 * eigenvalues are R(+-i omega h), R the (s-1, s-1) Pade approximant of exp):
 *   gauss2: s = 3, c = 0, 1/2, 1;  x = 1/2 -+ sqrt(3)/6;  b = 1/2, 1/2      (4)
 *   gauss3: s = 4, c = lobatto4's; x = 1/2 -+ sqrt(15)/10, 1/2;
 *           b = 5/18, 4/9, 5/18                                          (6)
 * The interior nodes only parameterise the polynomial (the step map does not
 * depend on them); Lobatto's keep the interpolation well conditioned.
 *
 * RK4 (sym_rk4.c) has no table.
 */
#include "sym_scheme.h"

#include <math.h>

static const sym_galerkin_table simpson_table = {
    3, 3, {0.0, 0.5, 1.0}, {0.0, 0.5, 1.0}, {1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0},
};

/* Rows: name, doc, order, symplectic, n_mid (s - 2 for a Galerkin scheme),
 * table, flags, scheme, stability limit (0 when not determined: no stability
 * warning is given for the method).  Tables other than Simpson's are written
 * in place (C99 compound literals with static storage).
 *
 * Stability limits (sym_method.stability): Simpson's 2 sqrt 2 (AXIOMS
 * eq. (31)) and RK4's on the imaginary axis, |1 + z + z^2/2 + z^3/6 + z^4/24|
 * <= 1 for z = i omega h up to 2 sqrt 2; the trapezoidal (Stoermer-Verlet)
 * Lobatto-2 scheme's 2; those of Lobatto-4, -5, -6 and -7 measured as the first
 * omega h where an eigenvalue of the one-step map leaves the unit circle
 * (bisection on the exact tangent map; tests/run/test_stability.py checks each
 * limit the same way, just below and above); none (HUGE_VAL) for the
 * A-stable midpoint and Gauss rules. */
#define STAB_SIMPSON 2.8284271247461903
#define STAB_RK4 2.8284271247461903
#define STAB_LOBATTO6 6.253008184763 /* bisection: 6.25300818476297 .. 6.253008184762971 */
#define STAB_LOBATTO7 9.267346059619 /* bisection: 9.267346059619198 .. 9.2673460596192 */

static const sym_method registry[] = {
    {"simpson",
     "Simpson variational integrator: quadratic interpolation, Simpson "
     "quadrature of the action; symplectic, symmetric, order 4; Newton on "
     "(q_mid, q_next). Conditionally stable on linear systems: "
     "omega_max h < 2 sqrt(2).",
     4, 1, 1, &simpson_table, 0, &sym_galerkin_ops, STAB_SIMPSON},
    {"midpoint",
     "Implicit-midpoint variational integrator (Newmark on quadratic "
     "Lagrangians): linear interpolation, midpoint quadrature; symplectic, "
     "symmetric, order 2; Newton on q_next.",
     2, 1, 0, &(const sym_galerkin_table){2, 1, {0.0, 1.0}, {0.5}, {1.0}}, 0, &sym_galerkin_ops,
     HUGE_VAL},
    {"rk4",
     "Classical explicit Runge-Kutta 4 on Hamilton's equations "
     "qdot = M^-1 p, pdot = -grad V + 1/2 qdot^T dM qdot; order 4; not "
     "symplectic (the papers' reference method).",
     4, 0, 0, NULL, 0, &sym_rk4_ops, STAB_RK4},
    {"lobatto2",
     "2-node Lobatto variational integrator (linear interpolation, trapezoidal "
     "quadrature of the action); symplectic, symmetric, order 2.",
     2, 1, 0, &(const sym_galerkin_table){2, 2, {0.0, 1.0}, {0.0, 1.0}, {0.5, 0.5}}, 0,
     &sym_galerkin_ops, 2.0},
    {"lobatto3",
     "3-node Lobatto variational integrator: the Simpson scheme computed by the "
     "generic Lobatto kernels (a cross-check of 'simpson'); order 4.",
     4, 1, 1, &simpson_table, SYM_METHOD_GENERIC, &sym_galerkin_ops, STAB_SIMPSON},
    {"lobatto4",
     "4-node Lobatto variational integrator (cubic interpolation, Lobatto "
     "quadrature); symplectic, symmetric, order 6; Newton on 3n unknowns.",
     6, 1, 2,
     &(const sym_galerkin_table){4, 4,
                                 {0.0, 0.276393202250021030359, 0.723606797749978969641, 1.0},
                                 {0.0, 0.276393202250021030359, 0.723606797749978969641, 1.0},
                                 {1.0 / 12.0, 5.0 / 12.0, 5.0 / 12.0, 1.0 / 12.0}},
     0, &sym_galerkin_ops, 3.1127176481642},
    {"lobatto5",
     "5-node Lobatto variational integrator (quartic interpolation, Lobatto "
     "quadrature); symplectic, symmetric, order 8; Newton on 4n unknowns.",
     8, 1, 3,
     &(const sym_galerkin_table){
         5, 5,
         {0.0, 0.172673164646011428101, 0.5, 0.827326835353988571899, 1.0},
         {0.0, 0.172673164646011428101, 0.5, 0.827326835353988571899, 1.0},
         {1.0 / 20.0, 49.0 / 180.0, 16.0 / 45.0, 49.0 / 180.0, 1.0 / 20.0}},
     0, &sym_galerkin_ops, 6.054049612981},
    {"lobatto6",
     "6-node Lobatto variational integrator (quintic interpolation, Lobatto "
     "quadrature); symplectic, symmetric, order 10; Newton on 5n unknowns.",
     10, 1, 4,
     &(const sym_galerkin_table){
         6, 6,
         {0.0, 0.117472338035267653574, 0.357384241759677451843, 0.642615758240322548157,
          0.882527661964732346426, 1.0},
         {0.0, 0.117472338035267653574, 0.357384241759677451843, 0.642615758240322548157,
          0.882527661964732346426, 1.0},
         {1.0 / 30.0, 0.189237478148923490158, 0.277429188517743176508,
          0.277429188517743176508, 0.189237478148923490158, 1.0 / 30.0}},
     0, &sym_galerkin_ops, STAB_LOBATTO6},
    {"lobatto7",
     "7-node Lobatto variational integrator (sextic interpolation, Lobatto "
     "quadrature); symplectic, symmetric, order 12; Newton on 6n unknowns.",
     12, 1, 5,
     &(const sym_galerkin_table){
         7, 7,
         {0.0, 0.0848880518607165350636, 0.265575603264642893098, 0.5,
          0.734424396735357106902, 0.915111948139283464936, 1.0},
         {0.0, 0.0848880518607165350636, 0.265575603264642893098, 0.5,
          0.734424396735357106902, 0.915111948139283464936, 1.0},
         {1.0 / 42.0, 0.138413023680782974005, 0.215872690604931311709, 128.0 / 525.0,
          0.215872690604931311709, 0.138413023680782974005, 1.0 / 42.0}},
     0, &sym_galerkin_ops, STAB_LOBATTO7},
    {"gauss2",
     "Gauss-Legendre variational integrator, 2 points (quadratic interpolation, "
     "2-point Gauss quadrature of the action: the 2-stage Gauss collocation "
     "method); symplectic, symmetric, order 4, A-stable on linear systems; "
     "Newton on 2n unknowns.",
     4, 1, 1,
     &(const sym_galerkin_table){3, 2, {0.0, 0.5, 1.0},
                                 {0.211324865405187117745, 0.788675134594812882255},
                                 {0.5, 0.5}},
     0, &sym_galerkin_ops, HUGE_VAL},
    {"gauss3",
     "Gauss-Legendre variational integrator, 3 points (cubic interpolation, "
     "3-point Gauss quadrature of the action: the 3-stage Gauss collocation "
     "method); symplectic, symmetric, order 6, A-stable on linear systems; "
     "Newton on 3n unknowns.",
     6, 1, 2,
     &(const sym_galerkin_table){4, 3,
                                 {0.0, 0.276393202250021030359, 0.723606797749978969641, 1.0},
                                 {0.112701665379258311482, 0.5, 0.887298334620741688518},
                                 {5.0 / 18.0, 4.0 / 9.0, 5.0 / 18.0}},
     0, &sym_galerkin_ops, HUGE_VAL},
};

/* sym_method_count, sym_method_at, sym_method_find */
SYM_ROW_ACCESS(sym_method, registry, sym_method)

int sym_method_nodes(const sym_method *m, double *c)
{
    if (!m->table) {
        c[0] = 0.0;
        c[1] = 1.0;
        return 2;
    }
    for (int a = 0; a < m->table->s; a++) c[a] = m->table->c[a];
    return m->table->s;
}

int sym_method_unknowns(const sym_method *m, int n)
{
    return m->ops->unknowns ? m->ops->unknowns(m, n) : 0;
}

int sym_method_constrained(const sym_method *m)
{
    return m->ops->constraint_size != NULL;
}

int sym_method_newton_blocks(const sym_method *m, double *re, double *im)
{
    return m->ops->newton_blocks ? m->ops->newton_blocks(m, re, im) : 0;
}

/* The scheme's state and arrays plus the evaluation scratch of a system
 * without scratch of its own (n^2 + 4 n). */
double sym_method_work_doubles(const sym_method *m, int n)
{
    double d = 0.0;
    (void)m->ops->work_size(m, n, &d);
    const double dn = (double)n;
    return d + (double)m->ops->state_size / sizeof(double) + dn * dn + 4.0 * dn;
}
