/*
 * sym_linalg.h -- dense linear algebra of the core (private): the inline
 * kernels that the schemes instantiate for small fixed sizes, and the
 * workspace form of the LU factorisation (sym_linalg.c), the
 * self-allocating LU that tests call (tests/c_core/test_lu_kernels.py) and the
 * Cholesky factorisation of mass matrices.
 *
 * Matrices are dense, row-major.
 */
#ifndef SYM_LINALG_H
#define SYM_LINALG_H

#include "symplectic.h"
#include "sym_util.h"

#include <math.h>
#include <stddef.h>

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

/* The sign of det A from its factors as the LU below leaves them
 * (reciprocal pivots on the diagonal, piv[k] the row exchanged with k):
 * prod_k sign(U_kk) times -1 per exchange. */
SYM_INLINE int sym_lu_det_sign(int m, const double *LU, const int *piv)
{
    int s = 1;
    for (int k = 0; k < m; k++) {
        if (LU[(size_t)k * (size_t)m + (size_t)k] < 0.0) s = -s;
        if (piv[k] != k) s = -s;
    }
    return s;
}

/*
 * LU with partial pivoting (Doolittle, row interchanges, right-looking) of
 * the first `cols` columns of a block P of `rows` rows (row stride ld), in
 * place: unit lower L below the diagonal, U on and above it, with the
 * reciprocals 1/U_kk stored on the diagonal (the solve multiplies instead of
 * dividing).  Pivot k swaps row k with the row of the largest |P_ik|, i >= k,
 * recorded as piv[k] = base + that row.  When A is not NULL the block is a
 * panel copy of columns [k0, k0 + cols) of the m x m matrix A, rows k0..m-1,
 * and each interchange is applied to A's columns outside the panel too.
 * SYM_ESINGULAR for a zero pivot column, SYM_ENONFINITE for a non-finite one
 * (other non-finite entries reach the solution).
 *
 * The whole matrix (rows = cols = ld = m, A = NULL) is the unblocked
 * factorisation; sym_linalg.c factors panels of the blocked one with the same
 * code, so that both apply the same operations in the same order.
 */
SYM_INLINE int sym_lu_panel_k(const int rows, const int cols, const int ld, double *P,
                              int *piv, const int base, double *A, const int m, const int k0)
{
    for (int k = 0; k < cols; k++) {
        int p = k;
        double amax = fabs(P[k * ld + k]);
        for (int i = k + 1; i < rows; i++) {
            const double v = fabs(P[i * ld + k]);
            if (v > amax) { amax = v; p = i; }
        }
        piv[k] = base + p;
        if (!isfinite(amax)) return SYM_ENONFINITE;
        if (!(amax > 0.0)) return SYM_ESINGULAR;
        if (p != k) {
            double *rk = P + k * ld, *rp = P + p * ld;
            for (int j = 0; j < cols; j++) { const double t = rk[j]; rk[j] = rp[j]; rp[j] = t; }
            if (A) {
                double *ak = A + (k0 + k) * m, *ap = A + (k0 + p) * m;
                for (int j = 0; j < k0; j++) { const double t = ak[j]; ak[j] = ap[j]; ap[j] = t; }
                for (int j = k0 + cols; j < m; j++) {
                    const double t = ak[j];
                    ak[j] = ap[j];
                    ap[j] = t;
                }
            }
        }
        /* the diagonal keeps the reciprocal pivot 1/U_kk */
        const double inv = 1.0 / P[k * ld + k];
        P[k * ld + k] = inv;
        const double *rk = P + k * ld;
        for (int i = k + 1; i < rows; i++) {
            double *ri = P + i * ld;
            const double l = ri[k] * inv;
            ri[k] = l;
            for (int j = k + 1; j < cols; j++) ri[j] -= l * rk[j];
        }
    }
    return SYM_OK;
}

/* The unblocked LU of the m x m matrix A (see sym_lu_panel_k). */
SYM_INLINE int sym_lu_factor_k(const int m, double *A, int *piv)
{
    return sym_lu_panel_k(m, m, m, A, piv, 0, NULL, m, 0);
}

/* Solve A x = b with the factors of sym_lu_factor_k, b overwritten by x. */
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

/* LU factorisation and solve of an m x m system, as the schemes call them:
 * `work` holds sym_lu_work_size(m) doubles (the blocked factorisation's
 * panel copy; NULL when that is 0), so that nothing is allocated. */
typedef int (*sym_lu_factor_fn)(int m, double *A, int *piv, double *work);
typedef void (*sym_lu_solve_fn)(int m, const double *LU, const int *piv, double *b);

/* LU with partial pivoting, in place: A (m x m) -> L\U (unit lower L; the
 * diagonal holds the reciprocal pivots 1/U_kk), piv[m].
 * SYM_ESINGULAR if a pivot column is zero, SYM_ENONFINITE if it holds a
 * non-finite largest entry.  For m > 32 (the blocked factorisation) it
 * allocates an 8 m panel buffer (SYM_ENOMEM); the schemes take that buffer
 * from their workspace instead (sym_lu_factor_ws), so a step allocates
 * nothing: this form is for tests. */
SYM_PRIVATE int sym_lu_factor(int m, double *A, int *piv);
SYM_PRIVATE void sym_lu_solve(int m, const double *LU, const int *piv, double *b);
/* Cholesky A = L L^T in place (lower triangle); SYM_EMASS if not SPD. */
SYM_PRIVATE int sym_cholesky(int m, double *A);
SYM_PRIVATE void sym_cholesky_solve(int m, const double *L, double *b);

SYM_PRIVATE size_t sym_lu_work_size(int m);
SYM_PRIVATE int sym_lu_factor_ws(int m, double *A, int *piv, double *work);
/* The pair for size m (sym_lu_small.c): instances unrolled for the small
 * Newton sizes m <= SYM_LU_SMALL_MAX, the general code otherwise. */
SYM_PRIVATE void sym_lu_pick(int m, sym_lu_factor_fn *factor, sym_lu_solve_fn *solve);

/* The unrolled kernels of sym_lu_small.c for m <= SYM_LU_SMALL_MAX: the pair
 * for size m (returns 1), or 0 when m is larger.  Bitwise the factors,
 * pivots and solutions of sym_lu_factor_k / sym_lu_solve_k.  Their factor
 * reads piv on entry: a pivot sequence found there (piv[k] in [k, m), as
 * the previous factorisation left it) is tried first and checked, so that
 * the result is the same whatever piv holds. */
#define SYM_LU_SMALL_MAX 16
SYM_PRIVATE int sym_lu_small_pick(int m, sym_lu_factor_fn *factor, sym_lu_solve_fn *solve);

/* Kinetic energy T = 1/2 p^T M^{-1} p by the square-root-free factorisation
 * M = L D L^T, column by column:
 *   D_j = M_jj - sum_{k<j} U_jk^2 / D_k,
 *   U_ij = M_ij - sum_{k<j} U_ik U_jk / D_k   (i > j, U = L D),
 * with the forward substitution y_j = p_j - sum_{k<j} (U_jk / D_k) y_k
 * alongside; T = 1/2 sum_j y_j^2 / D_j.  M (n x n, read-only, its lower
 * triangle used); U receives L D below the diagonal (n x n scratch); y and
 * inv (the 1/D_j) are n scratch doubles.  SYM_EMASS when a pivot D_j is not
 * positive. */
SYM_INLINE int sym_kinetic_k(const int n, const double *M, const double *p, double *U,
                             double *y, double *inv, double *T)
{
    double kin = 0.0;
    for (int j = 0; j < n; j++) {
        const double *uj = U + (size_t)j * n;
        double d = M[(size_t)j * n + j], v = p[j];
        for (int k = 0; k < j; k++) {
            const double ljk = uj[k] * inv[k];
            d -= ljk * uj[k];
            v -= ljk * y[k];
        }
        if (!(d > 0.0)) return SYM_EMASS;
        inv[j] = 1.0 / d;
        y[j] = v;
        kin += v * v * inv[j];
        for (int i = j + 1; i < n; i++) {
            double *ui = U + (size_t)i * n;
            double u = M[(size_t)i * n + j];
            for (int k = 0; k < j; k++) u -= ui[k] * uj[k] * inv[k];
            ui[j] = u;
        }
    }
    *T = 0.5 * kin;
    return SYM_OK;
}

/* sym_kinetic_k for size n: unrolled instances for n = 1..4, else general. */
typedef int (*sym_kinetic_fn)(int n, const double *M, const double *p, double *U, double *y,
                              double *inv, double *T);
SYM_PRIVATE sym_kinetic_fn sym_kinetic_pick(int n);

#endif /* SYM_LINALG_H */
