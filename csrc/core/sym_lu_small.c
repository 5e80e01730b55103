/*
 * sym_lu_small.c -- LU with partial pivoting and its solve for the small
 * Newton systems (m <= SYM_LU_SMALL_MAX = 16 unknowns: 2 n (s - 1) <= 16
 * covers Simpson up to n = 8 and Lobatto-5 up to n = 4), instantiated for
 * each m with every loop unrolled.
 *
 * The arithmetic is that of sym_lu_panel_k / sym_lu_solve_k (sym_linalg.h),
 * operation for operation and in the same order, so factors, pivots and
 * solutions are bitwise those of the plain kernels
 * (tests/c_core/test_lu_kernels.py); only the control flow differs:
 *   - the pivot search is the sequential scan with selects instead of
 *     branches;
 *   - the rows k and p are exchanged unconditionally through registers
 *     (an exchange of a row with itself when p = k), no data-dependent
 *     branch;
 *   - with m known at compile time the loops unroll completely; the row
 *     updates run two columns at a time in the compiler's two-lane vectors
 *     (sym_simd.h), in the fixed pairs (2t, 2t + 1) of the row;
 *   - the pivots found by the previous factorisation (piv on entry, when it
 *     holds a pivot sequence) are tried first and checked (lu_small_k):
 *     the search and the exchanges leave the critical path.
 * The factorisation is Doolittle's with row interchanges (Golub & Van Loan,
 * Matrix Computations, 4th ed., Alg. 3.4.1): U on and above the diagonal
 * with the reciprocals 1/U_kk stored on it, the unit lower L below.
 *
 * sym_lu_pick, the choice of kernels for a size, is here too: it falls back
 * on the general code of sym_linalg.c, which knows nothing of this file.
 */
#include "sym_linalg.h"
#include "sym_simd.h"
#include "sym_unroll.h"
#include "sym_util.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* A test's hook on the outcome of the checked factorisation with given
 * pivots (tests/c_core/test_lu_kernels.py counts both outcomes); nothing here. */
#ifndef SYM_LU_SPEC_PROBE
#define SYM_LU_SPEC_PROBE(ok) ((void)0)
#endif

/* a_ij -= l u_kj for j > k, two columns at a time (the same multiply and
 * subtract per entry), in the pairs (2t, 2t + 1) of the row at every k: a
 * pair loaded as a vector was stored as one (a load straddling two earlier
 * stores stalls store forwarding: pairs that alternated with k made the
 * step slower) */
SYM_INLINE void lu_small_row_update(const int m, const int k, double *restrict ri,
                                    const double l, const double *restrict rowp)
{
    int j = k + 1;
#if SYM_VEC2
    if (j & 1) {
        ri[j] -= l * rowp[j];
        j++;
    }
    const sym_v2d lv = sym_v2_splat(l);
    SYM_UNROLL
    for (; j + 2 <= m; j += 2) {
        sym_v2d a, u;
        a = sym_v2_load(ri + j);
        u = sym_v2_load(rowp + j);
        a -= lv * u;
        sym_v2_store(ri + j, a);
    }
#endif
    SYM_UNROLL
    for (; j < m; j++) ri[j] -= l * rowp[j];
}

/* exchange the rows k and p (p >= k) through registers, unconditionally
 * (a row with itself when p = k): no data-dependent branch */
SYM_INLINE void lu_small_swap(const int m, double *restrict A, const int k, const int p)
{
    double rowk[SYM_LU_SMALL_MAX], rowp[SYM_LU_SMALL_MAX];
    double *ak = A + k * m, *ap = A + p * m;
    SYM_UNROLL
    for (int j = 0; j < m; j++) { rowk[j] = ak[j]; rowp[j] = ap[j]; }
    SYM_UNROLL
    for (int j = 0; j < m; j++) ap[j] = rowk[j];
    SYM_UNROLL
    for (int j = 0; j < m; j++) ak[j] = rowp[j];
}

/* column k with the pivot in row k: the diagonal keeps the reciprocal
 * pivot 1/U_kk, l_ik = a_ik / U_kk (as a_ik * (1/U_kk)) replaces a_ik, and
 * the rows below are updated */
SYM_INLINE void lu_small_eliminate(const int m, double *restrict A, const int k)
{
    double *ak = A + k * m;
    const double inv = 1.0 / ak[k];
    ak[k] = inv;
    SYM_UNROLL
    for (int i = k + 1; i < m; i++) {
        double *ri = A + i * m;
        const double l = ri[k] * inv;
        ri[k] = l;
        lu_small_row_update(m, k, ri, l, ak);
    }
}

SYM_INLINE int lu_small_gepp_k(const int m, double *restrict A, int *restrict piv)
{
    SYM_UNROLL
    for (int k = 0; k < m; k++) {
        /* the first row of largest |a_ik|: the sequential scan, written
         * with selects (a NaN below the diagonal never wins, v > amax
         * being false; a NaN on the diagonal wins against every row) */
        double amax = fabs(A[k * m + k]);
        int p = k;
        SYM_UNROLL
        for (int i = k + 1; i < m; i++) {
            const double v = fabs(A[i * m + k]);
            const int big = v > amax;
            amax = big ? v : amax;
            p = big ? i : p;
        }
        piv[k] = p;
        if (!isfinite(amax)) return SYM_ENONFINITE;
        if (!(amax > 0.0)) return SYM_ESINGULAR;
        lu_small_swap(m, A, k, p);
        lu_small_eliminate(m, A, k);
    }
    return SYM_OK;
}

/*
 * The factorisation with the pivots of the previous one, checked.  Partial
 * pivoting with a given pivot sequence is the LU without pivoting of P A,
 * operation for operation (every entry sees the same updates by the same
 * pivot rows in the same order).  So the rows are put in the order of piv
 * up front, the elimination runs with no search and no exchange on its
 * critical path, and beside it each step checks that its pivot is the one
 * the search would choose: |a_kk| finite and strictly above every |a_ik|,
 * i > k (a tie, a NaN, an infinity or a zero column fails the check).
 * When every step passes, factors and pivots are those of lu_small_gepp_k
 * bitwise; when one fails, A is restored and lu_small_gepp_k runs.  The
 * Newton matrices of successive iterations and steps keep their pivots
 * (counted in benchmarks/NOTES.md section 5).
 */
SYM_INLINE int lu_small_k(const int m, double *restrict A, int *restrict piv)
{
    int known = 1;
    SYM_UNROLL
    for (int k = 0; k < m; k++) known &= piv[k] >= k && piv[k] < m;
    if (!known) return lu_small_gepp_k(m, A, piv);
    double A0[SYM_LU_SMALL_MAX * SYM_LU_SMALL_MAX];
    memcpy(A0, A, sizeof(double) * (size_t)(m * m));
    SYM_UNROLL
    for (int k = 0; k < m; k++) lu_small_swap(m, A, k, piv[k]);
    int ok = 1;
    SYM_UNROLL
    for (int k = 0; k < m; k++) {
        const double d = fabs(A[k * m + k]);
        ok &= d > 0.0 && d <= DBL_MAX;
        SYM_UNROLL
        for (int i = k + 1; i < m; i++) ok &= fabs(A[i * m + k]) < d;
        lu_small_eliminate(m, A, k);
    }
    SYM_LU_SPEC_PROBE(ok);
    if (ok) return SYM_OK;
    memcpy(A, A0, sizeof(double) * (size_t)(m * m));
    return lu_small_gepp_k(m, A, piv);
}

/* b <- A^{-1} b: the interchanges, L y = P b forward, U x = y backward
 * (multiplying by the stored 1/U_ii); the order of sym_lu_solve_k. */
SYM_INLINE void lu_small_solve_k(const int m, const double *restrict LU,
                                 const int *restrict piv, double *restrict b)
{
    double x[SYM_LU_SMALL_MAX];
    SYM_UNROLL
    for (int i = 0; i < m; i++) x[i] = b[i];
    /* the interchanges k <-> piv[k] (piv[k] >= k) by selects, so that x
     * stays in registers (no store and reload through a computed index) */
    SYM_UNROLL
    for (int k = 0; k < m; k++) {
        const int p = piv[k];
        const double xk = x[k];
        double xp = xk;
        SYM_UNROLL
        for (int j = k + 1; j < m; j++) {
            const int here = p == j;
            xp = here ? x[j] : xp;
            x[j] = here ? xk : x[j];
        }
        x[k] = xp;
    }
    SYM_UNROLL
    for (int i = 1; i < m; i++) {
        double s = x[i];
        SYM_UNROLL
        for (int j = 0; j < i; j++) s -= LU[i * m + j] * x[j];
        x[i] = s;
    }
    SYM_UNROLL
    for (int i = m - 1; i >= 0; i--) {
        double s = x[i];
        SYM_UNROLL
        for (int j = i + 1; j < m; j++) s -= LU[i * m + j] * x[j];
        x[i] = s * LU[i * m + i];
    }
    SYM_UNROLL
    for (int i = 0; i < m; i++) b[i] = x[i];
}

#define SYM_LU_SMALL_SET(M)                                                             \
    static int lu_small_factor_##M(int m, double *A, int *piv, double *work)            \
    {                                                                                   \
        (void)m;                                                                        \
        (void)work;                                                                     \
        return lu_small_k(M, A, piv);                                                   \
    }                                                                                   \
    static void lu_small_solve_##M(int m, const double *LU, const int *piv, double *b)  \
    {                                                                                   \
        (void)m;                                                                        \
        lu_small_solve_k(M, LU, piv, b);                                                \
    }
SYM_LU_SMALL_SET(1)
SYM_LU_SMALL_SET(2)
SYM_LU_SMALL_SET(3)
SYM_LU_SMALL_SET(4)
SYM_LU_SMALL_SET(5)
SYM_LU_SMALL_SET(6)
SYM_LU_SMALL_SET(7)
SYM_LU_SMALL_SET(8)
SYM_LU_SMALL_SET(9)
SYM_LU_SMALL_SET(10)
SYM_LU_SMALL_SET(11)
SYM_LU_SMALL_SET(12)
SYM_LU_SMALL_SET(13)
SYM_LU_SMALL_SET(14)
SYM_LU_SMALL_SET(15)
SYM_LU_SMALL_SET(16)

int sym_lu_small_pick(int m, sym_lu_factor_fn *factor, sym_lu_solve_fn *solve)
{
#define ROW(M) {lu_small_factor_##M, lu_small_solve_##M}
    static const struct { sym_lu_factor_fn f; sym_lu_solve_fn s; } inst[SYM_LU_SMALL_MAX] = {
        ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6), ROW(7), ROW(8),
        ROW(9), ROW(10), ROW(11), ROW(12), ROW(13), ROW(14), ROW(15), ROW(16),
    };
#undef ROW
    if (m < 1 || m > SYM_LU_SMALL_MAX) return 0;
    *factor = inst[m - 1].f;
    *solve = inst[m - 1].s;
    return 1;
}

/* The pair for size m: the unrolled kernels above up to SYM_LU_SMALL_MAX
 * (bitwise the plain kernels' factors and solutions), the general code of
 * sym_linalg.c (blocked above its LU_BLOCK_MIN) beyond. */
void sym_lu_pick(int m, sym_lu_factor_fn *factor, sym_lu_solve_fn *solve)
{
    if (sym_lu_small_pick(m, factor, solve)) return;
    *factor = sym_lu_factor_ws;
    *solve = sym_lu_solve;
}
