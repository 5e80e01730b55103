/*
 * sym_driver.c -- the public entry points of a run: workspace allocation,
 * one step, the tangent map and Newton diagnostics, a whole integration.
 * Every argument is checked here, once; the schemes (through their
 * sym_scheme_ops) receive valid arguments.  Before every step the driver
 * sets the workspace's time t_k and step index k, which a force
 * (sym_forces.c) is evaluated with.
 */
#include "sym_forces.h"
#include "sym_params.h"
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
}

static int options(const sym_options *opt, sym_options *out)
{
    sym_options_default(out);
    if (!opt) return SYM_OK;
    if (opt->newton < SYM_NEWTON_FULL || opt->newton > SYM_NEWTON_AUTO) return SYM_EINVAL;
    if (opt->branch < SYM_BRANCH_AUTO || opt->branch > SYM_BRANCH_OFF) return SYM_EINVAL;
    if (opt->rtol > 0.0) out->rtol = opt->rtol;
    if (opt->max_iter > 0) out->max_iter = opt->max_iter;
    out->predictor = opt->predictor;
    out->newton = opt->newton;
    out->branch = opt->branch;
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
 * constraint slice of a constrained system], laid out by `ops` (the
 * method's own, or the closed form's). */
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

static void set_failure(sym_failure *fail, long k, double t, const sym_step_info *info)
{
    fail->step = k;
    fail->t = t;
    if (!info) return;
    fail->iterations = info->iterations;
    fail->residual = info->residual;
    fail->residual_rel = info->residual_rel;
}

/* What a run allocates besides the caller's outputs (once per run, never
 * inside a step): the ring of states not stored, the hook's internal nodes,
 * the forces' running impulse. */
typedef struct loop {
    long every;                    /* >= 1                                     */
    double *ring;                  /* every > 1: two states (q, p) not stored  */
    double *mid;                   /* internal nodes for the hook, or NULL     */
    double *isum;                  /* with impulse: 2n doubles (running sum,
                                      the step's)                              */
    double *phi, *phi1;            /* with a tangent: 2n x k each (the tangent
                                      at the last node, the next one)          */
    double *eye;                   /* with jacobians: the identity, c x c      */
} loop;

double sym_node_time(double t0, long k, double h)
{
    return t0 + (double)k * h;
}

/* The time of node j of the run: node k0 + j of the run from t0. */
static double node_time(const sym_run *R, long j)
{
    return sym_node_time(R->t0, R->k0 + j, R->h);
}

/* Where a run stands: the next row to store (row + 1), the node it last
 * stored, the iterations since, the next entry of the hook's steps, and the
 * forces' work from the origin. */
typedef struct cursor {
    long row, row_step, next_hook;
    int acc;
    double wsum;
} cursor;

/* Close row + 1, whose q and p hold node j: its time, work, impulse and the
 * iterations since the last stored row. */
SYM_INLINE void close_row(const sym_run *R, const loop *L, cursor *c, long j, size_t n)
{
    if (R->work) R->work[c->row + 1] = c->wsum;
    if (R->impulse) memcpy(R->impulse + (size_t)(c->row + 1) * n, L->isum, sizeof(double) * n);
    R->t[c->row + 1] = node_time(R, j);
    if (R->iters) R->iters[c->row] = c->acc;
    c->acc = 0;
    c->row++;
    c->row_step = j;
}

/* Store node j (q, p, iterations since the last stored row) as the next row
 * unless it is stored already. */
static void store_row(const sym_run *R, const loop *L, cursor *c, long j, const double *qj,
                      const double *pj, size_t n)
{
    if (c->row_step == j) return;
    double *qr = R->q + (size_t)(c->row + 1) * n, *pr = R->p + (size_t)(c->row + 1) * n;
    if (qr != qj) memcpy(qr, qj, sizeof(double) * n);
    if (pr != pj) memcpy(pr, pj, sizeof(double) * n);
    if (L->phi) {
        const size_t mk = 2 * n * (size_t)R->tangent_cols;
        memcpy(R->tangent + (size_t)(c->row + 1) * mk, L->phi, sizeof(double) * mk);
    }
    close_row(R, L, c, j, n);
}

/* Where step k writes node k1 = k + 1: the next output row when it is kept
 * (returns 1), else the ring (two slots, so that a step never writes over
 * its own start). */
static int step_slot(const sym_run *R, const loop *L, long k1, const cursor *c, size_t n,
                     double **q1, double **p1)
{
    const int keep = L->every == 1 || k1 % L->every == 0 || k1 == R->n_steps;
    if (keep) {
        *q1 = R->q + (size_t)(c->row + 1) * n;
        *p1 = R->p + (size_t)(c->row + 1) * n;
    } else {
        *q1 = L->ring + (size_t)(k1 & 1) * 2 * n;
        *p1 = *q1 + n;
    }
    return keep;
}

/* The forces' sums after a step: W_{k+1} = W_k + W_step, I likewise; hf
 * (the hook's, or NULL) gets W_k, I_k before this step's are added. */
static void force_sums(sym_work *w, const sym_run *R, const loop *L, cursor *c, double *hf,
                       size_t n)
{
    if (hf) {
        hf[0] = c->wsum;
        if (L->isum) memcpy(hf + 2, L->isum, sizeof(double) * n);
    }
    if (R->work || R->impulse) {
        double dw;
        sym_step_force_work(w, &dw, L->isum ? L->isum + n : NULL);
        c->wsum += dw;
        if (L->isum)
            for (size_t i = 0; i < n; i++) L->isum[i] += L->isum[n + i];
    }
}

/* Is the hook called after step k (every step, or those listed)? */
static int hook_due(const sym_run *R, cursor *c, long k)
{
    if (!R->hook || (R->hook_steps && (c->next_hook >= R->n_hook_steps ||
                                       R->hook_steps[c->next_hook] != k)))
        return 0;
    if (R->hook_steps) c->next_hook++;
    return 1;
}

/* The rest of the hook's force record hf after the step: W_{k+1}, I_{k+1},
 * and the step's force points. */
static void hook_force_end(sym_work *w, const loop *L, const cursor *c, double *hf, size_t n)
{
    const size_t m = (size_t)sym_method_force_points(w->method);
    hf[1] = c->wsum;
    if (L->isum) memcpy(hf + 2 + n, L->isum, sizeof(double) * n);
    (void)sym_step_force_points(w, hf + 2 + 2 * n, hf + 2 + 2 * n + m, hf + 2 + 2 * n + 2 * m,
                                hf + 2 + 2 * n + 3 * m);
}

/* The hook's answer r after step k: < 0 a failure, > 0 a stop (R->stopped). */
static int hook_stop(sym_run *R, long k, int r)
{
    if (r > 0) {
        R->stopped = 1;
        return SYM_OK;
    }
    set_failure(&R->failure, k, node_time(R, k), NULL);
    return SYM_ECALLBACK;
}

/* The progress callback, every progress_every steps: nonzero interrupts. */
static int progress(sym_run *R)
{
    if (R->progress && R->progress_every > 0 && R->done % R->progress_every == 0 &&
        R->progress(R->progress_ctx, R->done)) {
        set_failure(&R->failure, R->done, node_time(R, R->done), NULL);
        return SYM_EINTERRUPT;
    }
    return SYM_OK;
}

/* The derivatives after step k from (q, p): its own (sym_run.jacobians,
 * h_jacobians, and with them the force points' states: sym_run.points),
 * and the tangent (sym_run.tangent) Phi_{k+1} = D_k Phi_k, kept in the next
 * output row when the step's end is kept. */
static int tangent_step(sym_work *w, const sym_run *R, const loop *L, long k, const double *q,
                        const double *p, const cursor *c, int keep)
{
    const size_t m = 2 * (size_t)w->n, mk = m * (size_t)R->tangent_cols;
    const int cols = (int)m + R->jac_u * w->n, ld = 1 + cols + (R->h_jacobians ? 2 : 0);
    const size_t npt = R->points ? (size_t)sym_method_force_points(w->method) : 0;
    double *pts = R->points ? R->points + (size_t)k * npt * m * (size_t)ld : NULL;
    int st = SYM_OK;
    if (R->jacobians) {
        double *out = R->jacobians + (size_t)k * m * (size_t)cols;
        st = pts ? w->ops->point_tangent(w, q, p, R->h, cols, R->jac_u, L->eye, out, pts, ld)
                 : w->ops->tangent(w, q, p, R->h, cols, R->jac_u, L->eye, out);
    }
    if (!st && R->h_jacobians)
        st = w->ops->time_tangent(w, q, p, R->h, R->h_jacobians + (size_t)k * 2 * m,
                                  pts ? pts + 1 + cols : NULL, ld);
    if (!st && R->par) st = sym_params_step(w, R, k, q, p, keep ? c->row + 1 : -1);
    if (st || !R->tangent) return st;
    st = w->ops->tangent(w, q, p, R->h, R->tangent_cols, 0, L->phi, L->phi1);
    if (st) return st;
    memcpy(L->phi, L->phi1, sizeof(double) * mk);
    if (keep) memcpy(R->tangent + (size_t)(c->row + 1) * mk, L->phi, sizeof(double) * mk);
    return SYM_OK;
}

/*
 * The steps: node j+1 is written straight into the next output row when it
 * is kept, else into the ring (step_slot).  Every step starts where the
 * previous one ended, so only the first state needs checking.  Whatever is
 * kept or observed, the steps are the same calls on the same arguments,
 * hence bitwise the same states.
 */
static int run_steps(sym_work *w, sym_run *R, const loop *L)
{
    const size_t n = (size_t)w->n, mid = (size_t)w->method->n_mid * n;
    cursor c = {0, 0, 0, 0, R->work0};
    int st = SYM_OK;
    const double *qk = R->q, *pk = R->p;
    double cn[SYM_MAX_NODES];
    /* the multipliers (constrained systems): s nodes, m each, in the slot of
     * the next stored row -- overwritten until a step is kept, so that the
     * slot of each stored row holds the step that ends there */
    double *lam = w->sys->m > 0 ? R->multipliers : NULL;
    const size_t nlam = lam ? (size_t)sym_method_nodes(w->method, cn) * (size_t)w->sys->m : 0;
    sym_step_info info;
    for (long k = 0; k < R->n_steps; k++) {
        const long k1 = k + 1;
        double *q1, *p1;
        const int keep = step_slot(R, L, k1, &c, n, &q1, &p1);
        double *qm = R->qmid ? R->qmid + (size_t)k * mid : L->mid;
        clear_info(&info);
        w->t = node_time(R, k);   /* the time and index a force sees */
        w->k = R->k0 + k;
        st = w->ops->step(w, qk, pk, R->h, q1, p1, qm, &info);
        w->counts.iterations += info.iterations;
        if (L->every == 1 && R->iters) R->iters[k] = info.iterations;
        if (!st && (L->phi || L->eye || R->par || R->h_jacobians))
            st = tangent_step(w, R, L, k, qk, pk, &c, keep);
        if (st) {
            set_failure(&R->failure, k, node_time(R, k), &info);
            break;
        }
        w->counts.steps++;
        c.acc += info.iterations;
        R->done = k1;
        if (lam) (void)w->ops->multipliers(w, lam + (size_t)c.row * nlam);
        double *hf = R->hook && w->force ? R->hook_force : NULL;
        force_sums(w, R, L, &c, hf, n);
        if (keep) close_row(R, L, &c, k1, n);
        const double *qprev = qk, *pprev = pk;
        qk = q1;
        pk = p1;
        if (hook_due(R, &c, k)) {
            if (hf) hook_force_end(w, L, &c, hf, n);
            const int r = R->hook(R->hook_ctx, k, qprev, pprev, qm, q1, p1);
            if (r) {
                st = hook_stop(R, k, r);
                break;
            }
        }
        st = progress(R);
        if (st) break;
    }
    /* the last completed state closes the stored rows (a no-op when kept) */
    if (L->every > 1) store_row(R, L, &c, R->done, qk, pk, n);
    R->rows = c.row + 1;
    return st;
}

long sym_stored_rows(long n_steps, long every)
{
    if (n_steps < 0) return 0;
    if (every <= 1) return n_steps + 1;
    return n_steps / every + 1 + (n_steps % every != 0);
}

double sym_run_output_bytes(long n_steps, long store_every, int n, int n_mid, int forced,
                            long n_lam)
{
    const double rows = (double)sym_stored_rows(n_steps, store_every), dn = (double)n;
    double b = 8.0 * rows * (1.0 + 2.0 * dn) + 4.0 * (rows - 1.0);
    if (store_every <= 1) b += 8.0 * (double)n_steps * (double)n_mid * dn;
    if (forced) b += 8.0 * rows * (1.0 + dn);
    return b + 8.0 * (double)n_lam * (rows - 1.0);
}

void sym_work_counts(const sym_work *w, sym_counts *out)
{
    if (!out) return;
    if (w)
        *out = w->counts;
    else
        memset(out, 0, sizeof(*out));
}

/* The run's fields, for memory safety and the core's own rules: SYM_EINVAL
 * with the field's name in R->invalid (a constant string). */
static int run_invalid(sym_run *R, const char *field)
{
    R->invalid = field;
    return SYM_EINVAL;
}

static int run_check(const sym_work *w, sym_run *R)
{
    const sym_force *f = w->force ? &w->force->f : NULL;
    if (!R->q0 || !R->p0) return run_invalid(R, "q0/p0");
    if (!R->t || !R->q || !R->p) return run_invalid(R, "t/q/p");
    if (R->n_steps < 0) return run_invalid(R, "n_steps");
    if (R->k0 < 0) return run_invalid(R, "k0");
    if (!isfinite(R->t0)) return run_invalid(R, "t0");
    if (!isfinite(R->h) || R->h == 0.0) return run_invalid(R, "h");
    if (R->store_every < 0) return run_invalid(R, "store_every");
    if (R->store_every > 1 && R->qmid) return run_invalid(R, "qmid");
    if (R->hook_steps && R->n_hook_steps < 0) return run_invalid(R, "n_hook_steps");
    if (R->impulse0 && !R->impulse) return run_invalid(R, "impulse0");
    if (f && f->hold && (R->k0 < f->hold_k0 || R->n_steps > f->hold_rows - (R->k0 - f->hold_k0)))
        return run_invalid(R, "hold");
    if (R->tangent && (R->tangent_cols < 1 || (!R->tangent0 && R->tangent_cols != 2 * w->n)))
        return run_invalid(R, "tangent_cols");
    if (R->h_jacobians && !w->ops->time_tangent) return run_invalid(R, "h_jacobians");
    if (R->points && (!R->jacobians || !w->ops->point_tangent))
        return run_invalid(R, "points");
    if (R->jacobians && R->jac_u &&
        (!w->force || R->jac_u != (f->hold_points > 1 ? f->hold_points : 1)))
        return run_invalid(R, "jac_u");
    for (int k = 0; k < w->n; k++)
        if (!isfinite(R->q0[k]) || !isfinite(R->p0[k])) return SYM_ENONFINITE;
    return SYM_OK;
}

int sym_integrate(sym_work *w, sym_run *R)
{
    if (!R) return SYM_EINVAL;
    R->done = 0;
    R->rows = 0;
    R->stopped = 0;
    R->invalid = NULL;
    memset(&R->counts, 0, sizeof(R->counts));
    memset(&R->failure, 0, sizeof(R->failure));
    if (!w) return SYM_EINVAL;
    int st = run_check(w, R);
    if (st) return st;
    const long every = R->store_every > 1 ? R->store_every : 1;
    const size_t n = (size_t)w->n, nmid = (size_t)w->method->n_mid * n;
    const size_t nring = every > 1 ? 4 * n : 0;
    const size_t nm = R->hook && !R->qmid ? nmid : 0;
    const size_t ni = R->impulse ? 2 * n : 0;
    const size_t mk = R->tangent ? 2 * n * (size_t)R->tangent_cols : 0;
    const size_t cj = R->jacobians ? 2 * n + (size_t)R->jac_u * n : 0;
    const size_t nx = nring + nm + ni + 2 * mk + cj * cj;
    double *extra = NULL;
    if (nx > 0 && !(extra = calloc(nx, sizeof(double)))) return SYM_ENOMEM;
    double *phi = mk ? extra + nring + nm + ni : NULL, *eye = NULL;
    if (cj) {
        eye = extra + nring + nm + ni + 2 * mk;
        for (size_t i = 0; i < cj; i++) eye[i * cj + i] = 1.0;
    }
    const loop L = {every, nring ? extra : NULL, nm ? extra + nring : NULL,
                    ni ? extra + nring + nm : NULL, phi, mk ? phi + mk : NULL, eye};
    if (phi) {
        /* the tangent at node 0: tangent0, or the identity */
        if (R->tangent0) {
            memcpy(phi, R->tangent0, sizeof(double) * mk);
        } else {
            memset(phi, 0, sizeof(double) * mk);
            for (size_t i = 0; i < 2 * n; i++) phi[i * 2 * n + i] = 1.0;
        }
        memcpy(R->tangent, phi, sizeof(double) * mk);
    }
    const sym_counts before = w->counts;
    memcpy(R->q, R->q0, sizeof(double) * n);
    memcpy(R->p, R->p0, sizeof(double) * n);
    R->t[0] = node_time(R, 0);
    if (R->work) R->work[0] = R->work0;
    if (R->impulse) {
        if (R->impulse0)
            memcpy(R->impulse, R->impulse0, sizeof(double) * n);
        else
            memset(R->impulse, 0, sizeof(double) * n);
        memcpy(L.isum, R->impulse, sizeof(double) * n);
        memset(L.isum + n, 0, sizeof(double) * n);
    }
    st = run_steps(w, R, &L);
    /* the work of this run alone */
    R->counts.steps = w->counts.steps - before.steps;
    R->counts.evaluations = w->counts.evaluations - before.evaluations;
    R->counts.iterations = w->counts.iterations - before.iterations;
    R->counts.factorizations = w->counts.factorizations - before.factorizations;
    R->counts.branch_checks = w->counts.branch_checks - before.branch_checks;
    R->counts.branch_fixes = w->counts.branch_fixes - before.branch_fixes;
    free(extra);
    return st;
}
