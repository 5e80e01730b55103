/*
 * sym_systems.c -- built-in systems with analytic, velocity-contracted
 * derivatives (see symplectic.h for A and H).  Each is a single combined
 * `eval` callback so that sines and cosines are shared between M, A, H, V
 * and their derivatives.  Parameters are read-only during integration, so
 * one system may be integrated by several threads at once.
 */
#include "symplectic.h"
#include "sym_util.h"
#include "sym_sincos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int all_finite(const double *x, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static void zero(double *x, size_t k)
{
    memset(x, 0, sizeof(double) * k);
}

/* ------------------------------------------------------------------ */
/* pendulum: L = 1/2 m qdot^2 - m w^2 (1 - cos q)   (FVCA eq. (1))     */
/* params: m, omega                                                   */
/* ------------------------------------------------------------------ */
typedef struct { double m, w2; } pendulum_par;

static int pendulum_eval(const double *q, const double *g, unsigned need,
                         const sym_eval_out *o, void *params, double *scratch)
{
    const pendulum_par *P = params;
    (void)g; (void)scratch;
    if (need & SYM_NEED_M) o->M[0] = P->m;
    if (need & SYM_NEED_A) o->A[0] = 0.0;
    if (need & SYM_NEED_H) o->H[0] = 0.0;
    if (need & (SYM_NEED_V | SYM_NEED_D2V)) {
        const double c = cos(q[0]);
        if (need & SYM_NEED_V) o->V[0] = P->m * P->w2 * (1.0 - c);
        if (need & SYM_NEED_D2V) o->d2V[0] = P->m * P->w2 * c;
    }
    if (need & SYM_NEED_DV) o->dV[0] = P->m * P->w2 * sin(q[0]);
    return 0;
}

static int pendulum_make(int n, const double *par, size_t npar, sym_system *out)
{
    if (n != 1 || npar != 2 || !all_finite(par, 2) || !(par[0] > 0.0))
        return SYM_ESYSTEM;
    pendulum_par *P = malloc(sizeof(*P));
    if (!P) return SYM_ENOMEM;
    P->m = par[0];
    P->w2 = par[1] * par[1];
    out->n = 1;
    out->params = P;
    out->eval = pendulum_eval;
    out->flags = SYM_SYS_CONSTANT_MASS;
    return SYM_OK;
}

/* ------------------------------------------------------------------ */
/* linear: L = 1/2 qdot^T M qdot - 1/2 q^T K q, constant M (SPD), K   */
/* params: M (n*n, row-major), K (n*n)                                 */
/* ------------------------------------------------------------------ */
typedef struct { int n; double *M, *K; } linear_par;

static int linear_eval(const double *q, const double *g, unsigned need,
                       const sym_eval_out *o, void *params, double *scratch)
{
    const linear_par *P = params;
    const int n = P->n;
    const size_t nn = (size_t)n * (size_t)n;
    (void)g; (void)scratch;
    if (need & SYM_NEED_M) memcpy(o->M, P->M, sizeof(double) * nn);
    if (need & SYM_NEED_A) zero(o->A, nn);
    if (need & SYM_NEED_H) zero(o->H, nn);
    if (need & SYM_NEED_D2V) memcpy(o->d2V, P->K, sizeof(double) * nn);
    if (need & (SYM_NEED_V | SYM_NEED_DV)) {
        double v = 0.0;
        for (int i = 0; i < n; i++) {
            double s = 0.0;
            for (int j = 0; j < n; j++) s += P->K[i * n + j] * q[j];
            if (need & SYM_NEED_DV) o->dV[i] = s;
            v += q[i] * s;
        }
        if (need & SYM_NEED_V) o->V[0] = 0.5 * v;
    }
    return 0;
}

static int linear_make(int n, const double *par, size_t npar, sym_system *out)
{
    if (n < 1 || n > SYM_MAX_DOF) return SYM_ESYSTEM;
    const size_t nn = (size_t)n * (size_t)n;
    if (npar != 2 * nn || !all_finite(par, 2 * nn)) return SYM_ESYSTEM;
    if (!sym_symmetric(n, par, NULL, NULL) || !sym_symmetric(n, par + nn, NULL, NULL))
        return SYM_ESYSTEM;
    linear_par *P = malloc(sizeof(*P) + 3 * nn * sizeof(double));
    if (!P) return SYM_ENOMEM;
    P->n = n;
    P->M = (double *)(P + 1);
    P->K = P->M + nn;
    memcpy(P->M, par, sizeof(double) * 2 * nn);
    double *L = P->K + nn;   /* Cholesky check of M */
    memcpy(L, P->M, sizeof(double) * nn);
    if (sym_cholesky(n, L)) { free(P); return SYM_EMASS; }
    out->n = n;
    out->params = P;
    out->eval = linear_eval;
    out->flags = SYM_SYS_CONSTANT_MASS;
    return SYM_OK;
}

/* ------------------------------------------------------------------ */
/* double_pendulum (TOP Section 3.1): absolute angles from the downward */
/* vertical; params m1, m2, l1, l2, g.                                  */
/*   M = [[(m1+m2) l1^2, k c12], [k c12, m2 l2^2]],  k = m2 l1 l2,      */
/*   V = -(m1+m2) g l1 cos q1 - m2 g l2 cos q2.                          */
/* With 1/2 g^T M g = const + k cos(q1-q2) g1 g2:                        */
/*   A = k s12 [[-g2, g2], [-g1, g1]],  H = k c12 g1 g2 [[-1, 1], [1, -1]] */
/* ------------------------------------------------------------------ */
typedef struct { double m11, m22, k, v1, v2; } dp_par;

/* sin, cos of q1, q2 and of q1 - q2 (by the difference formulas) */
enum { DP_S1, DP_C1, DP_S2, DP_C2, DP_S12, DP_C12, DP_PREP };

static void dp_prep(const double *q, double *c, void *params)
{
    (void)params;
    double sn[2], cs[2];
    sym_sincos_n(2, q, sn, cs);
    const double s1 = sn[0], c1 = cs[0], s2 = sn[1], c2 = cs[1];
    c[DP_S1] = s1;
    c[DP_C1] = c1;
    c[DP_S2] = s2;
    c[DP_C2] = c2;
    c[DP_S12] = s1 * c2 - c1 * s2;
    c[DP_C12] = c1 * c2 + s1 * s2;
}

static int dp_eval_prep(const double *c, const double *g, unsigned need,
                        const sym_eval_out *o, void *params)
{
    const dp_par *P = params;
    if (need & SYM_NEED_M) {
        o->M[0] = P->m11;
        o->M[1] = o->M[2] = P->k * c[DP_C12];
        o->M[3] = P->m22;
    }
    if (need & SYM_NEED_A) {
        const double a = P->k * c[DP_S12];
        o->A[0] = -a * g[1];
        o->A[1] = a * g[1];
        o->A[2] = -a * g[0];
        o->A[3] = a * g[0];
    }
    if (need & SYM_NEED_H) {
        const double h = P->k * c[DP_C12] * g[0] * g[1];
        o->H[0] = -h;
        o->H[1] = o->H[2] = h;
        o->H[3] = -h;
    }
    if (need & SYM_NEED_V) o->V[0] = -P->v1 * c[DP_C1] - P->v2 * c[DP_C2];
    if (need & SYM_NEED_DV) {
        o->dV[0] = P->v1 * c[DP_S1];
        o->dV[1] = P->v2 * c[DP_S2];
    }
    if (need & SYM_NEED_D2V) {
        o->d2V[0] = P->v1 * c[DP_C1];
        o->d2V[1] = o->d2V[2] = 0.0;
        o->d2V[3] = P->v2 * c[DP_C2];
    }
    return 0;
}

static int dp_eval(const double *q, const double *g, unsigned need,
                   const sym_eval_out *o, void *params, double *scratch)
{
    double c[DP_PREP];
    (void)scratch;
    dp_prep(q, c, params);
    return dp_eval_prep(c, g, need, o, params);
}

static int dp_make(int n, const double *par, size_t npar, sym_system *out)
{
    if (n != 2 || npar != 5 || !all_finite(par, 5)) return SYM_ESYSTEM;
    const double m1 = par[0], m2 = par[1], l1 = par[2], l2 = par[3], g = par[4];
    if (!(m1 > 0.0) || !(m2 > 0.0) || !(l1 > 0.0) || !(l2 > 0.0)) return SYM_ESYSTEM;
    dp_par *P = malloc(sizeof(*P));
    if (!P) return SYM_ENOMEM;
    P->m11 = (m1 + m2) * l1 * l1;
    P->m22 = m2 * l2 * l2;
    P->k = m2 * l1 * l2;
    P->v1 = (m1 + m2) * g * l1;
    P->v2 = m2 * g * l2;
    out->n = 2;
    out->params = P;
    out->eval = dp_eval;
    out->prep = dp_prep;
    out->eval_prep = dp_eval_prep;
    out->prep_size = DP_PREP;
    return SYM_OK;
}

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
/* axis passes the vertical.  Measured on the TOP Table 3 top (p_psi of  */
/* Table 3, thetadot = 0 at theta = pi/3, p_phi tuned so that the axis   */
/* passes theta_min from the vertical; benchmarks/RESULTS_top_forms.md): */
/* Simpson's axis error after three nutation periods at h = 0.01 is      */
/* 4.4e-5 for theta_min = 20 and 10 mrad, 1.0e-4 at 5, 4.9e-3 at 2,       */
/* 5.2e-2 at 1, 1.2 at 0.2 mrad, with no failure reported (Newton fails  */
/* only at some h).  Relative to the 20 mrad motion the error is 1 at 10 */
/* mrad for h = 0.05 ... 0.005 (1.6 at h = 0.001), 1.6 ... 4 at 5 mrad,   */
/* 16 ... 110 at 2 mrad: the error constant starts growing between 10    */
/* and 5 mrad, then about like 1/theta_min^3..4.  So every evaluation    */
/* refuses |sin theta| < TOP_MIN_SIN = 0.01 with SYM_ECHART, whose        */
/* message points to lagrange_top_quaternion: at the onset of the growth, */
/* and 4.6x below the closest approach of any evaluation on the papers'  */
/* runs (|sin theta| >= 0.046: Table 3 at h = t/40 and 0.05, midpoint,    */
/* Simpson and RK4, Newton iterates and stages included).                */
/* This check sees only the evaluated points: steps whose nodes straddle */
/* the disc pass it.  The Python package (symplectic/_topchart.py) also  */
/* refuses before the first step any motion whose exact nutation range   */
/* (E, p_phi, p_psi conserved; the turning points are roots of the cubic */
/* udot^2 = f(u), u = cos theta) reaches |sin theta| < TOP_MIN_SIN.       */
/* ------------------------------------------------------------------ */
typedef struct { double I, I3, mgl; } top_par;

#define TOP_MIN_SIN SYM_TOP_MIN_SIN   /* 0.01 (symplectic.h; shared with the Python pre-run check) */

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
        zero(o->A, 9);
        o->A[1] = 2.0 * (P->I - P->I3) * s * c * g[0] - P->I3 * s * g[2];
        o->A[7] = -P->I3 * s * g[0];
    }
    if (need & SYM_NEED_H) {
        zero(o->H, 9);
        o->H[4] = (P->I - P->I3) * (c * c - s * s) * g[0] * g[0] - P->I3 * c * g[0] * g[2];
    }
    if (need & SYM_NEED_V) o->V[0] = P->mgl * c;
    if (need & SYM_NEED_DV) {
        o->dV[0] = 0.0;
        o->dV[1] = -P->mgl * s;
        o->dV[2] = 0.0;
    }
    if (need & SYM_NEED_D2V) {
        zero(o->d2V, 9);
        o->d2V[4] = -P->mgl * c;
    }
    return 0;
}

static int top_eval(const double *q, const double *g, unsigned need,
                    const sym_eval_out *o, void *params, double *scratch)
{
    double sc[2];
    (void)scratch;
    top_prep(q, sc, params);
    return top_eval_prep(sc, g, need, o, params);
}

static int top_make(int n, const double *par, size_t npar, sym_system *out)
{
    if (n != 3 || npar != 5 || !all_finite(par, 5)) return SYM_ESYSTEM;
    const double m = par[0], I = par[1], I3 = par[2], l = par[3], g = par[4];
    if (!(m > 0.0) || !(I > 0.0) || !(I3 > 0.0)) return SYM_ESYSTEM;
    top_par *P = malloc(sizeof(*P));
    if (!P) return SYM_ENOMEM;
    P->I = I;
    P->I3 = I3;
    P->mgl = m * g * l;
    out->n = 3;
    out->params = P;
    out->eval = top_eval;
    out->prep = top_prep;
    out->eval_prep = top_eval_prep;
    out->prep_size = 2;
    return SYM_OK;
}

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
        zero(o->d2V, 16);
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
    if (need & SYM_CNEED_HESS) {
        zero(o->S, 16);
        for (int i = 0; i < 4; i++) o->S[5 * i] = 2.0 * mu[0];
    }
    return 0;
}

static int qtop_make(int n, const double *par, size_t npar, sym_system *out)
{
    if (n != 4 || npar != 5 || !all_finite(par, 5)) return SYM_ESYSTEM;
    const double m = par[0], I = par[1], I3 = par[2], l = par[3], g = par[4];
    if (!(m > 0.0) || !(I > 0.0) || !(I3 > 0.0)) return SYM_ESYSTEM;
    qtop_par *P = malloc(sizeof(*P));
    if (!P) return SYM_ENOMEM;
    P->a = 4.0 * I;
    P->b = 4.0 * (I - I3);
    P->mgl = m * g * l;
    out->n = 4;
    out->params = P;
    out->eval = qtop_eval;
    out->flags = SYM_SYS_CONSTRAINT_HESS;
    out->m = 1;
    out->constraint = qtop_constraint;
    out->constraint_params = P;
    return SYM_OK;
}

/* ------------------------------------------------------------------ */
/* pendulum_chain: planar chain of n point masses m_i on massless rods */
/* l_i, absolute angles q_i from the downward vertical.  With          */
/* mu_i = sum_{k >= i} m_k (mass hanging from link i):                  */
/*   M_ij = l_i l_j mu_max(i,j) cos(q_i - q_j),                          */
/*   V = -g sum_i mu_i l_i cos q_i.                                      */
/* With C_ij = l_i l_j mu_max(i,j) and s_ij, c_ij = sin, cos(q_i - q_j):  */
/*   A_ic = l_i l_c mu_ic s_ic g_c - delta_ic sum_j C_ij s_ij g_j,          */
/*   H_cd = C_cd g_c g_d c_cd - delta_cd sum_j C_cj g_c g_j c_cj.             */
/* O(n) sines and cosines (angle-difference formulas), O(n^2) work.      */
/* params: m (n values), l (n values), g                                 */
/* ------------------------------------------------------------------ */
typedef struct { int n; double g; double *l, *mu, *C; } chain_par;

/* y_k = a x_k z_k (w_k), in pairs for the SLP vectoriser */
static void chain_row(int n, double a, const double *restrict x, const double *restrict z,
                      const double *restrict w, double *restrict y)
{
    int k = 0;
    if (w) {
        for (; k + 1 < n; k += 2) {
            y[k] = a * x[k] * z[k] * w[k];
            y[k + 1] = a * x[k + 1] * z[k + 1] * w[k + 1];
        }
        for (; k < n; k++) y[k] = a * x[k] * z[k] * w[k];
    } else {
        for (; k + 1 < n; k += 2) {
            y[k] = a * x[k] * z[k];
            y[k + 1] = a * x[k + 1] * z[k + 1];
        }
        for (; k < n; k++) y[k] = a * x[k] * z[k];
    }
}

/* scratch: sin, cos of each angle (2n) and of each difference (2 n^2) */
static int chain_eval(const double *q, const double *g, unsigned need,
                      const sym_eval_out *o, void *params, double *scratch)
{
    const chain_par *P = params;
    const int n = P->n;
    const double *C = P->C;
    double *sn = scratch, *cs = scratch + n, *S = cs + n, *Cc = S + (size_t)n * n;
    sym_sincos_n(n, q, sn, cs);
    if (need & (SYM_NEED_M | SYM_NEED_A | SYM_NEED_H)) {
        /* s_ij = sin(q_i - q_j) (antisymmetric), c_ij = cos(q_i - q_j) */
        for (int i = 0; i < n; i++) {
            S[(size_t)i * n + i] = 0.0;
            Cc[(size_t)i * n + i] = 1.0;
            for (int j = i + 1; j < n; j++) {
                const double sij = sn[i] * cs[j] - cs[i] * sn[j];
                const double cij = cs[i] * cs[j] + sn[i] * sn[j];
                S[(size_t)i * n + j] = sij;
                S[(size_t)j * n + i] = -sij;
                Cc[(size_t)i * n + j] = Cc[(size_t)j * n + i] = cij;
            }
        }
    }
    if (need & SYM_NEED_M)
        for (int i = 0; i < n; i++)
            chain_row(n, 1.0, C + (size_t)i * n, Cc + (size_t)i * n, NULL, o->M + (size_t)i * n);
    if (need & SYM_NEED_A) {
        /* A_ic = C_ic s_ic g_c (c != i), A_ii = -sum_c C_ic s_ic g_c */
        for (int i = 0; i < n; i++) {
            double *Ai = o->A + (size_t)i * n;
            chain_row(n, 1.0, C + (size_t)i * n, S + (size_t)i * n, g, Ai);
            double diag = 0.0;
            for (int c = 0; c < n; c++) diag -= Ai[c];
            Ai[i] = diag;   /* the c = i term is zero (s_ii = 0) */
        }
    }
    if (need & SYM_NEED_H) {
        /* H_cd = C_cd g_c g_d c_cd (d != c), H_cc = -sum_{d != c} H_cd */
        for (int c = 0; c < n; c++) {
            double *Hc = o->H + (size_t)c * n;
            chain_row(n, g[c], C + (size_t)c * n, Cc + (size_t)c * n, g, Hc);
            double diag = 0.0;
            for (int d = 0; d < n; d++) diag -= Hc[d];
            Hc[c] = diag + Hc[c];   /* remove the d = c term */
        }
    }
    if (need & SYM_NEED_V) {
        double v = 0.0;
        for (int i = 0; i < n; i++) v -= P->g * P->mu[i] * P->l[i] * cs[i];
        o->V[0] = v;
    }
    if (need & SYM_NEED_DV)
        for (int i = 0; i < n; i++) o->dV[i] = P->g * P->mu[i] * P->l[i] * sn[i];
    if (need & SYM_NEED_D2V) {
        zero(o->d2V, (size_t)n * (size_t)n);
        for (int i = 0; i < n; i++) o->d2V[i * n + i] = P->g * P->mu[i] * P->l[i] * cs[i];
    }
    return 0;
}

static int chain_make(int n, const double *par, size_t npar, sym_system *out)
{
    if (n < 1 || n > 4096) return SYM_ESYSTEM;
    if (npar != 2 * (size_t)n + 1 || !all_finite(par, npar)) return SYM_ESYSTEM;
    for (int i = 0; i < 2 * n; i++)
        if (!(par[i] > 0.0)) return SYM_ESYSTEM;
    const size_t nn = (size_t)n * (size_t)n;
    chain_par *P = malloc(sizeof(*P) + (2 * (size_t)n + nn) * sizeof(double));
    if (!P) return SYM_ENOMEM;
    P->n = n;
    P->l = (double *)(P + 1);
    P->mu = P->l + n;
    P->C = P->mu + n;
    for (int i = 0; i < n; i++) P->l[i] = par[n + i];
    double acc = 0.0;
    for (int i = n - 1; i >= 0; i--) { acc += par[i]; P->mu[i] = acc; }
    /* C_ij = l_i l_j mu_max(i,j) */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            P->C[(size_t)i * n + j] = P->l[i] * P->l[j] * P->mu[i > j ? i : j];
    P->g = par[2 * n];
    out->n = n;
    out->params = P;
    out->eval = chain_eval;
    out->scratch_size = 2 * (size_t)n + 2 * nn;
    return SYM_OK;
}

/* ------------------------------------------------------------------ */
/* Constrained built-ins (symplectic.h: holonomic constraints)           */
/* ------------------------------------------------------------------ */
/* pendulum_cartesian (n = 2) and spherical_pendulum_cartesian (n = 3): a */
/* point mass m on a massless rod of length l in Cartesian coordinates,    */
/* the last coordinate vertical (up), pivot at the origin:                 */
/*   M = m I,  V = m g q_{n-1},                                            */
/*   g(q) = 1/2 (|q|^2 - l^2)   (m = 1 constraint),                         */
/*   G = q^T,  S(q, mu) = mu I.                                            */
/* The constraint force is -G^T lambda = -lambda q: the rod's tension is    */
/* lambda l (pulling the mass towards the pivot when lambda > 0).           */
/* params: m, l, g                                                          */
/* ------------------------------------------------------------------ */
typedef struct { int n; double m, l2, mg; } cpend_par;

static int cpend_eval(const double *q, const double *g, unsigned need,
                      const sym_eval_out *o, void *params, double *scratch)
{
    const cpend_par *P = params;
    const int n = P->n;
    const size_t nn = (size_t)n * (size_t)n;
    (void)g; (void)scratch;
    if (need & SYM_NEED_M) {
        zero(o->M, nn);
        for (int i = 0; i < n; i++) o->M[i * n + i] = P->m;
    }
    if (need & SYM_NEED_A) zero(o->A, nn);
    if (need & SYM_NEED_H) zero(o->H, nn);
    if (need & SYM_NEED_V) o->V[0] = P->mg * q[n - 1];
    if (need & SYM_NEED_DV) {
        zero(o->dV, (size_t)n);
        o->dV[n - 1] = P->mg;
    }
    if (need & SYM_NEED_D2V) zero(o->d2V, nn);
    return 0;
}

static int cpend_constraint(const double *q, const double *mu, unsigned need,
                            const sym_constraint_out *o, void *params)
{
    const cpend_par *P = params;
    const int n = P->n;
    if (need & SYM_CNEED_G) {
        double r2 = 0.0;
        for (int i = 0; i < n; i++) r2 += q[i] * q[i];
        o->g[0] = 0.5 * (r2 - P->l2);
    }
    if (need & SYM_CNEED_JAC) memcpy(o->G, q, sizeof(double) * (size_t)n);
    if (need & SYM_CNEED_HESS) {
        zero(o->S, (size_t)n * (size_t)n);
        for (int i = 0; i < n; i++) o->S[i * n + i] = mu[0];
    }
    return 0;
}

static int cpend_make_n(int want, int n, const double *par, size_t npar, sym_system *out)
{
    if (n != want || npar != 3 || !all_finite(par, 3) || !(par[0] > 0.0) || !(par[1] > 0.0))
        return SYM_ESYSTEM;
    cpend_par *P = malloc(sizeof(*P));
    if (!P) return SYM_ENOMEM;
    P->n = n;
    P->m = par[0];
    P->l2 = par[1] * par[1];
    P->mg = par[0] * par[2];
    out->n = n;
    out->params = P;
    out->eval = cpend_eval;
    out->flags = SYM_SYS_CONSTANT_MASS | SYM_SYS_CONSTRAINT_HESS;
    out->m = 1;
    out->constraint = cpend_constraint;
    out->constraint_params = P;
    return SYM_OK;
}

static int cpend_make(int n, const double *par, size_t npar, sym_system *out)
{
    return cpend_make_n(2, n, par, npar, out);
}

static int spend_make(int n, const double *par, size_t npar, sym_system *out)
{
    return cpend_make_n(3, n, par, npar, out);
}

/* ------------------------------------------------------------------ */
/* four_bar: planar four-bar linkage of three uniform rods (crank l1,     */
/* coupler l2, rocker l3; masses m1, m2, m3) between ground pivots O =   */
/* (0, 0) and D = (d, 0), gravity g along -y; q = (theta1, theta2,        */
/* theta3), the absolute angles of crank OA, coupler AB and rocker DB     */
/* from the +x axis.  With c_i, s_i = cos, sin theta_i:                    */
/*   A = l1 (c1, s1),   B = A + l2 (c2, s2) = D + l3 (c3, s3),             */
/*   T = 1/2 (m1/3 + m2) l1^2 th1'^2 + 1/2 m2 l1 l2 c12 th1' th2'          */
/*       + 1/2 m2 l2^2/3 th2'^2 + 1/2 m3 l3^2/3 th3'^2   (c12 = cos(q1-q2)), */
/*   V = g [ (m1/2 + m2) l1 s1 + m2 l2/2 s2 + m3 l3/2 s3 ],                 */
/* and the loop closure (m = 2 constraints, one degree of freedom)         */
/*   g1 = l1 c1 + l2 c2 - l3 c3 - d,   g2 = l1 s1 + l2 s2 - l3 s3,          */
/*   G = [[-l1 s1, -l2 s2, l3 s3], [l1 c1, l2 c2, -l3 c3]],                 */
/*   S(q, mu) = diag(-l1 (mu1 c1 + mu2 s1), -l2 (mu1 c2 + mu2 s2),          */
/*                   l3 (mu1 c3 + mu2 s3)).                                  */
/* M has the double pendulum's structure in (theta1, theta2), k = 1/2 m2    */
/* l1 l2:  A = k s12 [[-g2, g2], [-g1, g1]],  H = k c12 g1 g2 [[-1, 1],      */
/* [1, -1]] (upper-left 2 x 2 blocks; zero elsewhere).  -G^T lambda is the  */
/* generalised force of the pin force lambda = (lambda1, lambda2) that the  */
/* rocker exerts on the coupler at B, in the -x, -y directions.             */
/* params: m1, m2, m3, l1, l2, l3, d, g                                     */
/* ------------------------------------------------------------------ */
typedef struct { double m11, m22, m33, k, v1, v2, v3, l1, l2, l3, d; } fourbar_par;

static int fourbar_eval(const double *q, const double *g, unsigned need,
                        const sym_eval_out *o, void *params, double *scratch)
{
    const fourbar_par *P = params;
    (void)scratch;
    double sn[3], cs[3];
    sym_sincos_n(3, q, sn, cs);
    const double s1 = sn[0], c1 = cs[0], s2 = sn[1], c2 = cs[1], s3 = sn[2], c3 = cs[2];
    const double s12 = s1 * c2 - c1 * s2, c12 = c1 * c2 + s1 * s2;
    if (need & SYM_NEED_M) {
        zero(o->M, 9);
        o->M[0] = P->m11;
        o->M[1] = o->M[3] = P->k * c12;
        o->M[4] = P->m22;
        o->M[8] = P->m33;
    }
    if (need & SYM_NEED_A) {
        const double a = P->k * s12;
        zero(o->A, 9);
        o->A[0] = -a * g[1];
        o->A[1] = a * g[1];
        o->A[3] = -a * g[0];
        o->A[4] = a * g[0];
    }
    if (need & SYM_NEED_H) {
        const double h = P->k * c12 * g[0] * g[1];
        zero(o->H, 9);
        o->H[0] = o->H[4] = -h;
        o->H[1] = o->H[3] = h;
    }
    if (need & SYM_NEED_V) o->V[0] = P->v1 * s1 + P->v2 * s2 + P->v3 * s3;
    if (need & SYM_NEED_DV) {
        o->dV[0] = P->v1 * c1;
        o->dV[1] = P->v2 * c2;
        o->dV[2] = P->v3 * c3;
    }
    if (need & SYM_NEED_D2V) {
        zero(o->d2V, 9);
        o->d2V[0] = -P->v1 * s1;
        o->d2V[4] = -P->v2 * s2;
        o->d2V[8] = -P->v3 * s3;
    }
    return 0;
}

static int fourbar_constraint(const double *q, const double *mu, unsigned need,
                              const sym_constraint_out *o, void *params)
{
    const fourbar_par *P = params;
    double sn[3], cs[3];
    sym_sincos_n(3, q, sn, cs);
    const double s1 = sn[0], c1 = cs[0], s2 = sn[1], c2 = cs[1], s3 = sn[2], c3 = cs[2];
    if (need & SYM_CNEED_G) {
        o->g[0] = P->l1 * c1 + P->l2 * c2 - P->l3 * c3 - P->d;
        o->g[1] = P->l1 * s1 + P->l2 * s2 - P->l3 * s3;
    }
    if (need & SYM_CNEED_JAC) {
        o->G[0] = -P->l1 * s1;
        o->G[1] = -P->l2 * s2;
        o->G[2] = P->l3 * s3;
        o->G[3] = P->l1 * c1;
        o->G[4] = P->l2 * c2;
        o->G[5] = -P->l3 * c3;
    }
    if (need & SYM_CNEED_HESS) {
        zero(o->S, 9);
        o->S[0] = -P->l1 * (mu[0] * c1 + mu[1] * s1);
        o->S[4] = -P->l2 * (mu[0] * c2 + mu[1] * s2);
        o->S[8] = P->l3 * (mu[0] * c3 + mu[1] * s3);
    }
    return 0;
}

static int fourbar_make(int n, const double *par, size_t npar, sym_system *out)
{
    if (n != 3 || npar != 8 || !all_finite(par, 8)) return SYM_ESYSTEM;
    for (int i = 0; i < 7; i++)
        if (!(par[i] > 0.0)) return SYM_ESYSTEM;
    const double m1 = par[0], m2 = par[1], m3 = par[2], l1 = par[3], l2 = par[4], l3 = par[5];
    const double g = par[7];
    fourbar_par *P = malloc(sizeof(*P));
    if (!P) return SYM_ENOMEM;
    P->m11 = (m1 / 3.0 + m2) * l1 * l1;
    P->m22 = m2 * l2 * l2 / 3.0;
    P->m33 = m3 * l3 * l3 / 3.0;
    P->k = 0.5 * m2 * l1 * l2;
    P->v1 = g * (0.5 * m1 + m2) * l1;
    P->v2 = g * 0.5 * m2 * l2;
    P->v3 = g * 0.5 * m3 * l3;
    P->l1 = l1;
    P->l2 = l2;
    P->l3 = l3;
    P->d = par[6];
    out->n = 3;
    out->params = P;
    out->eval = fourbar_eval;
    out->flags = SYM_SYS_CONSTRAINT_HESS;
    out->m = 2;
    out->constraint = fourbar_constraint;
    out->constraint_params = P;
    return SYM_OK;
}

/* ------------------------------------------------------------------ */
/* Registry                                                             */
/* ------------------------------------------------------------------ */
/* Worked examples (symplectic.h: ex_n, ex_npar, ex_par, ex_q0, ex_p0): a
 * smooth motion of each system, integrated by tests with every method. */
static const double pendulum_ex[] = {1.0, 1.0}, pendulum_q0[] = {2.0}, pendulum_p0[] = {0.0};
static const double linear_ex[] = {2.0, 0.5, 0.5, 1.0, 3.0, -1.0, -1.0, 2.0};
static const double linear_q0[] = {0.4, -0.2}, linear_p0[] = {0.1, 0.3};
static const double dp_ex[] = {1.0, 1.0, 1.0, 1.0, 9.81};
static const double dp_q0[] = {0.7853981633974483, 1.0471975511965976}, dp_p0[] = {0.0, 0.0};
/* a moderately spinning top: theta stays in [1.0, 2.34] for t <= 4 */
static const double top_ex[] = {1.0, 1.0, 0.5, 1.0, 9.81};
static const double top_q0[] = {0.0, 1.0, 0.0}, top_p0[] = {1.75, 0.0, 2.625};
/* the same top state in a quaternion (from_euler of top_q0, top_p0): on the
 * constraint manifold, |Q| = 1 and Q.P = 0 to rounding */
static const double qtop_ex[] = {1.0, 1.0, 0.5, 1.0, 9.81};
static const double qtop_q0[] = {0.8775825618903728, 0.479425538604203, 0.0, 0.0};
static const double qtop_p0[] = {0.0, 0.0, -1.8251009375668028, 4.985285932044902};
static const double chain_ex[] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 9.81};
static const double chain_q0[] = {0.5, 0.3, -0.2}, chain_p0[] = {0.0, 0.0, 0.0};
/* constrained: states on the constraint manifold (g = 0 and G M^-1 p = 0 to
 * rounding): released at 2 rad from the bottom; a swing about the vertical
 * with a horizontal push; the crank-rocker released at rest with the crank
 * at -1 rad (0.84 rad from its equilibrium -1.843) */
static const double cpend_ex[] = {1.0, 1.0, 9.81};
static const double cpend_q0[] = {0.90929742682568170, 0.41614683654714241};
static const double cpend_p0[] = {0.0, 0.0};
static const double spend_q0[] = {0.84147098480789650, 0.0, -0.54030230586813977};
static const double spend_p0[] = {0.0, 2.0, 0.0};
static const double fourbar_ex[] = {0.3, 1.0, 0.8, 0.3, 1.0, 0.8, 1.0, 9.81};
static const double fourbar_q0[] = {-1.0, 1.1646955236335035, 2.157475793956095};
static const double fourbar_p0[] = {0.0, 0.0, 0.0};

#define EXAMPLE(N, PAR, Q0, P0) N, sizeof(PAR) / sizeof(PAR[0]), PAR, Q0, P0

static const sym_builtin builtins[] = {
    {"pendulum",
     "Nonlinear pendulum L = 1/2 m qdot^2 - m omega^2 (1 - cos q) (FVCA).",
     "m, omega", pendulum_make, EXAMPLE(1, pendulum_ex, pendulum_q0, pendulum_p0)},
    {"linear",
     "Quadratic Lagrangian L = 1/2 qdot^T M qdot - 1/2 q^T K q with constant "
     "symmetric M (positive definite) and K (AXIOMS).",
     "M (n*n row-major), K (n*n row-major)", linear_make,
     EXAMPLE(2, linear_ex, linear_q0, linear_p0)},
    {"double_pendulum",
     "Planar double pendulum, absolute angles from the downward vertical "
     "(TOP Section 3).",
     "m1, m2, l1, l2, g", dp_make, EXAMPLE(2, dp_ex, dp_q0, dp_p0)},
    {"lagrange_top",
     "Heavy symmetric (Lagrange) top in ZXZ Euler angles (phi, theta, psi), "
     "V = m g l cos(theta) (TOP Section 4).",
     "m, I, I3, l, g", top_make, EXAMPLE(3, top_ex, top_q0, top_p0)},
    {"lagrange_top_quaternion",
     "Heavy symmetric (Lagrange) top in a unit quaternion Q (scalar first), "
     "M(Q) = 4 E^T J E + 4 I Q Q^T, V = m g l (axis z-component), with the "
     "holonomic constraint g = |Q|^2 - 1 (no coordinate singularity).",
     "m, I, I3, l, g", qtop_make, EXAMPLE(4, qtop_ex, qtop_q0, qtop_p0)},
    {"pendulum_chain",
     "Planar chain of n point masses on massless rods, absolute angles from "
     "the downward vertical; O(n^2) per evaluation.",
     "m (n values), l (n values), g", chain_make, EXAMPLE(3, chain_ex, chain_q0, chain_p0)},
    {"pendulum_cartesian",
     "Planar pendulum in Cartesian coordinates q = (x, y), y up, with the holonomic "
     "constraint g = (x^2 + y^2 - l^2)/2 (rod tension lambda l).",
     "m, l, g", cpend_make, EXAMPLE(2, cpend_ex, cpend_q0, cpend_p0)},
    {"spherical_pendulum_cartesian",
     "Spherical pendulum in Cartesian coordinates q = (x, y, z), z up, with the "
     "holonomic constraint g = (|q|^2 - l^2)/2 (rod tension lambda l).",
     "m, l, g", spend_make, EXAMPLE(3, cpend_ex, spend_q0, spend_p0)},
    {"four_bar",
     "Planar four-bar linkage of uniform rods (crank, coupler, rocker) between "
     "ground pivots (0, 0) and (d, 0), q = their absolute angles, with the two "
     "loop-closure constraints (one degree of freedom).",
     "m1, m2, m3, l1, l2, l3, d, g", fourbar_make,
     EXAMPLE(3, fourbar_ex, fourbar_q0, fourbar_p0)},
};

/* sym_builtin_count, sym_builtin_at, sym_builtin_find */
SYM_ROW_ACCESS(sym_builtin, builtins, sym_builtin)

int sym_builtin_make(const char *name, int n, const double *par, size_t npar,
                     sym_system *out)
{
    const sym_builtin *b = sym_builtin_find(name);
    if (!out) return SYM_EINVAL;
    memset(out, 0, sizeof(*out));
    if (!b) return SYM_ESYSTEM;
    if (npar && !par) return SYM_EINVAL;
    return b->make(n, par, npar, out);
}

void sym_builtin_free(sym_system *sys)
{
    if (!sys) return;
    free(sys->params);
    sys->params = NULL;
}
