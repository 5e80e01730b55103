/*
 * sym_driver.c -- the public entry points of a run: workspace allocation,
 * one step, the tangent map and Newton diagnostics, a whole integration.
 * Every argument is checked here, once; the schemes (through their
 * sym_scheme_ops) receive valid arguments.  Before every step the driver
 * sets the workspace's time t_k and step index k, which a force
 * (sym_forces.c) is evaluated with.
 */
#include "sym_forces.h"
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
    opt->branch = SYM_BRANCH_AUTO;
    opt->multipliers = NULL;
}

static int options(const sym_options *opt, sym_options *out)
{
    sym_options_default(out);
    if (!opt) return SYM_OK;
    if (opt->newton != SYM_NEWTON_FULL && opt->newton != SYM_NEWTON_CHORD &&
        opt->newton != SYM_NEWTON_STEP)
        return SYM_EINVAL;
    if (opt->branch != SYM_BRANCH_AUTO && opt->branch != SYM_BRANCH_ALWAYS &&
        opt->branch != SYM_BRANCH_NEVER)
        return SYM_EINVAL;
    if (opt->rtol > 0.0) out->rtol = opt->rtol;
    if (opt->max_iter > 0) out->max_iter = opt->max_iter;
    out->predictor = opt->predictor;
    out->newton = opt->newton;
    out->branch = opt->branch;
    out->multipliers = opt->multipliers;
    return SYM_OK;
}

static int system_ok(const sym_system *sys)
{
    return sys && sys->n >= 1 && sys->n <= SYM_MAX_DOF &&
           (sys->eval || sys->eval_batch || (sys->mass && sys->potential_grad)) &&
           (sys->m == 0 || (sys->m >= 1 && sys->m < sys->n && sys->constraint)) &&
           /* the split of eval: both halves, and a cache the engine can hold */
           (!sys->prep) == (!sys->eval_prep) &&
           (!sys->prep || (sys->eval && !sys->eval_batch && sys->prep_size <= SYM_PREP_MAX));
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
    if (w) sym_force_free(w->force);
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
    return sym_step_at(w, 0.0, 0, q, p, h, q1, p1, qmid, info);
}

/* The time and index of a step: t finite, k >= 0 and within a held force. */
int sym_work_set_time(sym_work *w, double t, long k)
{
    if (!w) return SYM_EINVAL;
    if (!isfinite(t) || k < 0) return SYM_EINVAL;
    if (w->force && w->force->f.hold && k >= w->force->f.hold_rows) return SYM_EINVAL;
    w->t = t;
    w->k = k;
    return SYM_OK;
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
    const int st = step_args(w, q, p, h);   /* at the workspace's time (sym_work_set_time) */
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

/* One run's loop (arguments checked): where the states go, the hook, and
 * the progress callback. */
typedef struct loop {
    double t0, h;
    long n_steps, every;           /* every >= 1                               */
    double *t, *q, *p, *qmid;      /* outputs (qmid: every step's, or NULL)    */
    int *iters;
    double *ring;                  /* every > 1: two states (q, p) not stored  */
    double *mid;                   /* internal nodes for the hook, or NULL     */
    sym_run_extras *x;             /* NULL: sym_integrate                      */
    double *work, *impulse;        /* forces: accumulated work (rows) and
                                      impulse (rows x n) of the stored rows,
                                      or NULL                                  */
    double *isum;                  /* with impulse: 2n doubles (running sum,
                                      the step's)                              */
    sym_progress_fn progress;
    void *ctx;
    long progress_every;
} loop;

/* Store node k (q, p, iterations since the last stored row) as the next row
 * unless it is stored already. */
static void store_row(const loop *L, long k, const double *qk, const double *pk, long *row,
                      long *row_step, int *acc, size_t n, double wsum)
{
    if (*row_step == k) return;
    if (L->work) L->work[*row + 1] = wsum;
    if (L->impulse) memcpy(L->impulse + (size_t)(*row + 1) * n, L->isum, sizeof(double) * n);
    double *qr = L->q + (size_t)(*row + 1) * n, *pr = L->p + (size_t)(*row + 1) * n;
    if (qr != qk) memcpy(qr, qk, sizeof(double) * n);
    if (pr != pk) memcpy(pr, pk, sizeof(double) * n);
    L->t[*row + 1] = L->t0 + (double)k * L->h;
    if (L->iters) L->iters[*row] = *acc;
    *acc = 0;
    (*row)++;
    *row_step = k;
}

/*
 * The steps: node k+1 is written straight into the next output row when it
 * is kept, else into the ring (two slots, so that a step never writes over
 * its own start).  Every step starts where the previous one ended, so only
 * the first state needs checking.  With every = 1, no hook and no extras
 * this is the plain loop of sym_integrate: the same calls on the same
 * arguments, hence bitwise the same states.
 */
static int run_steps(sym_work *w, const loop *L, sym_failure *fail, long *done, long *rows)
{
    const size_t n = (size_t)w->n, mid = (size_t)w->method->n_mid * n;
    const sym_run_extras *x = L->x;
    const sym_step_hook hook = x ? x->hook : NULL;
    long row = 0, row_step = 0, next_hook = 0;
    int acc = 0, st = SYM_OK;
    const double *qk = L->q, *pk = L->p;
    double wsum = 0.0;   /* the forces' work from t0 */
    double cn[SYM_MAX_NODES];
    /* the multipliers (constrained systems): s nodes, m each, in the slot of
     * the next stored row -- overwritten until a step is kept, so that the
     * slot of each stored row holds the step that ends there */
    double *lam = w->sys->m > 0 ? w->opt.multipliers : NULL;
    const size_t nlam = lam ? (size_t)sym_method_nodes(w->method, cn) * (size_t)w->sys->m : 0;
    sym_step_info info;
    for (long k = 0; k < L->n_steps; k++) {
        const long k1 = k + 1;
        const int keep = L->every == 1 || k1 % L->every == 0 || k1 == L->n_steps;
        double *q1, *p1;
        if (keep) {
            q1 = L->q + (size_t)(row + 1) * n;
            p1 = L->p + (size_t)(row + 1) * n;
        } else {
            q1 = L->ring + (size_t)(k1 & 1) * 2 * n;
            p1 = q1 + n;
        }
        double *qm = L->qmid ? L->qmid + (size_t)k * mid : L->mid;
        clear_info(&info);
        w->t = L->t0 + (double)k * L->h;   /* the time and index a force sees */
        w->k = k;
        st = w->ops->step(w, qk, pk, L->h, q1, p1, qm, &info);
        w->counts.iterations += info.iterations;
        if (L->every == 1 && L->iters) L->iters[k] = info.iterations;
        if (st) {
            set_failure(fail, k, L->t0 + (double)k * L->h, &info);
            break;
        }
        w->counts.steps++;
        acc += info.iterations;
        *done = k1;
        if (lam) (void)w->ops->multipliers(w, lam + (size_t)row * nlam);
        double *hf = hook && w->force ? x->hook_force : NULL;
        if (hf) {   /* W_k, I_k before this step's are added */
            hf[0] = wsum;
            if (L->isum) memcpy(hf + 2, L->isum, sizeof(double) * n);
        }
        if (L->work || L->impulse) {   /* W_{k+1} = W_k + W_step, I likewise */
            double dw;
            sym_step_force_work(w, &dw, L->isum ? L->isum + n : NULL);
            wsum += dw;
            if (L->isum)
                for (size_t c = 0; c < n; c++) L->isum[c] += L->isum[n + c];
        }
        if (keep) {
            if (L->work) L->work[row + 1] = wsum;
            if (L->impulse)
                memcpy(L->impulse + (size_t)(row + 1) * n, L->isum, sizeof(double) * n);
            L->t[row + 1] = L->t0 + (double)k1 * L->h;
            if (L->iters) L->iters[row] = acc;
            acc = 0;
            row++;
            row_step = k1;
        }
        const double *qprev = qk, *pprev = pk;
        qk = q1;
        pk = p1;
        if (hook && (!x->hook_steps ||
                     (next_hook < x->n_hook_steps && x->hook_steps[next_hook] == k))) {
            if (x->hook_steps) next_hook++;
            if (hf) {
                const size_t m = (size_t)sym_method_force_points(w->method);
                hf[1] = wsum;
                if (L->isum) memcpy(hf + 2 + n, L->isum, sizeof(double) * n);
                (void)sym_step_force_points(w, hf + 2 + 2 * n, hf + 2 + 2 * n + m,
                                            hf + 2 + 2 * n + 2 * m, hf + 2 + 2 * n + 3 * m);
            }
            const int r = hook(x->hook_ctx, k, qprev, pprev, qm, q1, p1);
            if (r < 0) {
                set_failure(fail, k, L->t0 + (double)k * L->h, NULL);
                st = SYM_ECALLBACK;
                break;
            }
            if (r > 0) {
                L->x->stopped = 1;
                break;
            }
        }
        if (L->progress && L->progress_every > 0 && *done % L->progress_every == 0 &&
            L->progress(L->ctx, *done)) {
            set_failure(fail, *done, L->t0 + (double)*done * L->h, NULL);
            st = SYM_EINTERRUPT;
            break;
        }
    }
    /* the last completed state closes the stored rows (a no-op when kept) */
    if (L->every > 1) store_row(L, *done, qk, pk, &row, &row_step, &acc, n, wsum);
    *rows = row + 1;
    return st;
}

long sym_stored_rows(long n_steps, long every)
{
    if (n_steps < 0) return 0;
    if (every <= 1) return n_steps + 1;
    return n_steps / every + 1 + (n_steps % every != 0);
}

void sym_work_counts(const sym_work *w, sym_counts *out)
{
    if (!out) return;
    if (w)
        *out = w->counts;
    else
        memset(out, 0, sizeof(*out));
}

/* A run on a prepared workspace (arguments checked, the state copied by
 * the caller's rules below): the ring, the hook's nodes and the forces'
 * running impulse are allocated once per run, never inside a step. */
static int integrate_on(sym_work *w, const double *q0, const double *p0, double t0, double h,
                        long n_steps, double *t, double *q, double *p, double *qmid, int *iters,
                        double *work, double *impulse, sym_progress_fn progress, void *ctx,
                        long progress_every, sym_run_extras *x, sym_failure *fail, long *n_done)
{
    long done = 0, rows = 1;
    int st = SYM_OK;
    const long every = x && x->store_every > 1 ? x->store_every : 1;
    const size_t n = (size_t)w->n, nmid = (size_t)w->method->n_mid * n;
    const size_t nring = every > 1 ? 4 * n : 0;
    const size_t nm = x && x->hook && !qmid ? nmid : 0;
    const size_t ni = impulse ? 2 * n : 0;
    double *extra = NULL;
    if (nring + nm + ni > 0 && !(extra = malloc(sizeof(double) * (nring + nm + ni))))
        return SYM_ENOMEM;
    loop L = {t0, h, n_steps, every, t, q, p, qmid, iters,
              nring ? extra : NULL, nm ? extra + nring : NULL, x, work, impulse,
              ni ? extra + nring + nm : NULL, progress, ctx, progress_every};
    memcpy(q, q0, sizeof(double) * n);
    memcpy(p, p0, sizeof(double) * n);
    t[0] = t0;
    if (work) work[0] = 0.0;
    if (impulse) {
        memset(impulse, 0, sizeof(double) * n);
        memset(L.isum, 0, sizeof(double) * 2 * n);
    }
    st = run_steps(w, &L, fail, &done, &rows);
    if (n_done) *n_done = done;
    if (x) {
        x->rows = rows;
        x->counts = w->counts;
    }
    free(extra);
    return st;
}

static void clear_run(sym_run_extras *x, sym_failure *fail, long *n_done)
{
    if (n_done) *n_done = 0;
    if (fail) memset(fail, 0, sizeof(*fail));
    if (x) {
        x->rows = 0;
        x->stopped = 0;
        memset(&x->counts, 0, sizeof(x->counts));
    }
}

static int run_args(const double *q0, const double *p0, const double *t, const double *q,
                    const double *p, const double *qmid, long n_steps, double t0, double h,
                    const sym_run_extras *x, int n)
{
    if (!q0 || !p0 || !t || !q || !p || n_steps < 0) return SYM_EINVAL;
    if (!isfinite(t0) || !isfinite(h) || h == 0.0) return SYM_EINVAL;
    if (x && x->store_every > 1 && qmid) return SYM_EINVAL;
    if (x && x->hook_steps && x->n_hook_steps < 0) return SYM_EINVAL;
    for (int k = 0; k < n; k++)
        if (!isfinite(q0[k]) || !isfinite(p0[k])) return SYM_ENONFINITE;
    return SYM_OK;
}

int sym_integrate_ex(const sym_system *sys, const sym_method *method,
                     const sym_options *opt, const double *q0, const double *p0,
                     double t0, double h, long n_steps, double *t, double *q,
                     double *p, double *qmid, int *iters,
                     sym_progress_fn progress, void *ctx, long progress_every,
                     sym_run_extras *x, sym_failure *fail, long *n_done)
{
    clear_run(x, fail, n_done);
    if (!sys || !method) return SYM_EINVAL;
    int st = run_args(q0, p0, t, q, p, qmid, n_steps, t0, h, x, sys->n);
    if (st) return st;
    sym_work *w = sym_work_new(sys, method, opt, &st);
    if (!w) return st;
    st = integrate_on(w, q0, p0, t0, h, n_steps, t, q, p, qmid, iters, NULL, NULL, progress,
                      ctx, progress_every, x, fail, n_done);
    sym_work_free(w);
    return st;
}

int sym_integrate_work(sym_work *w, const double *q0, const double *p0, double t0, double h,
                       long n_steps, double *t, double *q, double *p, double *qmid, int *iters,
                       double *work, double *impulse, sym_progress_fn progress, void *ctx,
                       long progress_every, sym_run_extras *x, sym_failure *fail,
                       long *n_done)
{
    clear_run(x, fail, n_done);
    if (!w) return SYM_EINVAL;
    const int st = run_args(q0, p0, t, q, p, qmid, n_steps, t0, h, x, w->n);
    if (st) return st;
    if (w->force && w->force->f.hold && n_steps > w->force->f.hold_rows) return SYM_EINVAL;
    return integrate_on(w, q0, p0, t0, h, n_steps, t, q, p, qmid, iters, work, impulse,
                        progress, ctx, progress_every, x, fail, n_done);
}

int sym_integrate(const sym_system *sys, const sym_method *method,
                  const sym_options *opt, const double *q0, const double *p0,
                  double t0, double h, long n_steps, double *t, double *q,
                  double *p, double *qmid, int *iters,
                  sym_progress_fn progress, void *ctx, long progress_every,
                  sym_failure *fail, long *n_done)
{
    return sym_integrate_ex(sys, method, opt, q0, p0, t0, h, n_steps, t, q, p, qmid, iters,
                            progress, ctx, progress_every, NULL, fail, n_done);
}
