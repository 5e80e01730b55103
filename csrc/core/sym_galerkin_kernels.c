/*
 * sym_galerkin_kernels.c -- the inner loops of the Galerkin engine
 * (sym_galerkin.c holds the formulas; sym_newton.c the Newton iteration),
 * instantiated: the workers are sym_gk_general.h (a general quadrature),
 * sym_gk_lobatto.h (Lobatto quadrature at the nodes), sym_gk_pairs.h (the
 * same two components at a time) and sym_gk_predict.h (predictors and the
 * step's outputs), all inlined here.
 *
 * Each kernel is written once for a runtime size and instantiated for small
 * compile-time sizes, where the compiler unrolls the loops completely: the
 * papers' systems have n = 1..4 and Simpson has s = 3 nodes.  The
 * instances compute exactly the same sums as the generic code.  The Lobatto
 * members with s = 4..7 nodes (orders 6 to 12) have instances for n = 1..4
 * too ("lobatto3", the generic cross-check of Simpson, deliberately not).
 *
 * The sums start from their first term, not from 0.0 + it: the same
 * numbers (only a -0.0 result may now stay -0.0), one dependent addition
 * fewer on each chain.
 *
 * Lobatto with n > 4 (long chains, robots read from URDF, the O(n) chain
 * step's points and predictor; not Simpson, which keeps its s = 3
 * instance lob_3_any) runs an AVX2 instance where the CPU has it:
 * the same code for four components at a time (the points by hand, the
 * rest by the compiler's vectoriser), no fused multiply-add, so the same
 * numbers bitwise.
 */
#include "sym_simd.h"
#include "sym_gk_general.h"
#include "sym_gk_lobatto.h"
#include "sym_gk_pairs.h"
#include "sym_gk_predict.h"

/* ------------------------------------------------------------------ */
/* Lobatto kernels and predictor: in pairs where pairs_ok, else scalar  */
/* ------------------------------------------------------------------ */
SYM_INLINE double residual_lob_k(sym_gwork *w, const double *p, double h, double *Rnorm,
                                 const int s, const int n, const int fixed)
{
#if SYM_VEC2
    if (pairs_ok(fixed, n) && !w->base.force)
        return residual_lob_pairs(s, n, h, w->tab, p, w->Mp, w->Ap, w->Gp, w->dVp, w->f, w->P,
                                  w->R, Rnorm);
#else
    (void)fixed;
#endif
    return residual_lob_x(s, n, h, w->tab, p, w->Mp, w->Ap, w->Gp, w->dVp,
                          w->base.force ? w->base.force->F : NULL, w->f, w->P, w->R, Rnorm);
}

/* b_i D_ia D_ib / h for the step size h (kept while h stays) */
static void jacobian_coefficients(sym_gtab *t, double h)
{
    const double ih = inverse_step(t, h);
    for (int a = 0; a <= t->s - 2; a++)
        for (int b = 1; b <= t->s - 1; b++)
            for (int i = 0; i < t->s; i++) t->jac_cM[a][b - 1][i] = t->bDD[a][b][i] * ih;
    t->jac_h = h;
}

SYM_INLINE int jacobian_lob_k(sym_gwork *w, double h, const int s, const int n,
                               const int fixed)
{
    if (!(w->tab->jac_h == h)) jacobian_coefficients(w->tab, h);
    /* non-finite entries surface in the LU or the update */
#if SYM_VEC2
    if (pairs_ok(fixed, n)) {
        jacobian_lob_pairs(s, n, h, w->tab, &w->tab->jac_cM[0][0][0], w->Mp, w->Ap, w->Hp,
                           w->Kp, w->J);
        return SYM_OK;
    }
#endif
    jacobian_lob_x(fixed, s, n, h, w->tab, &w->tab->jac_cM[0][0][0], w->Mp, w->Ap, w->Hp,
                   w->Kp, w->J);
    return SYM_OK;
}

SYM_INLINE void correct_lob_k(sym_gwork *w, double h, const int s, const int n,
                              const int fixed)
{
#if SYM_VEC2
    if (pairs_ok(fixed, n)) {
        correct_lob_pairs(s, n, inverse_step(w->tab, h), w->tab, w->Ap, w->Hp, w->Kp, w->dX,
                          w->f);
        return;
    }
#else
    (void)fixed;
#endif
    correct_lob_x(s, n, inverse_step(w->tab, h), w->tab, w->Ap, w->Hp, w->Kp, w->dX, w->f,
                  w->acc);
}

SYM_INLINE void predict_k(sym_gwork *w, const int kind, const int s, const int n,
                          const int fixed)
{
#if SYM_VEC2
    if (pairs_ok(fixed, n)) {
        predict_pairs(s, n, kind, w->tab, w->prev_X, w->prev2_X, w->X);
        return;
    }
#else
    (void)fixed;
#endif
    predict_x(s, n, kind, w->tab, w->prev_X, w->prev2_X, w->X);
}

/* ------------------------------------------------------------------ */
/* Instances                                                            */
/* ------------------------------------------------------------------ */
#define SYM_KERNEL_SET(FAM, NAME, S, N, FIXED)                                          \
    static void predict_##FAM##NAME(sym_gwork *w, int kind)                               \
    {                                                                                   \
        predict_k(w, kind, S, N, FIXED);                                                \
    }                                                                                   \
    static void form_points_##FAM##NAME(sym_gwork *w, const double *q, double h)          \
    {                                                                                   \
        form_points_##FAM##k(w, q, h, S, N);                                            \
    }                                                                                   \
    static double residual_##FAM##NAME(sym_gwork *w, const double *p, double h, double *rn) \
    {                                                                                   \
        return residual_##FAM##k(w, p, h, rn, S, N, FIXED);                             \
    }                                                                                   \
    static int jacobian_##FAM##NAME(sym_gwork *w, double h)                               \
    {                                                                                   \
        return jacobian_##FAM##k(w, h, S, N, FIXED);                                    \
    }                                                                                   \
    static void correct_##FAM##NAME(sym_gwork *w, double h)                               \
    {                                                                                   \
        correct_##FAM##k(w, h, S, N, FIXED);                                            \
    }                                                                                   \
    static double outputs_##FAM##NAME(sym_gwork *w, double h)                             \
    {                                                                                   \
        return outputs_##FAM##k(w, h, S, N);                                            \
    }

SYM_KERNEL_SET(, 1, w->tab->s, 1, 0)
SYM_KERNEL_SET(, 2, w->tab->s, 2, 0)
SYM_KERNEL_SET(, 3, w->tab->s, 3, 0)
SYM_KERNEL_SET(, 4, w->tab->s, 4, 0)
SYM_KERNEL_SET(, any, w->tab->s, w->n, 0)
SYM_KERNEL_SET(lob_, 3_1, 3, 1, 1)
SYM_KERNEL_SET(lob_, 3_2, 3, 2, 1)
SYM_KERNEL_SET(lob_, 3_3, 3, 3, 1)
SYM_KERNEL_SET(lob_, 3_4, 3, 4, 1)
SYM_KERNEL_SET(lob_, 3_any, 3, w->n, 1)
SYM_KERNEL_SET(lob_, 4_1, 4, 1, 1)
SYM_KERNEL_SET(lob_, 4_2, 4, 2, 1)
SYM_KERNEL_SET(lob_, 4_3, 4, 3, 1)
SYM_KERNEL_SET(lob_, 4_4, 4, 4, 1)
SYM_KERNEL_SET(lob_, 5_1, 5, 1, 1)
SYM_KERNEL_SET(lob_, 5_2, 5, 2, 1)
SYM_KERNEL_SET(lob_, 5_3, 5, 3, 1)
SYM_KERNEL_SET(lob_, 5_4, 5, 4, 1)
SYM_KERNEL_SET(lob_, 6_1, 6, 1, 1)
SYM_KERNEL_SET(lob_, 6_2, 6, 2, 1)
SYM_KERNEL_SET(lob_, 6_3, 6, 3, 1)
SYM_KERNEL_SET(lob_, 6_4, 6, 4, 1)
SYM_KERNEL_SET(lob_, 7_1, 7, 1, 1)
SYM_KERNEL_SET(lob_, 7_2, 7, 2, 1)
SYM_KERNEL_SET(lob_, 7_3, 7, 3, 1)
SYM_KERNEL_SET(lob_, 7_4, 7, 4, 1)
SYM_KERNEL_SET(lob_, any, w->tab->s, w->n, 0)

#if SYM_FMA_DISPATCH
/* The same for AVX2 (no fused multiply-add: the same operations, bitwise
 * the same numbers; the compiler's vectoriser takes four entries at a
 * time where the loops allow), for n > 4 where the CPU has it. */
#define SYM_KERNEL_SET_AVX2(FAM, NAME, S, N, FIXED)                                     \
    SYM_AVX2 static void predict_##FAM##NAME(sym_gwork *w, int kind)                      \
    {                                                                                   \
        predict_k(w, kind, S, N, FIXED);                                                \
    }                                                                                   \
    SYM_AVX2 static void form_points_##FAM##NAME(sym_gwork *w, const double *q, double h) \
    {                                                                                   \
        form_points_##FAM##v4_k(w, q, h, S, N);                                         \
    }                                                                                   \
    SYM_AVX2 static double residual_##FAM##NAME(sym_gwork *w, const double *p, double h,  \
                                                double *rn)                             \
    {                                                                                   \
        return residual_##FAM##k(w, p, h, rn, S, N, FIXED);                             \
    }                                                                                   \
    SYM_AVX2 static int jacobian_##FAM##NAME(sym_gwork *w, double h)                      \
    {                                                                                   \
        return jacobian_##FAM##k(w, h, S, N, FIXED);                                    \
    }                                                                                   \
    SYM_AVX2 static void correct_##FAM##NAME(sym_gwork *w, double h)                      \
    {                                                                                   \
        correct_##FAM##k(w, h, S, N, FIXED);                                            \
    }                                                                                   \
    SYM_AVX2 static double outputs_##FAM##NAME(sym_gwork *w, double h)                    \
    {                                                                                   \
        return outputs_##FAM##k(w, h, S, N);                                            \
    }
SYM_KERNEL_SET_AVX2(lob_, any_avx2, w->tab->s, w->n, 0)
#endif

#define KSET(FAM, NAME)                                                                 \
    {predict_##FAM##NAME, form_points_##FAM##NAME, residual_##FAM##NAME,                 \
     jacobian_##FAM##NAME, correct_##FAM##NAME, outputs_##FAM##NAME}

/* Lobatto instances by [s - 3][n - 1] for s = 3..7 and n = 1..4. */
static const sym_gkernels lob_fixed[5][4] = {
    {KSET(lob_, 3_1), KSET(lob_, 3_2), KSET(lob_, 3_3), KSET(lob_, 3_4)},
    {KSET(lob_, 4_1), KSET(lob_, 4_2), KSET(lob_, 4_3), KSET(lob_, 4_4)},
    {KSET(lob_, 5_1), KSET(lob_, 5_2), KSET(lob_, 5_3), KSET(lob_, 5_4)},
    {KSET(lob_, 6_1), KSET(lob_, 6_2), KSET(lob_, 6_3), KSET(lob_, 6_4)},
    {KSET(lob_, 7_1), KSET(lob_, 7_2), KSET(lob_, 7_3), KSET(lob_, 7_4)},
};
static const sym_gkernels lob_3_any = KSET(lob_, 3_any), lob_any = KSET(lob_, any);
#if SYM_FMA_DISPATCH
static const sym_gkernels lob_any_avx2 = KSET(lob_, any_avx2);
#endif
static const sym_gkernels gen_fixed[4] = {KSET(, 1), KSET(, 2), KSET(, 3), KSET(, 4)};
static const sym_gkernels gen_any = KSET(, any);

/* Lobatto quadrature at the nodes (B = I) runs the collapsed kernels, others
 * the term lists; instances for fixed s and n where they exist, unless the
 * method row asks for the general code (SYM_METHOD_GENERIC). */
void sym_galerkin_pick_kernels(sym_gwork *w)
{
    const int s = w->tab->s, n = w->n;
    const int fixed = !(w->base.method->flags & SYM_METHOD_GENERIC);
    if (w->tab->lobatto) {
        /* the fixed Lobatto instances skip the centre node's zero
         * Newton-matrix terms at compile time (jacobian_lob_x): only where
         * its D_cc is exactly 0 */
        const int centre_zero = s % 2 == 0 || w->tab->D[(s - 1) / 2][(s - 1) / 2] == 0.0;
        w->k = lob_any;
#if SYM_FMA_DISPATCH
        if (n > 4 && __builtin_cpu_supports("avx2")) w->k = lob_any_avx2;
#endif
        if (fixed && centre_zero && s == 3) w->k = n <= 4 ? lob_fixed[0][n - 1] : lob_3_any;
        if (fixed && centre_zero && s >= 4 && s <= 7 && n <= 4) w->k = lob_fixed[s - 3][n - 1];
    } else {
        w->k = (fixed && n <= 4) ? gen_fixed[n - 1] : gen_any;
    }
}
