/*
 * sym_work.c -- a workspace and the calls on it: allocation (sym_work_new,
 * the closed form's sym_work_new_linear), the options and the names of their
 * modes, one step (sym_step_at) with its time and index, its tangent map,
 * the Newton diagnostics, the multipliers and the counts.  Every argument is
 * checked here, once; the schemes (through their sym_scheme_ops) receive
 * valid arguments.  Before every step the workspace's time t_k and step
 * index k are set, which a force (sym_forces.c) is evaluated with.  A whole
 * run is sym_driver.c's.
 */
#include "sym_forces.h"
#include "sym_scheme.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_RTOL 1e-13
#define DEFAULT_MAX_ITER 25

/* The modes' names (the words of the Python API), indexed by their values:
 * the one table of the modes there are -- options() accepts exactly these. */
static const char *const newton_names[] = {
    [SYM_NEWTON_FULL] = "full", [SYM_NEWTON_CHORD] = "chord", [SYM_NEWTON_STEP] = "step",
    [SYM_NEWTON_DECOUPLED] = "decoupled", [SYM_NEWTON_AUTO] = "auto"};
static const char *const branch_names[] = {
    [SYM_BRANCH_AUTO] = "auto", [SYM_BRANCH_ALWAYS] = "always", [SYM_BRANCH_NEVER] = "never",
    [SYM_BRANCH_OFF] = "off"};
static const char *const solver_names[] = {
    [SYM_SOLVER_AUTO] = "auto", [SYM_SOLVER_DENSE] = "dense", [SYM_SOLVER_TREE] = "tree"};

#define N_NAMES(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *sym_newton_mode_name(int mode)
{
    return mode >= 0 && mode < N_NAMES(newton_names) ? newton_names[mode] : NULL;
}

const char *sym_branch_mode_name(int mode)
{
    return mode >= 0 && mode < N_NAMES(branch_names) ? branch_names[mode] : NULL;
}

const char *sym_solver_mode_name(int mode)
{
    return mode >= 0 && mode < N_NAMES(solver_names) ? solver_names[mode] : NULL;
}

void sym_options_default(sym_options *opt)
{
    opt->rtol = DEFAULT_RTOL;
    opt->max_iter = DEFAULT_MAX_ITER;
    opt->predictor = 1;
    opt->newton = SYM_NEWTON_FULL;
    opt->branch = SYM_BRANCH_AUTO;
    opt->solver = SYM_SOLVER_AUTO;
}

static int options(const sym_options *opt, sym_options *out)
{
    sym_options_default(out);
    if (!opt) return SYM_OK;
    if (!sym_newton_mode_name(opt->newton) || !sym_branch_mode_name(opt->branch) ||
        !sym_solver_mode_name(opt->solver))
        return SYM_EINVAL;
    if (opt->rtol > 0.0) out->rtol = opt->rtol;
    if (opt->max_iter > 0) out->max_iter = opt->max_iter;
    out->predictor = opt->predictor;
    out->newton = opt->newton;
    out->branch = opt->branch;
    out->solver = opt->solver;
    return SYM_OK;
}

static int system_ok(const sym_system *sys)
{
    return sys && sys->n >= 1 && sys->n <= SYM_MAX_DOF &&
           (sys->eval || sys->eval_batch || (sys->mass && sys->potential_grad)) &&
           (sys->m == 0 || (sys->m >= 1 && sys->m < sys->n && sys->constraint)) &&
           /* the split of eval: both halves, and a cache the engine can hold */
           (!sys->prep) == (!sys->eval_prep) &&
           (!sys->prep || (sys->eval && !sys->eval_batch && sys->prep_size <= SYM_PREP_MAX)) &&
           (!sys->prep_n || sys->prep);
}

/* One block: [state struct | eval scratch | the scheme's arrays | the
 * constraint slice of a constrained system | the system block the scheme
 * asks for this system and options (ops->system_size: the spatial trees'
 * O(n) path)], laid out by `ops` (the method's own, or the closed form's). */
static sym_work *work_new(const sym_system *sys, const sym_method *method,
                          const sym_scheme_ops *ops, const sym_options *opt, int *status)
{
    int st_local;
    if (!status) status = &st_local;
    *status = SYM_EINVAL;
    sym_options o;
    if (!system_ok(sys) || !method) return NULL;
    if (!ops) { *status = SYM_EMETHOD; return NULL; }
    if (options(opt, &o)) return NULL;
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
    const double xdoubles = ops->system_size ? fmax(ops->system_size(method, sys, &o), 0.0) : 0.0;
    doubles += cdoubles + xdoubles;
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
    w->xblock = xdoubles > 0.0
                    ? w->scratch + nscratch + (size_t)scheme_doubles + (size_t)cdoubles
                    : NULL;
    st = ops->setup(w, w->scratch + nscratch);
    if (st) { free(w); *status = st; return NULL; }
    *status = SYM_OK;
    return w;
}

sym_work *sym_work_new(const sym_system *sys, const sym_method *method,
                       const sym_options *opt, int *status)
{
    return work_new(sys, method, method ? method->ops : NULL, opt, status);
}

sym_work *sym_work_new_linear(const sym_system *sys, const sym_method *method, double h,
                              const double *D, const double *A, int *status)
{
    int st_local;
    if (!status) status = &st_local;
    sym_work *w = work_new(sys, method, &sym_linear_ops, NULL, status);
    if (!w) return NULL;
    const int st = sym_linear_load(w, h, D, A);
    if (st) {
        free(w);
        *status = st;
        return NULL;
    }
    return w;
}

void sym_work_free(sym_work *w)
{
    if (w) sym_force_free(w->force);
    free(w);
}

void sym_work_reset(sym_work *w)
{
    if (w) w->ops->reset(w);
}

/* Refuse the argument `name` of a call on w (sym_work_invalid). */
static int invalid(sym_work *w, const char *name)
{
    w->invalid = name;
    return SYM_EINVAL;
}

/* The arguments of one step: h finite and nonzero, the state finite. */
static int step_args(sym_work *w, const double *q, const double *p, double h)
{
    if (!(h != 0.0) || !isfinite(h)) return invalid(w, "h");
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
    return sym_step_at(w, 0.0, 0, q, p, h, q1, p1, qmid, info);
}

/* The time and index of a step: t finite, k >= 0 and within a held force. */
int sym_work_set_time(sym_work *w, double t, long k)
{
    if (!w) return SYM_EINVAL;
    w->invalid = NULL;
    if (!isfinite(t)) return invalid(w, "t");
    if (k < 0) return invalid(w, "k");
    if (w->force && w->force->f.hold &&
        (k < w->force->f.hold_k0 || k - w->force->f.hold_k0 >= w->force->f.hold_rows))
        return invalid(w, "hold");
    w->t = t;
    w->k = k;
    return SYM_OK;
}

const char *sym_work_invalid(const sym_work *w)
{
    return w ? w->invalid : NULL;
}

int sym_step_at(sym_work *w, double t, long k, const double *q, const double *p, double h,
                double *q1, double *p1, double *qmid, sym_step_info *info)
{
    clear_info(info);
    if (!w || !q || !p || !q1 || !p1) return SYM_EINVAL;
    int st = sym_work_set_time(w, t, k);
    if (!st) st = step_args(w, q, p, h);
    if (st) return st;
    sym_step_info local;
    if (!info) info = &local;
    clear_info(info);
    st = w->ops->step(w, q, p, h, q1, p1, qmid, info);
    w->counts.iterations += info->iterations;
    if (!st) w->counts.steps++;
    return st;
}

int sym_step_tangent(sym_work *w, const double *q, const double *p, double h,
                     double *q1, double *p1, double *D, sym_step_info *info)
{
    clear_info(info);
    if (!w || !q || !p || !q1 || !p1 || !D) return SYM_EINVAL;
    w->invalid = NULL;
    int st = step_args(w, q, p, h);   /* at the workspace's time (sym_work_set_time) */
    if (st) return st;
    const size_t m = 2 * (size_t)w->n;
    double *I = calloc(m * m, sizeof(double));
    if (!I) return SYM_ENOMEM;
    for (size_t i = 0; i < m; i++) I[i * m + i] = 1.0;
    sym_step_info local;
    st = w->ops->step(w, q, p, h, q1, p1, NULL, info ? info : &local);
    if (!st) st = w->ops->tangent(w, q, p, h, (int)m, 0, I, D);
    free(I);
    return st;
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
    w->invalid = NULL;
    if (!w->ops->newton_system) return SYM_EMETHOD;
    if (!(h != 0.0) || !isfinite(h)) return invalid(w, "h");
    return w->ops->newton_system(w, q, p, h, X, R, J);
}

int sym_newton_direction(sym_work *w, const double *q, const double *p, double h,
                         const double *X, double *R, double *rnorm, double *b, int *sign)
{
    if (!w || !q || !p || !X || !R || !rnorm || !b || !sign) return SYM_EINVAL;
    w->invalid = NULL;
    if (!w->ops->newton_direction) return SYM_EMETHOD;
    if (!(h != 0.0) || !isfinite(h)) return invalid(w, "h");
    return w->ops->newton_direction(w, q, p, h, X, R, rnorm, b, sign);
}


void sym_work_counts(const sym_work *w, sym_counts *out)
{
    if (!out) return;
    if (w)
        *out = w->counts;
    else
        memset(out, 0, sizeof(*out));
}
