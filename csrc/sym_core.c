/*
 * sym_core.c -- status strings, dense linear algebra, evaluation of a
 * system's quantities through its callback slots (with finite-difference
 * fallbacks), and the energy H(q, p).
 */
#include "sym_internal.h"

#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
/* AVX (256-bit, no FMA) for the LU trailing update, chosen at run time on
 * x86-64 with GCC or Clang: the binary stays baseline x86-64. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(SYM_NO_AVX)
#define SYM_AVX_DISPATCH 1
#include <immintrin.h>
#else
#define SYM_AVX_DISPATCH 0
#endif
#include <stdlib.h>
#include <string.h>

const char *sym_strerror(int status)
{
    switch (status) {
    case SYM_OK: return "success";
    case SYM_ECALLBACK: return "a system callback reported an error";
    case SYM_ENOCONV: return "Newton iteration did not converge";
    case SYM_ESINGULAR: return "Newton matrix is singular";
    case SYM_ENONFINITE: return "a non-finite value (nan or inf) appeared";
    case SYM_EMASS: return "mass matrix is not symmetric positive definite";
    case SYM_EINVAL: return "invalid argument";
    case SYM_ENOMEM: return "out of memory";
    case SYM_EMETHOD: return "unknown method";
    case SYM_ESYSTEM: return "unknown built-in system or invalid parameters";
    case SYM_EINTERRUPT: return "interrupted";
    case SYM_EIMPLAUSIBLE:
        return "implausible Newton root: the step's final kinetic energy exceeds 10 times its "
               "initial kinetic energy plus the work of the potential along it (a spurious "
               "solution of the step equations, or h beyond the stability limit; reduce h)";
    default: return "unknown status code";
    }
}

/* Dense LU with partial pivoting: the kernels live in sym_internal.h so
 * that the schemes can instantiate them for small fixed sizes. */
/*
 * Blocked right-looking variant for larger m: factor a panel of NB columns,
 * form the panel's rows of U, then update the trailing matrix four rows at
 * a time with all NB pivots while the rows sit in registers (two columns per
 * SSE2 register, four per AVX register when the CPU has AVX: separate
 * multiply and subtract, exactly the scalar operations).  Every element receives the same updates in the
 * same order as in the unblocked kernel, so the factors are bitwise
 * identical; only memory traffic and instruction count drop.
 */
#define LU_NB 8
#define LU_PANEL_ROWS 512   /* panel copies of up to this many rows live on the stack */

#if SYM_AVX_DISPATCH
/* Rows r0..r3 -= their panel multipliers (columns k0..k0+NB-1) times the
 * panel rows, for columns from j on in blocks of eight, then of four, while
 * a whole block remains; returns the first column not done.  Separate multiply and subtract in the scalar order, so
 * the results are bitwise those of the SSE2 and scalar loops. */
__attribute__((target("avx")))
static int lu_update4_avx(double *restrict r0, double *restrict r1, double *restrict r2,
                          double *restrict r3, const double *A, int m, int k0, int j)
{
    /* 4 rows x 8 columns: eight accumulators stay in registers through the
     * NB pivot rows; the multipliers are broadcast from memory as needed */
    for (; j + 7 < m; j += 8) {
        __m256d a0 = _mm256_loadu_pd(r0 + j), b0 = _mm256_loadu_pd(r0 + j + 4);
        __m256d a1 = _mm256_loadu_pd(r1 + j), b1 = _mm256_loadu_pd(r1 + j + 4);
        __m256d a2 = _mm256_loadu_pd(r2 + j), b2 = _mm256_loadu_pd(r2 + j + 4);
        __m256d a3 = _mm256_loadu_pd(r3 + j), b3 = _mm256_loadu_pd(r3 + j + 4);
        for (int k = 0; k < LU_NB; k++) {
            const double *t = A + (k0 + k) * m + j;
            const __m256d t0 = _mm256_loadu_pd(t), t1 = _mm256_loadu_pd(t + 4);
            __m256d l = _mm256_broadcast_sd(r0 + k0 + k);
            a0 = _mm256_sub_pd(a0, _mm256_mul_pd(l, t0));
            b0 = _mm256_sub_pd(b0, _mm256_mul_pd(l, t1));
            l = _mm256_broadcast_sd(r1 + k0 + k);
            a1 = _mm256_sub_pd(a1, _mm256_mul_pd(l, t0));
            b1 = _mm256_sub_pd(b1, _mm256_mul_pd(l, t1));
            l = _mm256_broadcast_sd(r2 + k0 + k);
            a2 = _mm256_sub_pd(a2, _mm256_mul_pd(l, t0));
            b2 = _mm256_sub_pd(b2, _mm256_mul_pd(l, t1));
            l = _mm256_broadcast_sd(r3 + k0 + k);
            a3 = _mm256_sub_pd(a3, _mm256_mul_pd(l, t0));
            b3 = _mm256_sub_pd(b3, _mm256_mul_pd(l, t1));
        }
        _mm256_storeu_pd(r0 + j, a0); _mm256_storeu_pd(r0 + j + 4, b0);
        _mm256_storeu_pd(r1 + j, a1); _mm256_storeu_pd(r1 + j + 4, b1);
        _mm256_storeu_pd(r2 + j, a2); _mm256_storeu_pd(r2 + j + 4, b2);
        _mm256_storeu_pd(r3 + j, a3); _mm256_storeu_pd(r3 + j + 4, b3);
    }
    __m256d L0[LU_NB], L1[LU_NB], L2[LU_NB], L3[LU_NB];
    for (int k = 0; k < LU_NB; k++) {
        L0[k] = _mm256_set1_pd(r0[k0 + k]); L1[k] = _mm256_set1_pd(r1[k0 + k]);
        L2[k] = _mm256_set1_pd(r2[k0 + k]); L3[k] = _mm256_set1_pd(r3[k0 + k]);
    }
    for (; j + 3 < m; j += 4) {
        __m256d a0 = _mm256_loadu_pd(r0 + j), a1 = _mm256_loadu_pd(r1 + j);
        __m256d a2 = _mm256_loadu_pd(r2 + j), a3 = _mm256_loadu_pd(r3 + j);
        for (int k = 0; k < LU_NB; k++) {
            const __m256d t = _mm256_loadu_pd(A + (k0 + k) * m + j);
            a0 = _mm256_sub_pd(a0, _mm256_mul_pd(L0[k], t));
            a1 = _mm256_sub_pd(a1, _mm256_mul_pd(L1[k], t));
            a2 = _mm256_sub_pd(a2, _mm256_mul_pd(L2[k], t));
            a3 = _mm256_sub_pd(a3, _mm256_mul_pd(L3[k], t));
        }
        _mm256_storeu_pd(r0 + j, a0); _mm256_storeu_pd(r1 + j, a1);
        _mm256_storeu_pd(r2 + j, a2); _mm256_storeu_pd(r3 + j, a3);
    }
    return j;
}

/* Row i of the panel (k0 < i < k0 + NB), columns j, j+4, ...:
 * A_ij -= sum_{k0 <= k < i} l_ik U_kj, k ascending as in the scalar loop. */
__attribute__((target("avx")))
static int lu_panel_row_avx(double *restrict ri, const double *A, int m, int k0, int i, int j)
{
    for (; j + 3 < m; j += 4) {
        __m256d a = _mm256_loadu_pd(ri + j);
        for (int k = k0; k < i; k++)
            a = _mm256_sub_pd(a, _mm256_mul_pd(_mm256_broadcast_sd(ri + k),
                                               _mm256_loadu_pd(A + k * m + j)));
        _mm256_storeu_pd(ri + j, a);
    }
    return j;
}
#endif

/* Panel factorisation (columns [k0, k1), rows k0..m-1) with partial
 * pivoting, right-looking: for each pivot column k the largest |A_ik|,
 * i >= k, is swapped into row k, the multipliers l_ik = A_ik / A_kk are
 * stored in place of A_ik (the diagonal holds 1 / A_kk) and the remaining
 * panel columns are updated; columns outside the panel only see the row
 * swaps here.  The panel is factored in a contiguous copy P (stride LU_NB):
 * with a power-of-two m its column segments of A, m doubles apart, fall
 * into a few cache sets and evict each other, which made the panel cost as
 * much as the whole trailing update.  Same operations in the same order as
 * the unblocked kernel, so bitwise the same factors. */
static int lu_panel_copy(const int m, double *A, int *piv, const int k0, const int k1, double *P)
{
    const int w = k1 - k0, rows = m - k0;
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < w; c++) P[i * LU_NB + c] = A[(k0 + i) * m + k0 + c];
    for (int kk = 0; kk < w; kk++) {
        int p = kk;
        double amax = fabs(P[kk * LU_NB + kk]);
        for (int i = kk + 1; i < rows; i++) {
            const double v = fabs(P[i * LU_NB + kk]);
            if (v > amax) { amax = v; p = i; }
        }
        piv[k0 + kk] = k0 + p;
        if (!isfinite(amax)) return SYM_ENONFINITE;
        if (!(amax > 0.0)) return SYM_ESINGULAR;
        if (p != kk) {
            double *pk = P + kk * LU_NB, *pp = P + p * LU_NB;
            for (int c = 0; c < w; c++) { const double t = pk[c]; pk[c] = pp[c]; pp[c] = t; }
            double *rk = A + (k0 + kk) * m, *rp = A + (k0 + p) * m;
            for (int j = 0; j < k0; j++) { const double t = rk[j]; rk[j] = rp[j]; rp[j] = t; }
            for (int j = k1; j < m; j++) { const double t = rk[j]; rk[j] = rp[j]; rp[j] = t; }
        }
        const double inv = 1.0 / P[kk * LU_NB + kk];
        P[kk * LU_NB + kk] = inv;
        const double *pk = P + kk * LU_NB;
        for (int i = kk + 1; i < rows; i++) {
            double *pi = P + i * LU_NB;
            const double l = pi[kk] * inv;
            pi[kk] = l;
            for (int c = kk + 1; c < w; c++) pi[c] -= l * pk[c];
        }
    }
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < w; c++) A[(k0 + i) * m + k0 + c] = P[i * LU_NB + c];
    return SYM_OK;
}

static int lu_factor_blocked(const int m, double *A, int *piv)
{
    int st = SYM_OK;
#if SYM_AVX_DISPATCH
    const int avx = __builtin_cpu_supports("avx");
#endif
    /* the panel copy: on the stack up to LU_PANEL_ROWS rows, else one heap
     * block per factorisation (O(m LU_NB) memory against O(m^3) work) */
    double Pstack[LU_PANEL_ROWS * LU_NB];
    double *P = Pstack;
    if (m > LU_PANEL_ROWS) {
        P = malloc(sizeof(double) * (size_t)m * LU_NB);
        if (!P) return SYM_ENOMEM;
    }
    for (int k0 = 0; k0 < m; k0 += LU_NB) {
        const int k1 = (k0 + LU_NB < m) ? k0 + LU_NB : m;   /* panel [k0, k1) */
        st = lu_panel_copy(m, A, piv, k0, k1, P);
        if (st) break;
        /* columns >= k1: the panel's pivots in order, for every row below
         * k0 (for the panel's own rows this is the forward substitution
         * with the unit lower triangle of the panel) */
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
        if (k1 - k0 == LU_NB) {
            /* full panel: 4 rows at a time, each element kept in a register
             * through the NB pivot rows (same order of operations) */
            int i = k1;
            for (; i + 3 < m; i += 4) {
                double *restrict r0 = A + i * m, *restrict r1 = r0 + m;
                double *restrict r2 = r1 + m, *restrict r3 = r2 + m;
                int j = k1;
#if SYM_AVX_DISPATCH
                if (avx) j = lu_update4_avx(r0, r1, r2, r3, A, m, k0, j);
#endif
#if defined(__SSE2__)
                __m128d L0[LU_NB], L1[LU_NB], L2[LU_NB], L3[LU_NB];
                for (int k = 0; k < LU_NB; k++) {
                    L0[k] = _mm_set1_pd(r0[k0 + k]); L1[k] = _mm_set1_pd(r1[k0 + k]);
                    L2[k] = _mm_set1_pd(r2[k0 + k]); L3[k] = _mm_set1_pd(r3[k0 + k]);
                }
                for (; j + 1 < m; j += 2) {
                    __m128d a0 = _mm_loadu_pd(r0 + j), a1 = _mm_loadu_pd(r1 + j);
                    __m128d a2 = _mm_loadu_pd(r2 + j), a3 = _mm_loadu_pd(r3 + j);
                    for (int k = 0; k < LU_NB; k++) {
                        const __m128d t = _mm_loadu_pd(A + (k0 + k) * m + j);
                        a0 = _mm_sub_pd(a0, _mm_mul_pd(L0[k], t));
                        a1 = _mm_sub_pd(a1, _mm_mul_pd(L1[k], t));
                        a2 = _mm_sub_pd(a2, _mm_mul_pd(L2[k], t));
                        a3 = _mm_sub_pd(a3, _mm_mul_pd(L3[k], t));
                    }
                    _mm_storeu_pd(r0 + j, a0); _mm_storeu_pd(r1 + j, a1);
                    _mm_storeu_pd(r2 + j, a2); _mm_storeu_pd(r3 + j, a3);
                }
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
            for (; i < m; i++) {
                double *ri = A + i * m;
                for (int k = k0; k < k1; k++) {
                    const double l = ri[k];
                    const double *rk = A + k * m;
                    for (int j = k1; j < m; j++) ri[j] -= l * rk[j];
                }
            }
        } else {
            for (int i = k1; i < m; i++) {
                double *ri = A + i * m;
                for (int k = k0; k < k1; k++) {
                    const double l = ri[k];
                    const double *rk = A + k * m;
                    for (int j = k1; j < m; j++) ri[j] -= l * rk[j];
                }
            }
        }
    }
    if (P != Pstack) free(P);
    return st;
}

int sym_lu_factor(int m, double *A, int *piv)
{
    if (m > 4 * LU_NB) return lu_factor_blocked(m, A, piv);
    return sym_lu_factor_k(m, A, piv);
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

/* ------------------------------------------------------------------ */
/* Evaluation through the callback slots                                */
/* ------------------------------------------------------------------ */
size_t sym_eval_scratch_size(const sym_system *sys)
{
    const size_t n = (size_t)sys->n;
    const size_t fd = n * n + 4u * n;
    return fd > sys->scratch_size ? fd : sys->scratch_size;
}

/* Central-difference step for coordinate value x: eps^(1/3) scaled. */
static double fd_step(double x)
{
    const double base = 6.0554544523933395e-06; /* cbrt(DBL_EPSILON) */
    double ax = fabs(x);
    return base * (ax > 1.0 ? ax : 1.0);
}

/* H(q,g)_{cd} = d/dq_d [ 1/2 (A(q,g)^T g)_c ], central differences of the
 * exact first derivative (error O(delta^2) ~ 1e-10 relative), symmetrised. */
static int fd_mass_hess(const sym_system *sys, const double *q, const double *g,
                        double *H, double *scratch)
{
    const int n = sys->n;
    double *qq = scratch, *A = qq + n, *fp = A + (size_t)n * n, *fm = fp + n;
    memcpy(qq, q, sizeof(double) * (size_t)n);
    for (int d = 0; d < n; d++) {
        const double dl = fd_step(q[d]);
        for (int sgn = 0; sgn < 2; sgn++) {
            double *f = sgn ? fm : fp;
            qq[d] = q[d] + (sgn ? -dl : dl);
            if (sys->mass_dir(qq, g, A, sys->params)) return SYM_ECALLBACK;
            for (int c = 0; c < n; c++) {
                double s = 0.0;
                for (int i = 0; i < n; i++) s += A[i * n + c] * g[i];
                f[c] = 0.5 * s;
            }
        }
        qq[d] = q[d];
        for (int c = 0; c < n; c++) H[c * n + d] = (fp[c] - fm[c]) / (2.0 * dl);
    }
    for (int c = 0; c < n; c++)
        for (int d = c + 1; d < n; d++) {
            double v = 0.5 * (H[c * n + d] + H[d * n + c]);
            H[c * n + d] = H[d * n + c] = v;
        }
    return SYM_OK;
}

/* hess V by central differences of grad V, symmetrised. */
static int fd_potential_hess(const sym_system *sys, const double *q,
                             double *K, double *scratch)
{
    const int n = sys->n;
    double *qq = scratch, *fp = qq + n, *fm = fp + n;
    memcpy(qq, q, sizeof(double) * (size_t)n);
    for (int d = 0; d < n; d++) {
        const double dl = fd_step(q[d]);
        qq[d] = q[d] + dl;
        if (sys->potential_grad(qq, fp, sys->params)) return SYM_ECALLBACK;
        qq[d] = q[d] - dl;
        if (sys->potential_grad(qq, fm, sys->params)) return SYM_ECALLBACK;
        qq[d] = q[d];
        for (int c = 0; c < n; c++) K[c * n + d] = (fp[c] - fm[c]) / (2.0 * dl);
    }
    for (int c = 0; c < n; c++)
        for (int d = c + 1; d < n; d++) {
            double v = 0.5 * (K[c * n + d] + K[d * n + c]);
            K[c * n + d] = K[d * n + c] = v;
        }
    return SYM_OK;
}

int sym_eval(const sym_system *sys, const double *q, const double *g,
             unsigned need, const sym_eval_out *out, double *scratch)
{
    const int n = sys->n;
    const size_t nn = (size_t)n * (size_t)n;
    void *par = sys->params;

    if (sys->eval_batch) {
        const unsigned nd = need;
        return sys->eval_batch(1, q, g, &nd, out, par, sys->scratch_size ? scratch : NULL)
                   ? SYM_ECALLBACK : SYM_OK;
    }
    if (sys->eval)
        return sys->eval(q, g, need, out, par, sys->scratch_size ? scratch : NULL)
                   ? SYM_ECALLBACK : SYM_OK;

    if (need & SYM_NEED_M)
        if (sys->mass(q, out->M, par)) return SYM_ECALLBACK;
    if (need & SYM_NEED_A) {
        if (sys->mass_dir) {
            if (sys->mass_dir(q, g, out->A, par)) return SYM_ECALLBACK;
        } else {
            memset(out->A, 0, sizeof(double) * nn);
        }
    }
    if (need & SYM_NEED_H) {
        if (sys->mass_hess_dir) {
            if (sys->mass_hess_dir(q, g, out->H, par)) return SYM_ECALLBACK;
        } else if (sys->mass_dir) {
            int st = fd_mass_hess(sys, q, g, out->H, scratch);
            if (st) return st;
        } else {
            memset(out->H, 0, sizeof(double) * nn);
        }
    }
    if (need & SYM_NEED_V) {
        if (!sys->potential) return SYM_EINVAL;
        if (sys->potential(q, out->V, par)) return SYM_ECALLBACK;
    }
    if (need & SYM_NEED_DV)
        if (sys->potential_grad(q, out->dV, par)) return SYM_ECALLBACK;
    if (need & SYM_NEED_D2V) {
        if (sys->potential_hess) {
            if (sys->potential_hess(q, out->d2V, par)) return SYM_ECALLBACK;
        } else {
            int st = fd_potential_hess(sys, q, out->d2V, scratch);
            if (st) return st;
        }
    }
    return SYM_OK;
}

int sym_eval_points(const sym_system *sys, int npts, const double *Q,
                    const double *G, const unsigned *need, const sym_eval_out *out,
                    double *scratch)
{
    const size_t n = (size_t)sys->n;
    if (sys->eval_batch)
        return sys->eval_batch(npts, Q, G, need, out, sys->params,
                               sys->scratch_size ? scratch : NULL) ? SYM_ECALLBACK : SYM_OK;
    for (int k = 0; k < npts; k++) {
        const int st = sym_eval(sys, Q + (size_t)k * n, G ? G + (size_t)k * n : NULL, need[k],
                                &out[k], scratch);
        if (st) return st;
    }
    return SYM_OK;
}

size_t sym_energy_scratch_size(const sym_system *sys)
{
    const size_t n = (size_t)sys->n;
    return n * n + n + sym_eval_scratch_size(sys);
}

/* H = 1/2 p^T M^{-1} p + V = 1/2 |L^{-1} p|^2 + V with M = L L^T. */
int sym_energy(const sym_system *sys, const double *q, const double *p,
               double *H, double *scratch)
{
    const int n = sys->n;
    double *M = scratch, *z = M + (size_t)n * n, *rest = z + n;
    double V = 0.0;
    sym_eval_out out = {0};
    out.M = M;
    out.V = &V;
    int st = sym_eval(sys, q, NULL, SYM_NEED_M | SYM_NEED_V, &out, rest);
    if (st) return st;
    st = sym_cholesky(n, M);
    if (st) return st;
    double kin = 0.0;
    for (int i = 0; i < n; i++) {
        double s = p[i];
        for (int k = 0; k < i; k++) s -= M[i * n + k] * z[k];
        z[i] = s / M[i * n + i];
        kin += z[i] * z[i];
    }
    *H = 0.5 * kin + V;
    return isfinite(*H) ? SYM_OK : SYM_ENONFINITE;
}
