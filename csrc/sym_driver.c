/*
 * sym_driver.c -- workspace allocation, one step, a whole integration.
 */
#include "sym_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_RTOL 1e-13
#define DEFAULT_MAX_ITER 25

void sym_options_default(sym_options *opt)
{
    opt->rtol = DEFAULT_RTOL;
    opt->max_iter = DEFAULT_MAX_ITER;
    opt->predictor = 1;
    opt->newton = SYM_NEWTON_FULL;
}

/* Hand out consecutive slices of one block. */
static double *take(double **cursor, size_t count)
{
    double *p = *cursor;
    *cursor += count;
    return p;
}

sym_work *sym_work_new(const sym_system *sys, const sym_method *method,
                       const sym_options *opt, int *status)
{
    int st_local;
    if (!status) status = &st_local;
    *status = SYM_EINVAL;
    if (!sys || !method || sys->n < 1 || sys->n > SYM_MAX_DOF) return NULL;
    if (!sys->eval && !sys->eval_batch && (!sys->mass || !sys->potential_grad)) return NULL;

    sym_work *w = calloc(1, sizeof(*w));
    if (!w) { *status = SYM_ENOMEM; return NULL; }
    w->sys = sys;
    w->method = method;
    sym_options_default(&w->opt);
    if (opt) {
        if (opt->rtol > 0.0) w->opt.rtol = opt->rtol;
        if (opt->max_iter > 0) w->opt.max_iter = opt->max_iter;
        w->opt.predictor = opt->predictor;
        if (opt->newton != SYM_NEWTON_FULL && opt->newton != SYM_NEWTON_CHORD) {
            free(w);
            *status = SYM_EINVAL;
            return NULL;
        }
        w->opt.newton = opt->newton;
    }
    const size_t n = (size_t)sys->n, nn = n * n;
    w->n = sys->n;
    size_t total = 3 * n + sym_eval_scratch_size(sys);
    size_t itotal = 0;

    if (method->kind == SYM_KIND_GALERKIN) {
        int st = sym_galerkin_setup(w);
        if (st) { free(w); *status = st; return NULL; }
        /* the Newton matrix is nu x nu, indexed with int arithmetic: beyond
         * SYM_MAX_DOF it would need > 16 GiB and overflow those indices */
        if (w->nu > SYM_MAX_DOF) { free(w); *status = SYM_ENOMEM; return NULL; }
        const size_t nu = (size_t)w->nu, r = (size_t)w->tab.r;
        total += 4 * nu + nu * nu + 5 * r * n + 4 * r * nn + 3 * n + 2 * nn;
        itotal = nu;
    } else if (method->kind == SYM_KIND_RK4) {
        total += 8 * n + 3 * n + 2 * nn + n;
    } else {
        free(w);
        *status = SYM_EMETHOD;
        return NULL;
    }
    if (total > SIZE_MAX / sizeof(double)) { free(w); *status = SYM_ENOMEM; return NULL; }
    /* calloc: zeroed without touching every page up front */
    w->block = calloc(total, sizeof(double));
    w->iblock = itotal ? malloc(itotal * sizeof(int)) : NULL;
    if (!w->block || (itotal && !w->iblock)) {
        free(w->block);
        free(w->iblock);
        free(w);
        *status = SYM_ENOMEM;
        return NULL;
    }
    double *cur = w->block;
    w->v = take(&cur, n);
    w->acc = take(&cur, n);
    w->tmp = take(&cur, n);
    w->scratch = take(&cur, sym_eval_scratch_size(sys));
    if (method->kind == SYM_KIND_GALERKIN) {
        const size_t nu = (size_t)w->nu, r = (size_t)w->tab.r;
        w->X = take(&cur, nu);
        w->dX = take(&cur, nu);
        w->R = take(&cur, nu);
        w->prev_X = take(&cur, nu);
        w->J = take(&cur, nu * nu);
        w->Qp = take(&cur, r * n);
        w->Gp = take(&cur, r * n);
        w->dVp = take(&cur, r * n);
        w->f = take(&cur, r * n);
        w->P = take(&cur, r * n);
        w->Mp = take(&cur, r * nn);
        w->Ap = take(&cur, r * nn);
        w->Hp = take(&cur, r * nn);
        w->Kp = take(&cur, r * nn);
        w->cache_q = take(&cur, n);
        w->cache_dV = take(&cur, n);
        w->prev_qend = take(&cur, n);
        w->cache_M = take(&cur, nn);
        w->Lm = take(&cur, nn);
        w->piv = w->iblock;
    } else {
        w->kq = take(&cur, 4 * n);
        w->kp = take(&cur, 4 * n);
        w->qs = take(&cur, n);
        w->ps = take(&cur, n);
        w->vs = take(&cur, n);
        w->Ms = take(&cur, nn);
        w->As = take(&cur, nn);
        w->dVs = take(&cur, n);
    }
    *status = SYM_OK;
    return w;
}

void sym_work_free(sym_work *w)
{
    if (!w) return;
    free(w->block);
    free(w->iblock);
    free(w);
}

void sym_work_reset(sym_work *w)
{
    if (!w) return;
    w->cache_valid = 0;
    w->prev_valid = 0;
}

int sym_step(sym_work *w, const double *q, const double *p, double h,
             double *q1, double *p1, double *qmid, sym_step_info *info)
{
    if (!w || !q || !p || !q1 || !p1) return SYM_EINVAL;
    if (w->method->kind == SYM_KIND_GALERKIN)
        return sym_galerkin_step(w, q, p, h, q1, p1, qmid, info);
    return sym_rk4_step(w, q, p, h, q1, p1, info);
}

int sym_step_tangent(sym_work *w, const double *q, const double *p, double h,
                     double *q1, double *p1, double *D, sym_step_info *info)
{
    if (!w || !q || !p || !q1 || !p1 || !D) return SYM_EINVAL;
    if (w->method->kind == SYM_KIND_GALERKIN)
        return sym_galerkin_tangent(w, q, p, h, q1, p1, D, info);
    return sym_rk4_tangent(w, q, p, h, q1, p1, D, info);
}

int sym_integrate(const sym_system *sys, const sym_method *method,
                  const sym_options *opt, const double *q0, const double *p0,
                  double t0, double h, long n_steps, double *t, double *q,
                  double *p, double *qmid, int *iters,
                  sym_progress_fn progress, void *ctx, long progress_every,
                  sym_failure *fail, long *n_done)
{
    long done = 0;
    int st = SYM_OK;
    sym_step_info info = {0};
    if (n_done) *n_done = 0;
    if (fail) memset(fail, 0, sizeof(*fail));
    if (!sys || !method || !q0 || !p0 || !t || !q || !p || n_steps < 0)
        return SYM_EINVAL;
    if (!isfinite(t0) || !isfinite(h) || h == 0.0) return SYM_EINVAL;
    const int n = sys->n;
    for (int k = 0; k < n; k++)
        if (!isfinite(q0[k]) || !isfinite(p0[k])) return SYM_ENONFINITE;
    sym_work *w = sym_work_new(sys, method, opt, &st);
    if (!w) return st;
    memcpy(q, q0, sizeof(double) * (size_t)n);
    memcpy(p, p0, sizeof(double) * (size_t)n);
    t[0] = t0;
    const size_t mid = (size_t)method->n_mid * (size_t)n;
    for (long k = 0; k < n_steps; k++) {
        const size_t o = (size_t)k * (size_t)n;
        st = sym_step(w, q + o, p + o, h, q + o + n, p + o + n,
                      qmid ? qmid + (size_t)k * mid : NULL, &info);
        if (iters) iters[k] = info.iterations;
        if (st) {
            if (fail) {
                fail->step = k;
                fail->t = t0 + (double)k * h;
                fail->iterations = info.iterations;
                fail->residual = info.residual;
                fail->residual_rel = info.residual_rel;
            }
            break;
        }
        t[k + 1] = t0 + (double)(k + 1) * h;
        done = k + 1;
        if (progress && progress_every > 0 && done % progress_every == 0 &&
            progress(ctx, done)) {
            st = SYM_EINTERRUPT;
            if (fail) {
                fail->step = done;
                fail->t = t0 + (double)done * h;
            }
            break;
        }
    }
    if (n_done) *n_done = done;
    sym_work_free(w);
    return st;
}
