/*
 * sym_driver.c -- the one driver of every run: sym_integrate(w, &run)
 * (sym_run.h) takes n_steps steps on a prepared workspace (sym_work.c) and
 * fills what the run asks for (sym_run.out: the stored rows of the states,
 * every k-th node and the last, a force's work W and impulse I, the
 * multipliers), calls its observers (sym_run.obs), has each step's
 * derivatives added by sym_derivs.c (sym_run.deriv) and reports
 * (sym_run.report).  The run's fields are checked here, once, for memory
 * safety; nothing is allocated inside the loop.
 */
#include "sym_derivs.h"
#include "sym_forces.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
 * the forces' running impulse, the derivatives' state. */
typedef struct loop {
    long every;                    /* >= 1                                     */
    double *ring;                  /* every > 1: two states (q, p) not stored  */
    double *mid;                   /* internal nodes for the hook, or NULL     */
    double *isum;                  /* with impulse: 2n doubles (running sum,
                                      the step's)                              */
    sym_derivs_state d;            /* sym_derivs.h                             */
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
    const sym_run_outputs *O = &R->out;
    if (O->work) O->work[c->row + 1] = c->wsum;
    if (O->impulse) memcpy(O->impulse + (size_t)(c->row + 1) * n, L->isum, sizeof(double) * n);
    O->t[c->row + 1] = node_time(R, j);
    if (O->iters) O->iters[c->row] = c->acc;
    c->acc = 0;
    c->row++;
    c->row_step = j;
}

/* Store node j (q, p, iterations since the last stored row) as the next row
 * unless it is stored already. */
static void store_row(sym_work *w, const sym_run *R, const loop *L, cursor *c, long j,
                      const double *qj, const double *pj, size_t n)
{
    if (c->row_step == j) return;
    double *qr = R->out.q + (size_t)(c->row + 1) * n, *pr = R->out.p + (size_t)(c->row + 1) * n;
    if (qr != qj) memcpy(qr, qj, sizeof(double) * n);
    if (pr != pj) memcpy(pr, pj, sizeof(double) * n);
    sym_derivs_store(w, &R->deriv, &L->d, c->row + 1);
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
        *q1 = R->out.q + (size_t)(c->row + 1) * n;
        *p1 = R->out.p + (size_t)(c->row + 1) * n;
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
    if (R->out.work || R->out.impulse) {
        double dw;
        sym_step_force_work(w, &dw, L->isum ? L->isum + n : NULL);
        c->wsum += dw;
        if (L->isum)
            for (size_t i = 0; i < n; i++) L->isum[i] += L->isum[n + i];
    }
}

/* Is the hook called after step k (every step, or those listed)? */
static int hook_due(const sym_run_observers *ob, cursor *c, long k)
{
    if (!ob->hook || (ob->hook_steps && (c->next_hook >= ob->n_hook_steps ||
                                         ob->hook_steps[c->next_hook] != k)))
        return 0;
    if (ob->hook_steps) c->next_hook++;
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

/* The hook's answer r after step k: < 0 a failure, > 0 a stop (report.stopped). */
static int hook_stop(sym_run *R, long k, int r)
{
    if (r > 0) {
        R->report.stopped = 1;
        return SYM_OK;
    }
    set_failure(&R->report.failure, k, node_time(R, k), NULL);
    return SYM_ECALLBACK;
}

/* The progress callback, every progress_every steps: nonzero interrupts. */
static int progress(sym_run *R)
{
    const sym_run_observers *ob = &R->obs;
    const long done = R->report.done;
    if (ob->progress && ob->progress_every > 0 && done % ob->progress_every == 0 &&
        ob->progress(ob->progress_ctx, done)) {
        set_failure(&R->report.failure, done, node_time(R, done), NULL);
        return SYM_EINTERRUPT;
    }
    return SYM_OK;
}

/*
 * The steps: node j+1 is written straight into the next output row when it
 * is kept, else into the ring (step_slot).  Every step starts where the
 * previous one ended, so only the first state needs checking.  Whatever is
 * kept, differentiated or observed, the steps are the same calls on the same
 * arguments, hence bitwise the same states.
 */
static int run_steps(sym_work *w, sym_run *R, const loop *L)
{
    const sym_run_outputs *O = &R->out;
    const size_t n = (size_t)w->n, mid = (size_t)w->method->n_mid * n;
    cursor c = {0, 0, 0, 0, O->work0};
    int st = SYM_OK;
    const double *qk = O->q, *pk = O->p;
    double cn[SYM_MAX_NODES];
    /* the multipliers (constrained systems): s nodes, m each, in the slot of
     * the next stored row -- overwritten until a step is kept, so that the
     * slot of each stored row holds the step that ends there */
    double *lam = w->sys->m > 0 ? O->multipliers : NULL;
    const size_t nlam = lam ? (size_t)sym_method_nodes(w->method, cn) * (size_t)w->sys->m : 0;
    const int derivs = sym_derivs_wanted(&R->deriv, &L->d);
    sym_step_info info;
    for (long k = 0; k < R->n_steps; k++) {
        const long k1 = k + 1;
        double *q1, *p1;
        const int keep = step_slot(R, L, k1, &c, n, &q1, &p1);
        double *qm = O->qmid ? O->qmid + (size_t)k * mid : L->mid;
        memset(&info, 0, sizeof(info));
        w->t = node_time(R, k);   /* the time and index a force sees */
        w->k = R->k0 + k;
        st = w->ops->step(w, qk, pk, R->h, q1, p1, qm, &info);
        w->counts.iterations += info.iterations;
        if (L->every == 1 && O->iters) O->iters[k] = info.iterations;
        if (!st && derivs) st = sym_derivs_step(w, R, &L->d, k, qk, pk, keep ? c.row + 1 : -1);
        if (st) {
            set_failure(&R->report.failure, k, node_time(R, k), &info);
            break;
        }
        w->counts.steps++;
        c.acc += info.iterations;
        R->report.done = k1;
        if (lam) (void)w->ops->multipliers(w, lam + (size_t)c.row * nlam);
        double *hf = R->obs.hook && w->force ? R->obs.hook_force : NULL;
        force_sums(w, R, L, &c, hf, n);
        if (keep) close_row(R, L, &c, k1, n);
        const double *qprev = qk, *pprev = pk;
        qk = q1;
        pk = p1;
        if (hook_due(&R->obs, &c, k)) {
            if (hf) hook_force_end(w, L, &c, hf, n);
            const int r = R->obs.hook(R->obs.hook_ctx, k, qprev, pprev, qm, q1, p1);
            if (r) {
                st = hook_stop(R, k, r);
                break;
            }
        }
        st = progress(R);
        if (st) break;
    }
    /* the last completed state closes the stored rows (a no-op when kept) */
    if (L->every > 1) store_row(w, R, L, &c, R->report.done, qk, pk, n);
    R->report.rows = c.row + 1;
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

/* The run's fields, for memory safety and the core's own rules: SYM_EINVAL
 * with the field's name in R->report.invalid (a constant string). */
static int run_invalid(sym_run *R, const char *field)
{
    R->report.invalid = field;
    return SYM_EINVAL;
}

static int run_check(const sym_work *w, sym_run *R)
{
    const sym_force *f = w->force ? &w->force->f : NULL;
    const sym_run_outputs *O = &R->out;
    if (!R->q0 || !R->p0) return run_invalid(R, "q0/p0");
    if (!O->t || !O->q || !O->p) return run_invalid(R, "t/q/p");
    if (R->n_steps < 0) return run_invalid(R, "n_steps");
    if (R->k0 < 0) return run_invalid(R, "k0");
    if (!isfinite(R->t0)) return run_invalid(R, "t0");
    if (!isfinite(R->h) || R->h == 0.0) return run_invalid(R, "h");
    if (O->store_every < 0) return run_invalid(R, "store_every");
    if (O->store_every > 1 && O->qmid) return run_invalid(R, "qmid");
    if (R->obs.hook_steps && R->obs.n_hook_steps < 0) return run_invalid(R, "n_hook_steps");
    if (O->impulse0 && !O->impulse) return run_invalid(R, "impulse0");
    /* a held force has a row for each step k0 .. k0 + n_steps - 1 */
    if (f && f->hold && (R->k0 < f->hold_k0 || R->n_steps > f->hold_rows - (R->k0 - f->hold_k0)))
        return run_invalid(R, "hold");
    const char *bad = sym_derivs_invalid(w, &R->deriv);
    if (bad) return run_invalid(R, bad);
    for (int k = 0; k < w->n; k++)
        if (!isfinite(R->q0[k]) || !isfinite(R->p0[k])) return SYM_ENONFINITE;
    return SYM_OK;
}

int sym_integrate(sym_work *w, sym_run *R)
{
    if (!R) return SYM_EINVAL;
    memset(&R->report, 0, sizeof(R->report));
    if (!w) return SYM_EINVAL;
    int st = run_check(w, R);
    if (st) return st;
    const sym_run_outputs *O = &R->out;
    const long every = O->store_every > 1 ? O->store_every : 1;
    const size_t n = (size_t)w->n, nmid = (size_t)w->method->n_mid * n;
    const size_t nring = every > 1 ? 4 * n : 0;
    const size_t nm = R->obs.hook && !O->qmid ? nmid : 0;
    const size_t ni = O->impulse ? 2 * n : 0;
    const size_t nd = sym_derivs_doubles(w, &R->deriv);
    const size_t nx = nring + nm + ni + nd;
    double *extra = NULL;
    if (nx > 0 && !(extra = calloc(nx, sizeof(double)))) return SYM_ENOMEM;
    loop L = {every, nring ? extra : NULL, nm ? extra + nring : NULL,
              ni ? extra + nring + nm : NULL, {NULL, NULL, NULL}};
    sym_derivs_start(w, &R->deriv, nd ? extra + nring + nm + ni : NULL, &L.d);
    const sym_counts before = w->counts;
    memcpy(O->q, R->q0, sizeof(double) * n);
    memcpy(O->p, R->p0, sizeof(double) * n);
    O->t[0] = node_time(R, 0);
    if (O->work) O->work[0] = O->work0;
    if (O->impulse) {
        if (O->impulse0)
            memcpy(O->impulse, O->impulse0, sizeof(double) * n);
        else
            memset(O->impulse, 0, sizeof(double) * n);
        memcpy(L.isum, O->impulse, sizeof(double) * n);
        memset(L.isum + n, 0, sizeof(double) * n);
    }
    st = run_steps(w, R, &L);
    /* the work of this run alone */
    sym_counts *cr = &R->report.counts;
    cr->steps = w->counts.steps - before.steps;
    cr->evaluations = w->counts.evaluations - before.evaluations;
    cr->iterations = w->counts.iterations - before.iterations;
    cr->factorizations = w->counts.factorizations - before.factorizations;
    cr->branch_checks = w->counts.branch_checks - before.branch_checks;
    cr->branch_fixes = w->counts.branch_fixes - before.branch_fixes;
    free(extra);
    return st;
}
