/*
 * sym_driver.c -- the public entry points of a run: workspace allocation,
 * one step, the tangent map and Newton diagnostics, a whole integration.
 * Every argument is checked here, once; the schemes (through their
 * sym_scheme_ops) receive valid arguments.
 */
#include "sym_scheme.h"

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
    opt->multipliers = NULL;
}

static int options(const sym_options *opt, sym_options *out)
{
    sym_options_default(out);
    if (!opt) return SYM_OK;
    if (opt->newton != SYM_NEWTON_FULL && opt->newton != SYM_NEWTON_CHORD &&
        opt->newton != SYM_NEWTON_STEP)
        return SYM_EINVAL;
    if (opt->rtol > 0.0) out->rtol = opt->rtol;
    if (opt->max_iter > 0) out->max_iter = opt->max_iter;
    out->predictor = opt->predictor;
    out->newton = opt->newton;
    out->multipliers = opt->multipliers;
    return SYM_OK;
}

static int system_ok(const sym_system *sys)
{
    return sys && sys->n >= 1 && sys->n <= SYM_MAX_DOF &&
           (sys->eval || sys->eval_batch || (sys->mass && sys->potential_grad)) &&
           (sys->m == 0 || (sys->m >= 1 && sys->m < sys->n && sys->constraint));
}

/* One block: [state struct | eval scratch | the scheme's arrays | the
 * constraint slice of a constrained system]. */
sym_work *sym_work_new(const sym_system *sys, const sym_method *method,
                       const sym_options *opt, int *status)
{
    int st_local;
    if (!status) status = &st_local;
    *status = SYM_EINVAL;
    sym_options o;
    if (!system_ok(sys) || !method) return NULL;
    if (!method->ops) { *status = SYM_EMETHOD; return NULL; }
    if (options(opt, &o)) return NULL;
    const sym_scheme_ops *ops = method->ops;
    double doubles = 0.0;
    int st = ops->work_size(method, sys->n, &doubles);
    if (st) { *status = st; return NULL; }
    double cdoubles = 0.0;
    if (sys->m > 0) {
        if (!ops->constraint_size) { *status = SYM_ENOTCONSTRAINED; return NULL; }
        st = ops->constraint_size(method, sys->n, sys->m, &cdoubles);
        if (st) { *status = st; return NULL; }
    }
    const double scheme_doubles = doubles;
    doubles += cdoubles;
    const size_t nscratch = sym_eval_scratch_size(sys);
    /* the arrays start at a multiple of sizeof(double) after the struct */
    const size_t head = (ops->state_size + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    doubles += (double)nscratch;
    if (!(doubles < (double)((SIZE_MAX - head) / sizeof(double)))) {
        *status = SYM_ENOMEM;
        return NULL;
    }
    /* calloc: zeroed without touching every page up front */
    sym_work *w = calloc(1, head + (size_t)doubles * sizeof(double));
    if (!w) { *status = SYM_ENOMEM; return NULL; }
    w->sys = sys;
    w->method = method;
    w->ops = ops;
    w->opt = o;
    w->n = sys->n;
    w->scratch = (double *)((char *)w + head);
    w->cblock = sys->m > 0 ? w->scratch + nscratch + (size_t)scheme_doubles : NULL;
    st = ops->setup(w, w->scratch + nscratch);
    if (st) { free(w); *status = st; return NULL; }
    *status = SYM_OK;
    return w;
}

void sym_work_free(sym_work *w)
{
    free(w);
}

void sym_work_reset(sym_work *w)
{
    if (w) w->ops->reset(w);
}

/* The arguments of one step: h finite and nonzero, the state finite. */
static int step_args(const sym_work *w, const double *q, const double *p, double h)
{
    if (!(h != 0.0) || !isfinite(h)) return SYM_EINVAL;
    for (int k = 0; k < w->n; k++)
        if (!isfinite(q[k]) || !isfinite(p[k])) return SYM_ENONFINITE;
    return SYM_OK;
}

static void clear_info(sym_step_info *info)
{
    if (info) memset(info, 0, sizeof(*info));
}

int sym_step(sym_work *w, const double *q, const double *p, double h,
             double *q1, double *p1, double *qmid, sym_step_info *info)
{
    clear_info(info);
    if (!w || !q || !p || !q1 || !p1) return SYM_EINVAL;
    const int st = step_args(w, q, p, h);
    return st ? st : w->ops->step(w, q, p, h, q1, p1, qmid, info);
}

int sym_step_tangent(sym_work *w, const double *q, const double *p, double h,
                     double *q1, double *p1, double *D, sym_step_info *info)
{
    clear_info(info);
    if (!w || !q || !p || !q1 || !p1 || !D) return SYM_EINVAL;
    const int st = step_args(w, q, p, h);
    return st ? st : w->ops->tangent(w, q, p, h, q1, p1, D, info);
}

int sym_newton_size(const sym_work *w)
{
    /* constrained: (s-1)(n + m), the Galerkin count for n + m */
    return w ? sym_method_unknowns(w->method, w->n + w->sys->m) : 0;
}

int sym_step_multipliers(const sym_work *w, double *lambda)
{
    if (!w || !lambda || w->sys->m == 0 || !w->ops->multipliers) return SYM_EINVAL;
    return w->ops->multipliers(w, lambda);
}

int sym_newton_system(sym_work *w, const double *q, const double *p, double h,
                      const double *X, double *R, double *J)
{
    if (!w || !q || !p || !X) return SYM_EINVAL;
    if (!w->ops->newton_system) return SYM_EMETHOD;
    if (!(h != 0.0) || !isfinite(h)) return SYM_EINVAL;
    return w->ops->newton_system(w, q, p, h, X, R, J);
}

static void set_failure(sym_failure *fail, long k, double t, const sym_step_info *info)
{
    if (!fail) return;
    fail->step = k;
    fail->t = t;
    if (!info) return;
    fail->iterations = info->iterations;
    fail->residual = info->residual;
    fail->residual_rel = info->residual_rel;
}

/* The steps of sym_integrate (arguments checked): every step starts where
 * the previous one ended, so only the first state needs checking. */
static int run_steps(sym_work *w, double t0, double h, long n_steps, double *t, double *q,
                     double *p, double *qmid, int *iters, sym_progress_fn progress, void *ctx,
                     long progress_every, sym_failure *fail, long *done)
{
    const size_t n = (size_t)w->n, mid = (size_t)w->method->n_mid * n;
    double c[SYM_MAX_NODES];
    /* each step's multipliers: s nodes, m each (constrained systems) */
    double *lam = w->sys->m > 0 ? w->opt.multipliers : NULL;
    const size_t nlam = lam ? (size_t)sym_method_nodes(w->method, c) * (size_t)w->sys->m : 0;
    sym_step_info info;
    for (long k = 0; k < n_steps; k++) {
        const size_t o = (size_t)k * n;
        clear_info(&info);
        const int st = w->ops->step(w, q + o, p + o, h, q + o + n, p + o + n,
                                    qmid ? qmid + (size_t)k * mid : NULL, &info);
        if (iters) iters[k] = info.iterations;
        if (st) {
            set_failure(fail, k, t0 + (double)k * h, &info);
            return st;
        }
        if (lam) (void)w->ops->multipliers(w, lam + (size_t)k * nlam);
        t[k + 1] = t0 + (double)(k + 1) * h;
        *done = k + 1;
        if (progress && progress_every > 0 && *done % progress_every == 0 &&
            progress(ctx, *done)) {
            set_failure(fail, *done, t0 + (double)*done * h, NULL);
            return SYM_EINTERRUPT;
        }
    }
    return SYM_OK;
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
    if (n_done) *n_done = 0;
    if (fail) memset(fail, 0, sizeof(*fail));
    if (!sys || !method || !q0 || !p0 || !t || !q || !p || n_steps < 0)
        return SYM_EINVAL;
    if (!isfinite(t0) || !isfinite(h) || h == 0.0) return SYM_EINVAL;
    for (int k = 0; k < sys->n; k++)
        if (!isfinite(q0[k]) || !isfinite(p0[k])) return SYM_ENONFINITE;
    sym_work *w = sym_work_new(sys, method, opt, &st);
    if (!w) return st;
    memcpy(q, q0, sizeof(double) * (size_t)sys->n);
    memcpy(p, p0, sizeof(double) * (size_t)sys->n);
    t[0] = t0;
    st = run_steps(w, t0, h, n_steps, t, q, p, qmid, iters, progress, ctx, progress_every, fail,
                   &done);
    if (n_done) *n_done = done;
    sym_work_free(w);
    return st;
}
