/*
 * sym_internal.h -- the workspace shared by the schemes and the driver.
 * Not part of the public API.
 */
#ifndef SYM_INTERNAL_H
#define SYM_INTERNAL_H

#include "symplectic.h"

#include <math.h>

/* Force inlining where a kernel is instantiated for small fixed sizes, so
 * that the compiler unrolls its loops (n = 1..4 covers the papers' systems). */
#if defined(__GNUC__) || defined(__clang__)
#define SYM_INLINE static inline __attribute__((always_inline))
#else
#define SYM_INLINE static inline
#endif

/* Vector updates written in pairs so that the compiler's straight-line
 * (SLP) vectoriser, active at -O2, uses two-lane SIMD; same operations and
 * rounding as the plain loops. */
SYM_INLINE void sym_vscale(int n, double c, const double *restrict x, double *restrict y)
{
    int d = 0;
    for (; d + 1 < n; d += 2) { y[d] = c * x[d]; y[d + 1] = c * x[d + 1]; }
    for (; d < n; d++) y[d] = c * x[d];
}

SYM_INLINE void sym_vaxpy(int n, double c, const double *restrict x, double *restrict y)
{
    int d = 0;
    for (; d + 1 < n; d += 2) { y[d] += c * x[d]; y[d + 1] += c * x[d + 1]; }
    for (; d < n; d++) y[d] += c * x[d];
}

/* y += c (x - z) */
SYM_INLINE void sym_vaxpy_diff(int n, double c, const double *restrict x,
                               const double *restrict z, double *restrict y)
{
    int d = 0;
    for (; d + 1 < n; d += 2) {
        y[d] += c * (x[d] - z[d]);
        y[d + 1] += c * (x[d + 1] - z[d + 1]);
    }
    for (; d < n; d++) y[d] += c * (x[d] - z[d]);
}

/* Dense LU with partial pivoting (Doolittle, row interchanges), in place:
 * A (m x m) -> unit lower L and U, with the reciprocals 1/U_kk stored on the
 * diagonal (the solve multiplies instead of dividing); piv[m] the row
 * interchanges.  SYM_ESINGULAR for a zero pivot column, SYM_ENONFINITE for a
 * non-finite one (other non-finite entries reach the solution). */
SYM_INLINE int sym_lu_factor_k(const int m, double *A, int *piv)
{
    for (int k = 0; k < m; k++) {
        int p = k;
        double amax = fabs(A[k * m + k]);
        for (int i = k + 1; i < m; i++) {
            const double v = fabs(A[i * m + k]);
            if (v > amax) { amax = v; p = i; }
        }
        piv[k] = p;
        if (!isfinite(amax)) return SYM_ENONFINITE;
        if (!(amax > 0.0)) return SYM_ESINGULAR;
        if (p != k) {
            double *rk = A + k * m, *rp = A + p * m;
            for (int j = 0; j < m; j++) { const double t = rk[j]; rk[j] = rp[j]; rp[j] = t; }
        }
        /* the diagonal keeps the reciprocal pivot 1/U_kk */
        const double inv = 1.0 / A[k * m + k];
        A[k * m + k] = inv;
        const double *rk = A + k * m;
        for (int i = k + 1; i < m; i++) {
            double *ri = A + i * m;
            const double l = ri[k] * inv;
            ri[k] = l;
            for (int j = k + 1; j < m; j++) ri[j] -= l * rk[j];
        }
    }
    return SYM_OK;
}

SYM_INLINE void sym_lu_solve_k(const int m, const double *LU, const int *piv, double *b)
{
    for (int k = 0; k < m; k++) {
        const int p = piv[k];
        if (p != k) { const double t = b[k]; b[k] = b[p]; b[p] = t; }
    }
    for (int i = 1; i < m; i++) {
        const double *ri = LU + i * m;
        double s = b[i];
        for (int j = 0; j < i; j++) s -= ri[j] * b[j];
        b[i] = s;
    }
    for (int i = m - 1; i >= 0; i--) {
        const double *ri = LU + i * m;
        double s = b[i];
        for (int j = i + 1; j < m; j++) s -= ri[j] * b[j];
        b[i] = s * ri[i];
    }
}


/* Derived tables of a Galerkin scheme (computed from nodes and weights). */
typedef struct sym_gtab {
    int s, r;
    double b[SYM_MAX_NODES];
    double B[SYM_MAX_NODES][SYM_MAX_NODES];
    double D[SYM_MAX_NODES][SYM_MAX_NODES];
    double E[SYM_MAX_NODES][SYM_MAX_NODES];
    int unit[SYM_MAX_NODES];   /* point i coincides with node unit[i], or -1 */
    double c[SYM_MAX_NODES];
    int lobatto;               /* points are the nodes: B = I          */
    double bD[SYM_MAX_NODES][SYM_MAX_NODES];                 /* b_i D_ia      */
    double bDD[SYM_MAX_NODES][SYM_MAX_NODES][SYM_MAX_NODES]; /* b_i D_ia D_ib */
    /* Nonzero terms of the Newton matrix and the residual, precomputed so
     * that assembly touches only what contributes (see sym_galerkin.c). */
    int njt, nrt;
    struct sym_jterm { short i, a, b, kind; double c; }
        jt[4 * (SYM_MAX_NODES - 1) * (SYM_MAX_NODES - 1) * SYM_MAX_NODES];
    struct sym_rterm { short i, a, kind; double c; } rt[2 * (SYM_MAX_NODES - 1) * SYM_MAX_NODES];
} sym_gtab;

struct sym_work {
    const sym_system *sys;
    const sym_method *method;
    sym_options opt;
    int n;

    /* ---- Galerkin engine ---- */
    sym_gtab tab;
    int nu;                          /* (s-1) n unknowns                 */
    unsigned need_full[SYM_MAX_NODES];
    int left_point, right_point;     /* points equal to Q_0 / Q_{s-1}    */
    double *X, *dX, *R, *J, *Lm;     /* Lm: n x n, Cholesky of M        */
    int *piv;
    double *Qp, *Gp;                 /* r x n                            */
    double *Mp, *Ap, *Hp, *Kp;       /* r x n x n                        */
    double *dVp, *f, *P;             /* r x n                            */
    int cache_valid;                 /* M, grad V at cache_q             */
    double *cache_q, *cache_M, *cache_dV;
    int lu_valid;                    /* chord: J's LU kept from an earlier */
    double lu_h;                     /* iteration, for step size lu_h     */
    int prev_iters;
    int prev_valid;                  /* predictor history                */
    double prev_h;
    double *prev_X, *prev_qend;

    /* kernels instantiated for this n (see sym_galerkin.c) */
    void (*form_points)(sym_work *w, const double *q, double h);
    double (*residual)(sym_work *w, const double *p, double h, double *rnorm);
    int (*jacobian)(sym_work *w, double h);
    void (*correct)(sym_work *w, double h);
    int (*lu_factor)(int m, double *A, int *piv);
    void (*lu_solve)(int m, const double *LU, const int *piv, double *b);

    /* ---- RK4 ---- */
    double *kq, *kp, *qs, *ps, *vs, *Ms, *As, *dVs;

    /* ---- shared ---- */
    double *v, *acc, *tmp;           /* n: Taylor predictor, P_i         */
    double *scratch;                 /* sym_eval scratch                 */
    double *block;                   /* the single allocation            */
    int *iblock;
};

int sym_galerkin_setup(sym_work *w);
void sym_galerkin_pick_kernels(sym_work *w);
int sym_galerkin_step(sym_work *w, const double *q, const double *p, double h,
                      double *q1, double *p1, double *qmid, sym_step_info *info);
int sym_galerkin_tangent(sym_work *w, const double *q, const double *p, double h,
                         double *q1, double *p1, double *D, sym_step_info *info);
int sym_rk4_tangent(sym_work *w, const double *q, const double *p, double h,
                    double *q1, double *p1, double *D, sym_step_info *info);
int sym_rk4_step(sym_work *w, const double *q, const double *p, double h,
                 double *q1, double *p1, sym_step_info *info);

#endif /* SYM_INTERNAL_H */
