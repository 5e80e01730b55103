/*
 * sym_sys_pendulums.c -- pendulums in angle coordinates: the pendulum,
 * the double pendulum and the n-link chain (built-in systems, defined
 * through sym_sysdef.h).
 */
#include "sym_sysdef.h"
#include "sym_sincos.h"

#include <math.h>
#include <string.h>

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

static int pendulum_fill(int n, const double *par, void *params)
{
    pendulum_par *P = params;
    (void)n;
    P->m = par[0];
    P->w2 = par[1] * par[1];
    return SYM_OK;
}

/* n = 1; m > 0 */
SYM_BUILTIN_MAKE(sym_sys_pendulum,
                 .n_min = 1, .n_max = 1, .npar = 2, .npos = 1,
                 .bytes = sizeof(pendulum_par), .fill = pendulum_fill,
                 .eval = pendulum_eval, .flags = SYM_SYS_CONSTANT_MASS)

/* ------------------------------------------------------------------ */
/* double_pendulum (TOP Section 3.1): absolute angles from the downward */
/* vertical; params m1, m2, l1, l2, g.                                  */
/*   M = [[(m1+m2) l1^2, k c12], [k c12, m2 l2^2]],  k = m2 l1 l2,      */
/*   V = -(m1+m2) g l1 cos q1 - m2 g l2 cos q2.                          */
/* With 1/2 g^T M g = const + k cos(q1-q2) g1 g2:                        */
/*   A = k s12 [[-g2, g2], [-g1, g1]],  H = k c12 g1 g2 [[-1, 1], [1, -1]] */
/* ------------------------------------------------------------------ */
typedef struct {
    double m11, m22, k, v1, v2;
    int avx2;   /* the CPU has AVX2: dp_prep_n's four-lane sines and cosines */
} dp_par;

/* sin, cos of q1, q2 and of q1 - q2 (by the difference formulas) */
enum { DP_S1, DP_C1, DP_S2, DP_C2, DP_S12, DP_C12, DP_PREP };

/* the prepared values from sin, cos of q1 and q2 */
SYM_INLINE void dp_prepared(const double s1, const double c1, const double s2, const double c2,
                            double *c)
{
    c[DP_S1] = s1;
    c[DP_C1] = c1;
    c[DP_S2] = s2;
    c[DP_C2] = c2;
    c[DP_S12] = s1 * c2 - c1 * s2;
    c[DP_C12] = c1 * c2 + s1 * s2;
}

static void dp_prep(const double *q, double *c, void *params)
{
    (void)params;
    double sn[2], cs[2];
    sym_sincos_n(2, q, sn, cs);
    dp_prepared(sn[0], cs[0], sn[1], cs[1], c);
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

SYM_EVAL_FROM_PREP(dp_eval, dp_prep, dp_eval_prep, DP_PREP)

/* dp_prep at np <= DP_BATCH points whose angles are all in sym_sincos_n's
 * fast range: the 2 np angles (consecutive in x) in one pass, four lanes at
 * a time where the CPU has AVX2, then the difference formulas point by
 * point. */
#define DP_BATCH 8
SYM_INLINE void dp_prep_block(const int np, const double *restrict x, double *restrict cp,
                              const int avx2)
{
    double sn[2 * DP_BATCH], cs[2 * DP_BATCH];
#if SYM_FMA_DISPATCH
    if (avx2 && np >= 2)
        sym_sincos_fast4(2 * np, x, sn, cs);
    else
#endif
        sym_sincos_fast(2 * np, x, sn, cs);
    (void)avx2;
    for (int p = 0; p < np; p++)
        dp_prepared(sn[2 * p], cs[2 * p], sn[2 * p + 1], cs[2 * p + 1], cp + DP_PREP * p);
}

/* dp_prep at npts points (rows of Q; sym_system's prep_n), bitwise dp_prep
 * at each point (the same operations in every lane).  An angle outside the
 * fast range sends the points through dp_prep one by one, whose C-library
 * path is taken per call. */
static void dp_prep_n(int npts, const double *Q, double *c, void *params)
{
    const int avx2 = ((const dp_par *)params)->avx2;
    for (int p0 = 0; p0 < npts; p0 += DP_BATCH) {
        const int np = npts - p0 < DP_BATCH ? npts - p0 : DP_BATCH;
        const double *x = Q + 2 * (size_t)p0;
        double *cp = c + (size_t)DP_PREP * (size_t)p0;
        if (!sym_sincos_all_fast(2 * np, x)) {
            for (int p = 0; p < np; p++) dp_prep(x + 2 * p, cp + DP_PREP * p, params);
            continue;
        }
        switch (np) {   /* the usual counts (midpoint, Simpson, Lobatto-4, -5) unrolled */
        case 1: dp_prep_block(1, x, cp, avx2); break;
        case 2: dp_prep_block(2, x, cp, avx2); break;
        case 3: dp_prep_block(3, x, cp, avx2); break;
        case 4: dp_prep_block(4, x, cp, avx2); break;
        default: dp_prep_block(np, x, cp, avx2);
        }
    }
}

static int dp_fill(int n, const double *par, void *params)
{
    dp_par *P = params;
    const double m1 = par[0], m2 = par[1], l1 = par[2], l2 = par[3], g = par[4];
    (void)n;
    P->m11 = (m1 + m2) * l1 * l1;
    P->m22 = m2 * l2 * l2;
    P->k = m2 * l1 * l2;
    P->v1 = (m1 + m2) * g * l1;
    P->v2 = m2 * g * l2;
#if SYM_FMA_DISPATCH
    P->avx2 = __builtin_cpu_supports("avx2");
#else
    P->avx2 = 0;
#endif
    return SYM_OK;
}

/* n = 2; m1, m2, l1, l2 > 0 */
SYM_BUILTIN_MAKE(sym_sys_double_pendulum,
                 .n_min = 2, .n_max = 2, .npar = 5, .npos = 4,
                 .bytes = sizeof(dp_par), .fill = dp_fill,
                 .eval = dp_eval, .prep = dp_prep, .eval_prep = dp_eval_prep, .prep_size = DP_PREP,
                 .prep_n = dp_prep_n)

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
typedef struct { int n; double g; double *l, *mu, *m, *C; } chain_par;

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
        sym_zero(o->d2V, (size_t)n * (size_t)n);
        for (int i = 0; i < n; i++) o->d2V[i * n + i] = P->g * P->mu[i] * P->l[i] * cs[i];
    }
    return 0;
}

static int chain_fill(int n, const double *par, void *params)
{
    chain_par *P = params;
    P->n = n;
    P->l = (double *)(P + 1);
    P->mu = P->l + n;
    P->m = P->mu + n;
    P->C = P->m + n;
    for (int i = 0; i < n; i++) {
        P->l[i] = par[n + i];
        P->m[i] = par[i];
    }
    double acc = 0.0;
    for (int i = n - 1; i >= 0; i--) { acc += par[i]; P->mu[i] = acc; }
    /* C_ij = l_i l_j mu_max(i,j) */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            P->C[(size_t)i * n + j] = P->l[i] * P->l[j] * P->mu[i > j ? i : j];
    P->g = par[2 * n];
    return SYM_OK;
}

int sym_chain_view(const sym_system *sys, const double **l, const double **m,
                   const double **mu, double *grav)
{
    if (sys->eval != chain_eval || sys->eval_batch || !sys->params) return 1;
    const chain_par *P = sys->params;
    *l = P->l;
    *m = P->m;
    *mu = P->mu;
    *grav = P->g;
    return 0;
}

/* 1 <= n <= 4096; the masses and lengths > 0.  The block holds l, mu, m and C
 * (3n + n^2 doubles); the scratch sin, cos of the angles and of their
 * differences (2n + 2n^2). */
SYM_BUILTIN_MAKE(sym_sys_pendulum_chain,
                 .n_min = 1, .n_max = 4096, .npar = 2 * (size_t)n + 1, .npos = 2 * (size_t)n,
                 .bytes = sizeof(chain_par) + (3 + (size_t)n) * (size_t)n * sizeof(double),
                 .fill = chain_fill, .eval = chain_eval,
                 .scratch_size = 2 * (size_t)n + 2 * (size_t)n * (size_t)n)
