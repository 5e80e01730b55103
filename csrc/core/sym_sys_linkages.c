/*
 * sym_sys_linkages.c -- rods and pivots held by holonomic constraints:
 * the Cartesian pendulums and the four-bar linkage (built-in systems,
 * defined through sym_sysdef.h).
 */
#include "sym_sysdef.h"
#include "sym_sincos.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Pendulums on rods (symplectic.h: holonomic constraints)              */
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
    (void)g; (void)scratch;
    if (need & SYM_NEED_M) sym_scaled_identity(o->M, n, P->m);
    sym_zero_AH(need, o, n);
    if (need & SYM_NEED_V) o->V[0] = P->mg * q[n - 1];
    if (need & SYM_NEED_DV) {
        sym_zero(o->dV, (size_t)n);
        o->dV[n - 1] = P->mg;
    }
    if (need & SYM_NEED_D2V) sym_zero(o->d2V, (size_t)n * (size_t)n);
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
    if (need & SYM_CNEED_HESS) sym_scaled_identity(o->S, n, mu[0]);
    return 0;
}

static int cpend_fill(int n, const double *par, void *params)
{
    cpend_par *P = params;
    P->n = n;
    P->m = par[0];
    P->l2 = par[1] * par[1];
    P->mg = par[0] * par[2];
    return SYM_OK;
}

/* n = want (2 or 3); m, l > 0; one constraint */
static int cpend_make_n(int want, int n, const double *par, size_t npar, sym_system *out)
{
    const sym_builtin_spec spec = {
        .n_min = want, .n_max = want, .npar = 3, .npos = 2,
        .bytes = sizeof(cpend_par), .fill = cpend_fill, .eval = cpend_eval,
        .m = 1, .constraint = cpend_constraint,
        .flags = SYM_SYS_CONSTANT_MASS | SYM_SYS_CONSTRAINT_HESS};
    return sym_builtin_new(&spec, n, par, npar, out);
}

int sym_sys_pendulum_cartesian(int n, const double *par, size_t npar, sym_system *out)
{
    return cpend_make_n(2, n, par, npar, out);
}

int sym_sys_spherical_pendulum_cartesian(int n, const double *par, size_t npar, sym_system *out)
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
        sym_zero(o->M, 9);
        o->M[0] = P->m11;
        o->M[1] = o->M[3] = P->k * c12;
        o->M[4] = P->m22;
        o->M[8] = P->m33;
    }
    if (need & SYM_NEED_A) {
        const double a = P->k * s12;
        sym_zero(o->A, 9);
        o->A[0] = -a * g[1];
        o->A[1] = a * g[1];
        o->A[3] = -a * g[0];
        o->A[4] = a * g[0];
    }
    if (need & SYM_NEED_H) {
        const double h = P->k * c12 * g[0] * g[1];
        sym_zero(o->H, 9);
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
        sym_zero(o->d2V, 9);
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
        sym_zero(o->S, 9);
        o->S[0] = -P->l1 * (mu[0] * c1 + mu[1] * s1);
        o->S[4] = -P->l2 * (mu[0] * c2 + mu[1] * s2);
        o->S[8] = P->l3 * (mu[0] * c3 + mu[1] * s3);
    }
    return 0;
}

static int fourbar_fill(int n, const double *par, void *params)
{
    fourbar_par *P = params;
    const double m1 = par[0], m2 = par[1], m3 = par[2], l1 = par[3], l2 = par[4], l3 = par[5];
    const double g = par[7];
    (void)n;
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
    return SYM_OK;
}

/* n = 3; the masses, lengths and d > 0; two constraints */
SYM_BUILTIN_MAKE(sym_sys_four_bar,
                 .n_min = 3, .n_max = 3, .npar = 8, .npos = 7,
                 .bytes = sizeof(fourbar_par), .fill = fourbar_fill, .eval = fourbar_eval,
                 .m = 2, .constraint = fourbar_constraint, .flags = SYM_SYS_CONSTRAINT_HESS)
