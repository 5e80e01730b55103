/*
 * sym_linalg.c -- dense linear algebra: LU with partial pivoting (unblocked
 * for small matrices, blocked with two-lane / run-time AVX trailing updates for
 * larger ones; the unrolled small sizes and the choice between them and
 * this code, sym_lu_pick, are sym_lu_small.c), Cholesky, and
 * instances of the kinetic energy by L D L^T.  Nothing here allocates except the public
 * convenience sym_lu_factor (the schemes call sym_lu_factor_ws with a
 * buffer from their workspace).
 */
#include "sym_linalg.h"
#include "sym_simd.h"

#include <math.h>
#include <stdlib.h>

/*
 * Blocked right-looking LU for m > LU_BLOCK_MIN: factor a panel of LU_NB
 * columns, form the panel's rows of U, then update the trailing matrix four
 * rows at a time with all LU_NB pivots while the rows sit in registers (two
 * columns per two-lane vector (sym_simd.h), four per AVX vector when the CPU has AVX:
 * separate multiply and subtract, exactly the scalar operations).  Every
 * element receives the same updates in the same order as in the unblocked
 * kernel, so the factors are bitwise identical; only memory traffic and
 * instruction count drop.
 */
#define LU_NB 8
#define LU_BLOCK_MIN (4 * LU_NB)

size_t sym_lu_work_size(int m)
{
    return m > LU_BLOCK_MIN ? (size_t)m * LU_NB : 0;
}

/* Rows r0..r3 -= their panel multipliers (columns k0..k0+NB-1) times the
 * panel rows, for columns from j on in blocks of W (the lanes of VT, SPLAT
 * its broadcast), while a whole block remains; j ends at the first column
 * not done.  Each entry sees separate multiplies and subtractions in the
 * scalar loop's order (lu_update_full), so the results are bitwise those
 * of the scalar code whatever the width. */
#define LU_UPDATE4_BLOCKS(VT, W, LOAD, STORE, SPLAT)                                    \
    do {                                                                                \
        VT L0[LU_NB], L1[LU_NB], L2[LU_NB], L3[LU_NB];                                  \
        for (int k = 0; k < LU_NB; k++) {                                               \
            L0[k] = SPLAT(r0[k0 + k]); L1[k] = SPLAT(r1[k0 + k]);                       \
            L2[k] = SPLAT(r2[k0 + k]); L3[k] = SPLAT(r3[k0 + k]);                       \
        }                                                                               \
        for (; j + (W) - 1 < m; j += (W)) {                                             \
            VT a0 = LOAD(r0 + j), a1 = LOAD(r1 + j), a2 = LOAD(r2 + j), a3 = LOAD(r3 + j); \
            for (int k = 0; k < LU_NB; k++) {                                           \
                const VT t = LOAD(A + (k0 + k) * m + j);                                \
                a0 -= L0[k] * t;                                                    \
                a1 -= L1[k] * t;                                                    \
                a2 -= L2[k] * t;                                                    \
                a3 -= L3[k] * t;                                                    \
            }                                                                           \
            STORE(r0 + j, a0); STORE(r1 + j, a1); STORE(r2 + j, a2); STORE(r3 + j, a3); \
        }                                                                               \
    } while (0)

#if SYM_AVX_DISPATCH
/* LU_UPDATE4_BLOCKS in four lanes, after a first pass over blocks of eight
 * columns: 4 rows x 8 columns, eight accumulators stay in registers through
 * the NB pivot rows, the multipliers broadcast from memory as needed. */
SYM_AVX static int lu_update4_avx(double *restrict r0, double *restrict r1, double *restrict r2,
                                  double *restrict r3, const double *A, int m, int k0, int j)
{
    for (; j + 7 < m; j += 8) {
        sym_v4d a0 = sym_v4_load(r0 + j), b0 = sym_v4_load(r0 + j + 4);
        sym_v4d a1 = sym_v4_load(r1 + j), b1 = sym_v4_load(r1 + j + 4);
        sym_v4d a2 = sym_v4_load(r2 + j), b2 = sym_v4_load(r2 + j + 4);
        sym_v4d a3 = sym_v4_load(r3 + j), b3 = sym_v4_load(r3 + j + 4);
        for (int k = 0; k < LU_NB; k++) {
            const double *t = A + (k0 + k) * m + j;
            const sym_v4d t0 = sym_v4_load(t), t1 = sym_v4_load(t + 4);
            sym_v4d l = sym_v4_splat(r0[k0 + k]);
            a0 -= l * t0;
            b0 -= l * t1;
            l = sym_v4_splat(r1[k0 + k]);
            a1 -= l * t0;
            b1 -= l * t1;
            l = sym_v4_splat(r2[k0 + k]);
            a2 -= l * t0;
            b2 -= l * t1;
            l = sym_v4_splat(r3[k0 + k]);
            a3 -= l * t0;
            b3 -= l * t1;
        }
        sym_v4_store(r0 + j, a0); sym_v4_store(r0 + j + 4, b0);
        sym_v4_store(r1 + j, a1); sym_v4_store(r1 + j + 4, b1);
        sym_v4_store(r2 + j, a2); sym_v4_store(r2 + j + 4, b2);
        sym_v4_store(r3 + j, a3); sym_v4_store(r3 + j + 4, b3);
    }
    LU_UPDATE4_BLOCKS(sym_v4d, 4, sym_v4_load, sym_v4_store, sym_v4_splat);
    return j;
}

/* Row i of the panel (k0 < i < k0 + NB), columns j, j+4, ...:
 * A_ij -= sum_{k0 <= k < i} l_ik U_kj, k ascending as in the scalar loop. */
SYM_AVX static int lu_panel_row_avx(double *restrict ri, const double *A, int m, int k0, int i,
                                    int j)
{
    for (; j + 3 < m; j += 4) {
        sym_v4d a = sym_v4_load(ri + j);
        for (int k = k0; k < i; k++) a -= sym_v4_splat(ri[k]) * sym_v4_load(A + k * m + j);
        sym_v4_store(ri + j, a);
    }
    return j;
}
#endif

#if SYM_VEC2
/* LU_UPDATE4_BLOCKS in two lanes (SSE2 on x86-64, the baseline). */
SYM_INLINE int lu_update4_v2(double *restrict r0, double *restrict r1, double *restrict r2,
                             double *restrict r3, const double *A, int m, int k0, int j)
{
    LU_UPDATE4_BLOCKS(sym_v2d, 2, sym_v2_load, sym_v2_store, sym_v2_splat);
    return j;
}
#endif

/* Panel factorisation (columns [k0, k1), rows k0..m-1) by sym_lu_panel_k in
 * a contiguous copy P (stride LU_NB, rows m - k0): with a power-of-two m the
 * panel's column segments of A, m doubles apart, fall into a few cache sets
 * and evict each other, which made the panel cost as much as the whole
 * trailing update.  Columns outside the panel only see the row swaps here. */
SYM_INLINE int lu_panel(const int m, double *A, int *piv, const int k0, const int k1, double *P)
{
    const int w = k1 - k0, rows = m - k0;
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < w; c++) P[i * LU_NB + c] = A[(k0 + i) * m + k0 + c];
    const int st = sym_lu_panel_k(rows, w, LU_NB, P, piv + k0, k0, A, m, k0);
    if (st) return st;
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < w; c++) A[(k0 + i) * m + k0 + c] = P[i * LU_NB + c];
    return SYM_OK;
}

/* Columns >= k1 of the panel's own rows: the forward substitution with the
 * panel's unit lower triangle, A_ij -= sum_{k0 <= k < i} l_ik U_kj. */
SYM_INLINE void lu_panel_rows(const int m, double *A, const int k0, const int k1, const int avx)
{
    (void)avx;
    for (int i = k0 + 1; i < k1 && i < m; i++) {
        double *ri = A + i * m;
        int j = k1;
#if SYM_AVX_DISPATCH
        if (avx) j = lu_panel_row_avx(ri, A, m, k0, i, j);
#endif
        for (; j < m; j++) {
            double a = ri[j];
            for (int k = k0; k < i; k++) a -= ri[k] * A[k * m + j];
            ri[j] = a;
        }
    }
}

/* Rows i0..m-1, columns k1..m-1: A_ij -= sum_{k0 <= k < k1} l_ik U_kj. */
SYM_INLINE void lu_update_rows(const int m, double *A, const int k0, const int k1, const int i0)
{
    for (int i = i0; i < m; i++) {
        double *ri = A + i * m;
        for (int k = k0; k < k1; k++) {
            const double l = ri[k];
            const double *rk = A + k * m;
            for (int j = k1; j < m; j++) ri[j] -= l * rk[j];
        }
    }
}

/* The trailing update after a full panel: four rows at a time, each element
 * kept in a register through the NB pivot rows (same order of operations). */
SYM_INLINE void lu_update_full(const int m, double *A, const int k0, const int k1, const int avx)
{
    (void)avx;
    int i = k1;
    for (; i + 3 < m; i += 4) {
        double *restrict r0 = A + i * m, *restrict r1 = r0 + m;
        double *restrict r2 = r1 + m, *restrict r3 = r2 + m;
        int j = k1;
#if SYM_AVX_DISPATCH
        if (avx) j = lu_update4_avx(r0, r1, r2, r3, A, m, k0, j);
#endif
#if SYM_VEC2
        j = lu_update4_v2(r0, r1, r2, r3, A, m, k0, j);
#endif
        for (; j < m; j++) {
            double a0 = r0[j], a1 = r1[j], a2 = r2[j], a3 = r3[j];
            for (int k = 0; k < LU_NB; k++) {
                const double t = A[(k0 + k) * m + j];
                a0 -= r0[k0 + k] * t;
                a1 -= r1[k0 + k] * t;
                a2 -= r2[k0 + k] * t;
                a3 -= r3[k0 + k] * t;
            }
            r0[j] = a0; r1[j] = a1; r2[j] = a2; r3[j] = a3;
        }
    }
    lu_update_rows(m, A, k0, k1, i);
}

int sym_lu_factor_ws(int m, double *A, int *piv, double *work)
{
    if (m <= LU_BLOCK_MIN) return sym_lu_factor_k(m, A, piv);
#if SYM_AVX_DISPATCH
    const int avx = __builtin_cpu_supports("avx");
#else
    const int avx = 0;
#endif
    for (int k0 = 0; k0 < m; k0 += LU_NB) {
        const int k1 = (k0 + LU_NB < m) ? k0 + LU_NB : m;   /* panel [k0, k1) */
        const int st = lu_panel(m, A, piv, k0, k1, work);
        if (st) return st;
        lu_panel_rows(m, A, k0, k1, avx);
        if (k1 - k0 == LU_NB)
            lu_update_full(m, A, k0, k1, avx);
        else
            lu_update_rows(m, A, k0, k1, k1);
    }
    return SYM_OK;
}

/* The public form: the blocked factorisation's panel buffer is allocated
 * here (the schemes use sym_lu_factor_ws with their workspace instead). */
int sym_lu_factor(int m, double *A, int *piv)
{
    const size_t nw = sym_lu_work_size(m);
    if (!nw) return sym_lu_factor_k(m, A, piv);
    double *P = malloc(sizeof(double) * nw);
    if (!P) return SYM_ENOMEM;
    const int st = sym_lu_factor_ws(m, A, piv, P);
    free(P);
    return st;
}

void sym_lu_solve(int m, const double *LU, const int *piv, double *b)
{
    sym_lu_solve_k(m, LU, piv, b);
}

/* Cholesky A = L L^T, lower triangle overwritten with L. */
int sym_cholesky(int m, double *A)
{
    for (int j = 0; j < m; j++) {
        double d = A[j * m + j];
        for (int k = 0; k < j; k++) d -= A[j * m + k] * A[j * m + k];
        if (!(d > 0.0) || !isfinite(d)) return SYM_EMASS;
        d = sqrt(d);
        A[j * m + j] = d;
        for (int i = j + 1; i < m; i++) {
            double s = A[i * m + j];
            for (int k = 0; k < j; k++) s -= A[i * m + k] * A[j * m + k];
            A[i * m + j] = s / d;
        }
    }
    return SYM_OK;
}

void sym_cholesky_solve(int m, const double *L, double *b)
{
    for (int i = 0; i < m; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++) s -= L[i * m + k] * b[k];
        b[i] = s / L[i * m + i];
    }
    for (int i = m - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < m; k++) s -= L[k * m + i] * b[k];
        b[i] = s / L[i * m + i];
    }
}

/* Instances of the kinetic energy for fixed n. */
#define SYM_KIN_SET(N)                                                                  \
    static int kinetic_##N(int n, const double *M, const double *p, double *U, double *y, \
                           double *inv, double *T)                                      \
    {                                                                                   \
        (void)n;                                                                        \
        return sym_kinetic_k(N, M, p, U, y, inv, T);                                    \
    }
SYM_KIN_SET(1)
SYM_KIN_SET(2)
SYM_KIN_SET(3)
SYM_KIN_SET(4)

static int kinetic_any(int n, const double *M, const double *p, double *U, double *y,
                       double *inv, double *T)
{
    return sym_kinetic_k(n, M, p, U, y, inv, T);
}

sym_kinetic_fn sym_kinetic_pick(int n)
{
    static const sym_kinetic_fn inst[4] = {kinetic_1, kinetic_2, kinetic_3, kinetic_4};
    return (n >= 1 && n <= 4) ? inst[n - 1] : kinetic_any;
}
