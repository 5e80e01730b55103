/*
 * sym_sincos.h -- sin and cos of a few angles at once, for the built-in
 * systems' evaluations (private).
 *
 * The math.  x = k pi/2 + r with k = nearest integer to x 2/pi and
 * |r| <= pi/4 (+ rounding).  pi/2 is split as P1 + P2 + P3: P1 and P2 hold
 * 33 significant bits each, P3 the next 53, so that k P1 and k P2 are exact
 * for |k| < 2^19; x - k P1 is exact by Sterbenz's lemma (Cody and Waite,
 * Software Manual for the Elementary Functions, 1980, ch. 8), and the two
 * later subtractions keep their rounding errors (Knuth's TwoSum), so that
 * the reduced argument is r + rl to about 2^-100 relative.  Then, with
 * z = r^2, the Taylor series
 *     sin r = r + r z (S1 + z S2 + ... + z^7 S8),  S_k = (-1)^k / (2k+1)!,
 *     cos r = 1 - z/2 + z^2 (C2 + z C3 + ... + z^6 C8),  C_k = (-1)^k / (2k)!,
 * truncated after r^17 and r^16: the first omitted terms are at most
 * (pi/4)^19/19! = 8e-20 and (pi/4)^18/18! = 2e-18, far below half an ulp
 * of the results (>= 0.70 on |r| <= pi/4).  The tail enters to first
 * order, sin(r + rl) = sin r + rl cos r, cos(r + rl) = cos r - rl sin r,
 * with cos r ~ 1 - z/2 and sin r ~ r (|rl| <= ulp(r)/2: the neglected
 * terms are below 2^-60 relative).  1 - z/2 is added with its rounding
 * error carried ((1 - w) - z/2 with w = 1 - z/2 is exact), as z/2 reaches
 * 0.31.  The two polynomials in z are evaluated by Estrin's scheme
 * (pairs, then z^2, then z^4: a dependency chain of 4 multiply-adds
 * instead of Horner's 7: the midpoint rule evaluates one node per Newton
 * iteration and waits for each result, so the shorter chain shortens its
 * step; measured in benchmarks/NOTES.md section 4).  The
 * quadrant k mod 4 then maps (sin r, cos r) to (sin x, cos x): 0: (s, c),
 * 1: (c, -s), 2: (-s, -c), 3: (-c, s).
 * Measured against 200-bit mpmath values: at most 0.78 ulp from the
 * correctly rounded result over the 8 400 arguments of tests/c_core/test_sincos.py
 * (1e-300 to 8e5, next to multiples of pi/4 among them), 0.86 ulp over
 * 92 000 more (the C library: < 1 ulp).
 * One difference from the C library: sin(-0) is +0.
 *
 * Why not libm: the double pendulum's step evaluates sin and cos of both
 * angles at 2-4 nodes per Newton iteration; the C library's sincos is a
 * call per angle with its own range reduction for any |x|.  Here two
 * lanes share one straight-line code path in the compiler's vector types,
 * one call for the double pendulum's prep: both angles and the difference
 * formulas (instruction counts: benchmarks/NOTES.md section 4); four lanes
 * (sym_sincos_fast4) for the angles of all of a Newton iterate's points
 * (dp_prep_n) and of the chain's O(n) step, where the CPU has AVX2.
 * Used by the built-in systems with several angles (double_pendulum,
 * pendulum_chain, four_bar); pendulum and lagrange_top, one angle each,
 * keep libm.
 * The time a step against libm's is in benchmarks/NOTES.md
 * section 4; the results differ from libm's in the last bits.
 *
 * The fast path needs |x| < SYM_SINCOS_FAST_MAX (so that |k| < 2^19) and
 * doubles evaluated in double precision (FLT_EVAL_METHOD == 0: the
 * rounding of x 2/pi to an integer adds and subtracts 1.5 2^52).  Any lane
 * outside it (|x| large, inf, NaN) sends the whole call to the C library's
 * sin and cos, lane by lane.
 */
#ifndef SYM_SINCOS_H
#define SYM_SINCOS_H

#include "sym_unroll.h"
#include "sym_simd.h"
#include "sym_util.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define SYM_SINCOS_FAST_MAX 8.0e5   /* < 2^19 pi/2 = 823550: |k| < 2^19 */

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define SYM_SINCOS_FAST 1
#else
#define SYM_SINCOS_FAST 0
#endif

/* The constants as type T, each made by K(value): 2/pi, the three-part split
 * of pi/2 (P1, P2: 33 bits; P3: 53), the rounding shift ((t + shift) -
 * shift = t rounded to an integer for |t| < 2^51) and the Taylor
 * coefficients (-1)^k/(2k+1)!, (-1)^k/(2k)! rounded to double. */
#define SYM_SINCOS_CONSTANTS(T, K)                                                                 \
    const T two_pi = K(0x1.45f306dc9c883p-1), shift = K(0x1.8p52), half = K(0.5), one = K(1.0);    \
    const T P1 = K(0x1.921fb544p+0), P2 = K(0x1.0b4611a6p-34), P3 = K(0x1.3198a2e037073p-69);      \
    const T S1 = K(-1.0 / 6.0), S2 = K(1.0 / 120.0), S3 = K(-1.0 / 5040.0),                        \
            S4 = K(1.0 / 362880.0), S5 = K(-1.0 / 39916800.0), S6 = K(1.0 / 6227020800.0),         \
            S7 = K(-1.0 / 1307674368000.0), S8 = K(1.0 / 355687428096000.0);                       \
    const T C2 = K(1.0 / 24.0), C3 = K(-1.0 / 720.0), C4 = K(1.0 / 40320.0),                       \
            C5 = K(-1.0 / 3628800.0), C6 = K(1.0 / 479001600.0),                                   \
            C7 = K(-1.0 / 87178291200.0), C8 = K(1.0 / 20922789888000.0)

/* One lane, or one vector of lanes (T a double type, U the unsigned 64-bit
 * type of its bit patterns), of the reduction (its locals end in _, apart
 * from the caller's names), the series and the
 * quadrant's selection described above, with the constants of
 * SYM_SINCOS_CONSTANTS(T, ...) in scope.  The quadrant q = k mod 4 is in
 * the low bits of t + shift (its bit pattern is that of 1.5 2^52 plus the
 * integer k); the selection and the signs are bitwise on the patterns
 * (exact, and branch-free). */
#define SYM_SINCOS_BODY(T, U, X, S, C)                                                             \
    do {                                                                                           \
        const T kt_ = (X) * two_pi + shift, k_ = kt_ - shift;                                      \
        const T a_ = (X) - k_ * P1, b_ = k_ * P2, c_ = k_ * P3;   /* a, b exact */                 \
        const T t_ = a_ - b_, tb_ = t_ - a_, e1_ = (a_ - (t_ - tb_)) - (b_ + tb_);   /* t + e1 = a - b */ \
        const T r_ = t_ - c_, rb_ = r_ - t_, e2_ = (t_ - (r_ - rb_)) - (c_ + rb_);   /* r + e2 = t - c */ \
        const T rl_ = e1_ + e2_;                                                                   \
        const T z_ = r_ * r_;                                                                      \
        const T hz_ = half * z_, w_ = one - hz_;                                                   \
        const T z2_ = z_ * z_, z4_ = z2_ * z2_;                                                \
        const T ps_ = ((S1 + z_ * S2) + z2_ * (S3 + z_ * S4)) +                                 \
                      z4_ * ((S5 + z_ * S6) + z2_ * (S7 + z_ * S8));                            \
        const T pc_ = ((C2 + z_ * C3) + z2_ * (C4 + z_ * C5)) +                                 \
                      z4_ * ((C6 + z_ * C7) + z2_ * C8);                                        \
        const T sr_ = r_ + (r_ * z_ * ps_ + rl_ * w_);                                          \
        const T cr_ = w_ + (((one - w_) - hz_) + (z2_ * pc_ - r_ * rl_));                       \
        U kb_, sb_, cb_;                                                                           \
        memcpy(&kb_, &kt_, sizeof kb_);                                                            \
        memcpy(&sb_, &sr_, sizeof sb_);                                                            \
        memcpy(&cb_, &cr_, sizeof cb_);                                                            \
        const U swap_ = -(kb_ & 1);   /* all ones for odd q */                                     \
        const U ua_ = (sb_ & ~swap_) | (cb_ & swap_), ub_ = (cb_ & ~swap_) | (sb_ & swap_);        \
        const U sa_ = ua_ ^ ((kb_ >> 1) << 63), ca_ = ub_ ^ (((kb_ + 1) >> 1) << 63);              \
        memcpy(&(S), &sa_, sizeof sa_);                                                            \
        memcpy(&(C), &ca_, sizeof ca_);                                                            \
    } while (0)

/* The lanes of a vector type T (bit patterns U, constants made by KM) W at
 * a time over x[i..n), i advanced past the last whole vector. */
#define SYM_SINCOS_LANES(T, U, KM, W, n, x, s, c, i)                                              \
    do {                                                                                           \
        SYM_SINCOS_CONSTANTS(T, KM);                                                               \
        for (; (i) + (W) <= (n); (i) += (W)) {                                                     \
            T xv_, sv_, cv_;                                                                       \
            memcpy(&xv_, (x) + (i), sizeof xv_);                                                   \
            SYM_SINCOS_BODY(T, U, xv_, sv_, cv_);                                                  \
            memcpy((s) + (i), &sv_, sizeof sv_);                                                   \
            memcpy((c) + (i), &cv_, sizeof cv_);                                                   \
        }                                                                                          \
    } while (0)

#define SYM_SINCOS_K1(v) (v)
#if SYM_VEC2
#define SYM_SINCOS_K2(v) {v, v}
#endif

/* 1 when every x[i], i < n, is in the fast path's range (and the fast path
 * exists): sym_sincos_fast may then take them. */
SYM_INLINE int sym_sincos_all_fast(const int n, const double *restrict x)
{
    int fast = SYM_SINCOS_FAST;
    SYM_UNROLL
    for (int i = 0; i < n; i++) fast &= fabs(x[i]) < SYM_SINCOS_FAST_MAX;   /* NaN: 0 */
    return fast;
}

/* The fast path of sym_sincos_n, for x that sym_sincos_all_fast accepts. */
SYM_INLINE void sym_sincos_fast(const int n, const double *restrict x, double *restrict s,
                                double *restrict c)
{
    int i = 0;
#if SYM_VEC2
    /* two lanes at a time in the compiler's vector types: the same IEEE
     * operations, in the same order, as one lane */
    SYM_SINCOS_LANES(sym_v2d, sym_v2u, SYM_SINCOS_K2, 2, n, x, s, c, i);
#endif
    {
        SYM_SINCOS_CONSTANTS(double, SYM_SINCOS_K1);
        for (; i < n; i++) SYM_SINCOS_BODY(double, uint64_t, x[i], s[i], c[i]);
    }
}

/* s[i] = sin(x[i]), c[i] = cos(x[i]), i < n; n a compile-time constant
 * where the call is inlined (the loops then unroll). */
SYM_INLINE void sym_sincos_n(const int n, const double *restrict x, double *restrict s,
                             double *restrict c)
{
    if (!sym_sincos_all_fast(n, x)) {
        for (int i = 0; i < n; i++) {
            s[i] = sin(x[i]);
            c[i] = cos(x[i]);
        }
        return;
    }
    sym_sincos_fast(n, x, s, c);
}

#if SYM_FMA_DISPATCH
/* sym_sincos_fast four lanes at a time, for a caller that checked AVX2 at
 * run time: the same IEEE operations in the same order (the target has no
 * fused multiply-add to contract them into), so bitwise the results of
 * sym_sincos_fast. */
typedef uint64_t sym_v4u __attribute__((vector_size(32)));
#define SYM_SINCOS_K4(v) {v, v, v, v}
SYM_AVX2 static inline void sym_sincos_fast4(const int n, const double *restrict x,
                                             double *restrict s, double *restrict c)
{
    int i = 0;
    SYM_SINCOS_LANES(sym_v4d, sym_v4u, SYM_SINCOS_K4, 4, n, x, s, c, i);
    if (i < n) sym_sincos_fast(n - i, x + i, s + i, c + i);
}

/* sym_sincos_n with sym_sincos_fast4 (the same results) */
SYM_AVX2 static inline void sym_sincos_n4(const int n, const double *restrict x,
                                          double *restrict s, double *restrict c)
{
    if (!sym_sincos_all_fast(n, x))
        sym_sincos_n(n, x, s, c);
    else
        sym_sincos_fast4(n, x, s, c);
}
#endif

#endif /* SYM_SINCOS_H */
