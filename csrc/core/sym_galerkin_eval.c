/*
 * sym_galerkin_eval.c -- what the Galerkin engine evaluates of the system:
 * M, A, H, grad V, hess V at the scheme's points (q_i, g_i) for the
 * residual, the Newton matrix and the tangent (sym_galerkin.c,
 * sym_galerkin_jac.c), and the cache of M(q_j), grad V(q_j) at the step's
 * left node, shared with the constrained step (sym_constraints.c).  Own
 * unit so that the constraint hooks, which the step calls, need nothing
 * back from the step's file.
 */
#include "sym_gwork.h"

#include <string.h>

/* A callback's return as a status (the mapping of sym_eval). */
SYM_INLINE int eval_status(int rc)
{
    return rc == SYM_ECHART ? SYM_ECHART : rc ? SYM_ECALLBACK : SYM_OK;
}

/* The left point's M and grad V are the cache's (M(q_j), grad V(q_j)). */
static void left_from_cache(sym_gwork *g)
{
    const size_t n = (size_t)g->n, left = (size_t)g->left_point;
    memcpy(g->Mp + left * n * n, g->cache_M, sizeof(double) * n * n);
    memcpy(g->dVp + left * n, g->cache_dV, sizeof(double) * n);
}

/* Evaluate `need` at point i alone. */
int sym_galerkin_eval_point(sym_gwork *g, int i, unsigned need)
{
    g->base.counts.evaluations++;
    return sym_eval(g->base.sys, g->Qp + (size_t)i * g->n, g->Gp + (size_t)i * g->n, need,
                    &g->pout[i], g->base.scratch);
}

/* Evaluate `need[i]` at every point (q_i, g_i); the left node's M and grad
 * V come from the cache.  A system with a single `eval` is called directly
 * (no batch): at the left node, whose q is the cached q_j, through its
 * split eval_prep with the q-only part (sines, cosines) prepared once per
 * q_j -- bitwise the same numbers as eval; with a batched prep (prep_n) the
 * other points' q-only parts in one call, then eval_prep at each. */
int sym_galerkin_eval_points(sym_gwork *g, const unsigned *need)
{
    const sym_system *sys = g->base.sys;
    const int n = g->n, r = g->tab->r, left = g->left_point;
    g->base.counts.evaluations += r;
    if (sys->eval_batch || !sys->eval) {
        const int st = sym_eval_points(sys, r, g->Qp, g->Gp, need, g->pout, g->base.scratch);
        if (st) return st;
    } else if (sys->prep_n) {
        /* the points' prepared values in one call (all but a cached left
         * point), then eval_prep at each: bitwise eval at each point */
        const size_t P = sys->prep_size;
        const int cached = left >= 0 && g->cache_valid &&
                           (g->left_here || memcmp(g->Qp + (size_t)left * n, g->cache_q,
                                                   sizeof(double) * (size_t)n) == 0);
        if (cached) {
            if (!g->prep_valid) {
                sys->prep(g->cache_q, g->left_prep, sys->params);
                g->prep_valid = 1;
            }
            if (left > 0) sys->prep_n(left, g->Qp, g->pt_prep, sys->params);
            if (left + 1 < r)
                sys->prep_n(r - left - 1, g->Qp + (size_t)(left + 1) * n,
                            g->pt_prep + (size_t)(left + 1) * P, sys->params);
        } else {
            sys->prep_n(r, g->Qp, g->pt_prep, sys->params);
        }
        for (int i = 0; i < r; i++) {
            const double *C = cached && i == left ? g->left_prep : g->pt_prep + (size_t)i * P;
            const int rc = sys->eval_prep(C, g->Gp + (size_t)i * n, need[i], &g->pout[i],
                                          sys->params);
            if (rc) return eval_status(rc);
        }
    } else {
        double *scratch = sys->scratch_size ? g->base.scratch : NULL;
        for (int i = 0; i < r; i++) {
            const double *Q = g->Qp + (size_t)i * n, *G = g->Gp + (size_t)i * n;
            int rc;
            if (i == left && sys->prep && g->cache_valid &&
                (g->left_here || memcmp(Q, g->cache_q, sizeof(double) * (size_t)n) == 0)) {
                if (!g->prep_valid) {
                    sys->prep(g->cache_q, g->left_prep, sys->params);
                    g->prep_valid = 1;
                }
                rc = sys->eval_prep(g->left_prep, G, need[i], &g->pout[i], sys->params);
            } else {
                rc = sys->eval(Q, G, need[i], &g->pout[i], sys->params, scratch);
            }
            if (rc) return eval_status(rc);
        }
    }
    if (left >= 0 && !g->left_here) left_from_cache(g);
    return SYM_OK;
}

/* The step starts at the cached q_j: its left point takes M and grad V from
 * the cache once for the whole step (nothing else writes them; the left
 * point evaluates only A), and eval_points skips comparing its q. */
void sym_galerkin_left_here(sym_gwork *g)
{
    left_from_cache(g);
    g->left_here = 1;
}

/* Make sure M(q) and grad V(q) at the left node are in the cache (with a
 * split eval, the q-only part too). */
int sym_galerkin_left_cache(sym_gwork *g, const double *q)
{
    const sym_system *sys = g->base.sys;
    const int n = g->n;
    if (g->cache_valid && memcmp(g->cache_q, q, sizeof(double) * (size_t)n) == 0)
        return SYM_OK;
    g->cache_valid = g->prep_valid = g->left_here = 0;
    sym_eval_out out = {0};
    out.M = g->cache_M;
    out.dV = g->cache_dV;
    g->base.counts.evaluations++;
    int st;
    if (sys->prep) {
        sys->prep(q, g->left_prep, sys->params);
        st = eval_status(sys->eval_prep(g->left_prep, NULL, SYM_NEED_M | SYM_NEED_DV, &out,
                                        sys->params));
    } else {
        st = sym_eval(sys, q, NULL, SYM_NEED_M | SYM_NEED_DV, &out, g->base.scratch);
    }
    if (st) return st;
    memcpy(g->cache_q, q, sizeof(double) * (size_t)n);
    g->cache_valid = 1;
    g->prep_valid = sys->prep != NULL;
    return SYM_OK;
}
