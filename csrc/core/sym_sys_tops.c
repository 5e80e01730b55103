/*
 * sym_sys_tops.c -- the heavy symmetric (Lagrange) top in two charts:
 * ZXZ Euler angles and a unit quaternion (built-in systems, defined through
 * sym_sysdef.h).
 */
#include "sym_sysdef.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* lagrange_top (TOP Section 4.1): ZXZ Euler angles q = (phi, theta,  */
/* psi); params m, I, I3, l, g.                                        */
/*   M = [[I s^2 + I3 c^2, 0, I3 c], [0, I, 0], [I3 c, 0, I3]],        */
/*   V = m g l cos(theta)   (s, c = sin, cos theta).                    */
/* Only theta enters M and V, so phi and psi are cyclic:                */
/*   A[0][1] = 2 (I - I3) s c g0 - I3 s g2,  A[2][1] = -I3 s g0,          */
/*   H[1][1] = (I - I3)(c^2 - s^2) g0^2 - I3 c g0 g2, all else zero.     */
/*                                                                      */
/* The chart's singularity.  det M = I^2 I3 sin^2(theta): at theta = 0   */
/* or pi phi and psi are not defined, and near it phidot =              */
/* (p_phi - p_psi cos) / (I sin^2) sweeps phi through about pi while the */
/* axis passes the vertical, and the error constant of a step grows     */
/* fast once the axis passes within a few mrad of it, with no failure    */
/* reported.  So every evaluation refuses |sin theta| < TOP_MIN_SIN =    */
/* 0.01 with SYM_ECHART (a chart without this singularity:               */
/* lagrange_top_quaternion, below): at the onset of that growth and well */
/* below the closest approach of the papers' runs; measured in           */
/* benchmarks/NOTES.md section 7 (the runs: RESULTS.md section 17).      */
/* This check sees only the evaluated points: steps whose nodes straddle */
/* the disc pass it.  The Python package (symplectic/_model/_topchart.py) also  */
/* refuses before the first step any motion whose exact nutation range   */
/* (E, p_phi, p_psi conserved; the turning points are roots of the cubic */
/* udot^2 = f(u), u = cos theta) reaches |sin theta| < TOP_MIN_SIN.       */
/* ------------------------------------------------------------------ */
typedef struct { double I, I3, mgl; } top_par;

#define TOP_MIN_SIN SYM_TOP_MIN_SIN   /* 0.01 (sym_builtins.h; also the Python pre-run check's) */

static void top_prep(const double *q, double *c, void *params)
{
    (void)params;
    c[0] = sin(q[1]);
    c[1] = cos(q[1]);
}

static int top_eval_prep(const double *sc, const double *g, unsigned need,
                         const sym_eval_out *o, void *params)
{
    const top_par *P = params;
    const double s = sc[0], c = sc[1];
    if (fabs(s) < TOP_MIN_SIN) return SYM_ECHART;   /* (a nan passes: checked downstream) */
    if (need & SYM_NEED_M) {
        double *M = o->M;
        M[0] = P->I * s * s + P->I3 * c * c;
        M[1] = 0.0;
        M[2] = P->I3 * c;
        M[3] = 0.0;
        M[4] = P->I;
        M[5] = 0.0;
        M[6] = P->I3 * c;
        M[7] = 0.0;
        M[8] = P->I3;
    }
    if (need & SYM_NEED_A) {
        sym_zero(o->A, 9);
        o->A[1] = 2.0 * (P->I - P->I3) * s * c * g[0] - P->I3 * s * g[2];
        o->A[7] = -P->I3 * s * g[0];
    }
    if (need & SYM_NEED_H) {
        sym_zero(o->H, 9);
        o->H[4] = (P->I - P->I3) * (c * c - s * s) * g[0] * g[0] - P->I3 * c * g[0] * g[2];
    }
    if (need & SYM_NEED_V) o->V[0] = P->mgl * c;
    if (need & SYM_NEED_DV) {
        o->dV[0] = 0.0;
        o->dV[1] = -P->mgl * s;
        o->dV[2] = 0.0;
    }
    if (need & SYM_NEED_D2V) {
        sym_zero(o->d2V, 9);
        o->d2V[4] = -P->mgl * c;
    }
    return 0;
}

SYM_EVAL_FROM_PREP(top_eval, top_prep, top_eval_prep, 2)

static int top_fill(int n, const double *par, void *params)
{
    top_par *P = params;
    const double m = par[0], I = par[1], I3 = par[2], l = par[3], g = par[4];
    (void)n;
    P->I = I;
    P->I3 = I3;
    P->mgl = m * g * l;
    return SYM_OK;
}

/* n = 3; m, I, I3 > 0 */
SYM_BUILTIN_MAKE(sym_sys_lagrange_top,
                 .n_min = 3, .n_max = 3, .npar = 5, .npos = 3,
                 .bytes = sizeof(top_par), .fill = top_fill,
                 .eval = top_eval, .prep = top_prep, .eval_prep = top_eval_prep, .prep_size = 2)

/* ------------------------------------------------------------------ */
/* lagrange_top_quaternion: the same top in a unit quaternion          */
/* Q = (q0, q1, q2, q3) (scalar first, Hamilton product), the rotation  */
/* body -> space x_s = Q x_b Q*, R(Q) = (ZXZ) Rz(phi) Rx(theta) Rz(psi). */
/* params m, I, I3, l, g.                                               */
/*                                                                      */
/* Body angular velocity w = 2 E(Q) Qdot, E(Q) the 3x4 matrix of the   */
/* vector part of Q* Qdot:                                              */
/*   E = [[-q1,  q0,  q3, -q2],                                          */
/*        [-q2, -q3,  q0,  q1],                                          */
/*        [-q3,  q2, -q1,  q0]],   E Q = 0,  E E^T = |Q|^2 Id3.           */
/* Its kinetic energy 1/2 w^T J w = 2 Qdot^T E^T J E Qdot, J = diag(I,  */
/* I, I3), is singular along Q (E Q = 0), so the Lagrangian adds a term */
/* that vanishes on the constraint manifold |Q|^2 = 1 (where Q.Qdot = 0):*/
/*   T = 1/2 Qdot^T M(Q) Qdot,  M(Q) = 4 E^T J E + c Q Q^T,  c = 4 I.     */
/* With E^T E + Q Q^T = |Q|^2 Id4 and e(Q) = E^T e3 = (-q3, q2, -q1, q0)  */
/* (the third row of E, e = S Q with S constant and antisymmetric):      */
/*   M(Q) = 4 I |Q|^2 Id4 - 4 (I - I3) e e^T,                             */
/* eigenvalues 4 I |Q|^2 (three times, along Q and the two transverse   */
/* body axes) and 4 I3 |Q|^2 (along e).  Any c > 0 gives the same motion */
/* on the manifold; c in [4 I3, 4 I] keeps cond M = I / I3, the body's   */
/* own (an outside c makes it c / (4 I3) or 4 I / c), and c = 4 I makes  */
/* M a rank-one update of a multiple of Id4, so A and H below are a few  */
/* vector operations.  With f = S^T g = (g3, -g2, g1, -g0), e.g = Q.f:    */
/*   1/2 g^T M g = 2 I |Q|^2 |g|^2 - 2 (I - I3) (Q.f)^2,                   */
/*   A = d(M g)/dQ = 8 I g Q^T - 4 (I - I3) [(Q.f) S + e f^T],              */
/*   H = 4 I |g|^2 Id4 - 4 (I - I3) f f^T.                                 */
/* V = m g l (axis z-component), the axis R(Q) e3 being                  */
/*   (2 (q1 q3 + q0 q2), 2 (q2 q3 - q0 q1), q0^2 - q1^2 - q2^2 + q3^2)     */
/* (homogeneous quadratic in Q; equal to m g l cos(theta) on |Q| = 1):   */
/*   V = m g l (q0^2 - q1^2 - q2^2 + q3^2),                                */
/*   grad V = 2 m g l (q0, -q1, -q2, q3),  hess V = 2 m g l diag(1, -1, -1, 1). */
/*                                                                      */
/*                                                                      */
/* The constraint (m = 1; symplectic.h: holonomic constraints):          */
/*   g(Q) = |Q|^2 - 1,   G(Q) = 2 Q^T,   S(Q, mu) = 2 mu Id4.              */
/* The constraint force -G^T lambda = -2 lambda Q is radial in R^4.      */
/* What the added term does on the manifold.  Write L = L_rb + L_c,     */
/* L_c = (c/2) (Q.Qdot)^2.  Along any curve on |Q| = 1, Q.Qdot = 0, so:  */
/*  - L_c = 0 and dL_c/dQdot = c (Q.Qdot) Q = 0: the energy and the      */
/*    Legendre map P = M Qdot on tangent velocities are those of L_rb    */
/*    alone (P = 4 E^T J E Qdot = 2 E^T J w);                            */
/*  - its Euler-Lagrange term d/dt(c (Q.Qdot) Q) - c (Q.Qdot) Qdot =     */
/*    c (d/dt(Q.Qdot)) Q vanishes too (Q.Qdot = 0 for all t, so its      */
/*    derivative is 0): the constrained motion and the multiplier are    */
/*    those of the rigid body, for every c.                              */
/*  - The hidden constraint G M^-1 P = 0: M Q = c |Q|^2 Q (E Q = 0), so   */
/*    M^-1 Q = Q / (c |Q|^2) and G M^-1 P = 2 Q.P / (c |Q|^2): it is      */
/*    Q.P = 0, P orthogonal to Q in R^4, for every c > 0 (c = 4 I here). */
/* What c changes is only the discrete scheme off the exact solution    */
/* (interior Lobatto nodes satisfy g = 0, but the polynomial's Qdot      */
/* there is not exactly tangent): an O(h^order) effect, and the         */
/* conditioning of M and of the Newton system (above).                   */
/* The symmetries: left multiplication by a rotation about the space    */
/* vertical (phi) and right multiplication by one about the body axis   */
/* (psi) leave M (w is invariant under the first; J under the second),   */
/* V (the axis' z-component) and g invariant, so the variational schemes */
/* conserve their momentum maps p_phi = P.(k Q)/2 and p_psi = P.(Q k)/2  */
/* (k = (0, 0, 0, 1), Hamilton products) to rounding; the constraint     */
/* force is orthogonal to both generators (Q.(k Q) = Q.(Q k) = 0).       */
/* ------------------------------------------------------------------ */
typedef struct { double a, b, mgl; } qtop_par;   /* a = 4 I, b = 4 (I - I3) */

static int qtop_eval(const double *q, const double *g, unsigned need,
                     const sym_eval_out *o, void *params, double *scratch)
{
    const qtop_par *P = params;
    (void)scratch;
    const double e[4] = {-q[3], q[2], -q[1], q[0]};   /* e = S Q */
    const double qq = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (need & SYM_NEED_M) {
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                o->M[4 * i + j] = (i == j ? P->a * qq : 0.0) - P->b * e[i] * e[j];
    }
    if (need & (SYM_NEED_A | SYM_NEED_H)) {
        const double f[4] = {g[3], -g[2], g[1], -g[0]};   /* f = S^T g */
        if (need & SYM_NEED_A) {
            /* A = 2 a g Q^T - b [(Q.f) S + e f^T];  S has S[0][3] = -1,
             * S[1][2] = 1, S[2][1] = -1, S[3][0] = 1 */
            const double qf = q[0] * f[0] + q[1] * f[1] + q[2] * f[2] + q[3] * f[3];
            double *A = o->A;
            for (int i = 0; i < 4; i++)
                for (int c = 0; c < 4; c++)
                    A[4 * i + c] = 2.0 * P->a * g[i] * q[c] - P->b * e[i] * f[c];
            A[3] += P->b * qf;
            A[6] -= P->b * qf;
            A[9] += P->b * qf;
            A[12] -= P->b * qf;
        }
        if (need & SYM_NEED_H) {
            const double gg = g[0] * g[0] + g[1] * g[1] + g[2] * g[2] + g[3] * g[3];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++)
                    o->H[4 * i + j] = (i == j ? P->a * gg : 0.0) - P->b * f[i] * f[j];
        }
    }
    if (need & SYM_NEED_V)
        o->V[0] = P->mgl * (q[0] * q[0] - q[1] * q[1] - q[2] * q[2] + q[3] * q[3]);
    if (need & SYM_NEED_DV) {
        const double k = 2.0 * P->mgl;
        o->dV[0] = k * q[0];
        o->dV[1] = -k * q[1];
        o->dV[2] = -k * q[2];
        o->dV[3] = k * q[3];
    }
    if (need & SYM_NEED_D2V) {
        const double k = 2.0 * P->mgl;
        sym_zero(o->d2V, 16);
        o->d2V[0] = k;
        o->d2V[5] = -k;
        o->d2V[10] = -k;
        o->d2V[15] = k;
    }
    return 0;
}

/* g = |Q|^2 - 1, G = 2 Q^T, S = 2 mu Id4 (above) */
static int qtop_constraint(const double *q, const double *mu, unsigned need,
                           const sym_constraint_out *o, void *params)
{
    (void)params;
    if (need & SYM_CNEED_G)
        o->g[0] = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - 1.0;
    if (need & SYM_CNEED_JAC)
        for (int i = 0; i < 4; i++) o->G[i] = 2.0 * q[i];
    if (need & SYM_CNEED_HESS) sym_scaled_identity(o->S, 4, 2.0 * mu[0]);
    return 0;
}

static int qtop_fill(int n, const double *par, void *params)
{
    qtop_par *P = params;
    const double m = par[0], I = par[1], I3 = par[2], l = par[3], g = par[4];
    (void)n;
    P->a = 4.0 * I;
    P->b = 4.0 * (I - I3);
    P->mgl = m * g * l;
    return SYM_OK;
}

/* n = 4; m, I, I3 > 0; one constraint */
SYM_BUILTIN_MAKE(sym_sys_lagrange_top_quaternion,
                 .n_min = 4, .n_max = 4, .npar = 5, .npos = 3,
                 .bytes = sizeof(qtop_par), .fill = qtop_fill, .eval = qtop_eval,
                 .m = 1, .constraint = qtop_constraint, .flags = SYM_SYS_CONSTRAINT_HESS)
