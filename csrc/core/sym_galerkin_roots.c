/*
 * sym_galerkin_roots.c -- which root of its step equations a Galerkin step
 * keeps (the step, its formulas and what Newton sees: sym_galerkin.c).
 *
 * An implicit step's equations can have several roots.  Three checks judge
 * the one Newton finds: its plausibility (the kinetic energy it creates
 * against what the step's start can supply), the branch check (is it the
 * root continued from h -> 0? else the continued one replaces it), and the
 * run's energy balance (a step size past the scheme's stability limit, where
 * the continued root itself grows the energy).
 */
#include "sym_forces.h"
#include "sym_gwork.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The branch check: is the root the one continued from h -> 0?         */
/* ------------------------------------------------------------------ */
/*
 * The step equations R(X; h) = 0 have one root X(h) that tends to the Taylor
 * step as h -> 0 and follows the exact flow (order 2s - 2); at larger h they
 * have others, and Newton may converge to one of them from a predictor that
 * lies between (a "false root": the trial found pendulum chains whose steps
 * jumped by 2-17 rad with every implicit method at omega h = 1.6-3, some
 * passing the plausibility gate above).  A root is suspicious when
 *   - the step's energy balance e (plausible) exceeds BR_EJUMP (BR_EJUMP2
 *     for the two-node schemes, whose predictor is too crude for the next
 *     test to carry much weight),
 *   - the extrapolating predictor missed it by far more than it missed the
 *     last steps' roots, |X - X_start| > BR_JUMP m (m: the misses of the
 *     last steps, a maximum decaying by BR_DECAY a step; a smooth motion changes
 *     the miss smoothly, another root is a jump), or the Taylor predictor
 *     missed it by |X - X_start| > BR_DIST |X|, or the extrapolation did
 *     (not the two-node schemes', which misses that much at every turning
 *     point) and its energy balance is off by more than BR_EJUMP2,
 *   - or it came from the second (Taylor) start.
 * The thresholds come from runs in which every root was checked; what they
 * catch and cost is benchmarks/RESULTS.md section 21.  The known blind spot:
 * roots that conserve the energy and lie near the predictor, as the
 * one-link pendulum's step rotated by nearly a full turn under the midpoint
 * rule at omega h >= 2.5 (branch_check = "always" checks every root).
 * A suspicious root is checked by continuation in h (on the step's workspace):
 * the root at eta_0 = h/8 from the Taylor predictor (halving eta_0 until
 * Newton converges there near the predictor), then eta grown by factors of at
 * most 2 up to h, each stage started from the parabola through the last
 * three roots (the origin X(0) = 0 among them; at the second stage, through
 * the origin with X'(0) = c v, v = M^-1 p, and X(eta_0)) and accepted when
 * Newton converges within BR_ITERS iterations to within BR_STAGE of that
 * start (else the factor is halved), and when det J keeps its sign (a sign
 * change is a fold between two stages: the branch turns back before h; a
 * continuation with steps too long to see the fold would land on the other
 * branch).  The root at eta = h is
 * the continued one: equal to Newton's root to BR_SAME, the root stands
 * (bitwise the step it was); different, the step is redone from it; not
 * reached within BR_STAGES stages, the step fails with SYM_EBRANCH unless
 * its energy balance passes the test above.
 */
#define BR_DIST 0.3
#define BR_JUMP 30.0
#define BR_DECAY 0.8
#define BR_EJUMP 0.01
#define BR_EJUMP2 0.001
#define BR_ETA0 0.125
#define BR_ITERS 10
#define BR_STAGE 0.05
#define BR_STAGES 64
#define BR_SAME 1e-6

/* Full Newton on the step equations of size eta from the start in g->X
 * (no outputs, no second start; the step's q_j, p_j, G(q_j) and left-node
 * cache are the step's own). */
static int probe_solve(sym_gwork *g, double eta, int *iters)
{
    sym_newton_out o = {0, 0, 0.0, 1.0, 0.0, 0};
    g->h = eta;
    g->newton.lu_valid = 0;
    const int st = sym_newton_root(&g->newton, &sym_galerkin_probe_ops, g, eta, 0, &o);
    *iters = o.iters;
    return st;
}

/* The sign of det J of the last factorised Newton matrix: a fold of the
 * branch of roots between two sizes changes it. */
static int newton_det_sign(const sym_gwork *g)
{
    return g->con          ? sym_gcon_det_sign(g)
           : SYM_TREE_ON(g) ? g->tree.sign
                            : sym_lu_det_sign(g->nu, g->J, g->piv);
}

/* |A - B|_inf / |A|_inf over the first m entries (1 when A = 0 != B) */
static double rel_dist(const double *A, const double *B, int m)
{
    double an = 0.0, dn = 0.0;
    for (int k = 0; k < m; k++) {
        an = sym_nanmax(an, fabs(A[k]));
        dn = sym_nanmax(dn, fabs(A[k] - B[k]));
    }
    if (!isfinite(an) || !isfinite(dn)) return HUGE_VAL;
    return an > 0.0 ? dn / an : (dn > 0.0 ? 1.0 : 0.0);
}

/* The continuation's state in the branch buffer: the stage's start Xp, the
 * last three roots R (the newest last) with their sizes e, v = M^-1 p, how
 * many roots are known (the origin X(0) = 0 counts), and the sign of det J
 * along the branch. */
typedef struct branch {
    double *Xp, *R[3], *vel, e[3];
    int known, sign;
} branch;

/* The first stage: the root at eta = h BR_ETA0 from the Taylor predictor,
 * eta halved until Newton converges there near the predictor; *eta the size
 * reached.  The known roots are then the origin and this one. */
static int first_stage(sym_gwork *g, branch *b, double *eta)
{
    const int n = g->n, nu = g->nu;
    const size_t bytes = sizeof(double) * (size_t)g->newton.nu;
    int st, iters = 0, tries = 0;
    for (;;) {
        st = sym_galerkin_taylor(g, g->q, g->p, *eta);
        if (st) return st;
        memcpy(b->Xp, g->X, bytes);
        memcpy(b->vel, g->v, sizeof(double) * (size_t)n);
        st = probe_solve(g, *eta, &iters);
        if (!st && iters <= BR_ITERS && rel_dist(g->X, b->Xp, nu) <= BR_STAGE) {
            b->sign = newton_det_sign(g);
            break;
        }
        if (st && !sym_newton_retryable(st)) return st;
        if (++tries > 10) return SYM_EBRANCH;
        *eta *= 0.5;
    }
    memset(b->R[1], 0, bytes);
    memcpy(b->R[2], g->X, bytes);
    b->e[2] = *eta;
    b->known = 2;
    return SYM_OK;
}

/* The start of the stage of size next (the last root's size eta), into Xp
 * and g->X. */
static void stage_start(sym_gwork *g, branch *b, double eta, double next)
{
    const int n = g->n, s = g->tab->s, nu = g->nu, N = g->newton.nu;
    double *Xp = b->Xp, *const *R = b->R;
    const double *e = b->e;
    if (b->known == 2) {
        /* the parabola through the origin with slope X'(0) = c v and
         * through X(eta): X(r eta) = r^2 X(eta) + (r - r^2) c v eta */
        const double r = next / eta;
        for (int a = 1; a < s; a++)
            for (int k = 0; k < n; k++) {
                const size_t i = (size_t)(a - 1) * n + k;
                Xp[i] = r * r * R[2][i] + (r - r * r) * g->tab->c[a] * eta * b->vel[k];
            }
        for (int i = nu; i < N; i++) Xp[i] = r * R[2][i];   /* impulses ~ eta */
    } else {
        /* the parabola through the last three roots (the first of them
         * may be the origin) */
        const double l0 = (next - e[1]) * (next - e[2]) / ((e[0] - e[1]) * (e[0] - e[2]));
        const double l1 = (next - e[0]) * (next - e[2]) / ((e[1] - e[0]) * (e[1] - e[2]));
        const double l2 = (next - e[0]) * (next - e[1]) / ((e[2] - e[0]) * (e[2] - e[1]));
        for (int i = 0; i < N; i++) Xp[i] = l0 * R[0][i] + l1 * R[1][i] + l2 * R[2][i];
    }
    memcpy(g->X, Xp, sizeof(double) * (size_t)N);
}

/* The root g->X of size next becomes the newest of the three. */
static void push_root(const sym_gwork *g, branch *b, double next)
{
    double *oldest = b->R[0];
    b->R[0] = b->R[1];
    b->R[1] = b->R[2];
    b->R[2] = oldest;
    memcpy(b->R[2], g->X, sizeof(double) * (size_t)g->newton.nu);
    b->e[0] = b->e[1];
    b->e[1] = b->e[2];
    b->e[2] = next;
    b->known = 3;
}

/* The root continued from h -> 0 of the step from (g->q, g->p) of size
 * g->h (comment above), found on the workspace itself: into *Xc_out (N
 * values in the branch buffer), Newton's unknowns X saved there and put
 * back.  What the step's outputs and the next step need is left as it was,
 * but the points' values (the right point's cache: points_stale) and the
 * factorisation (lu_valid = 0). */
static int continued_root(sym_gwork *g, double **Xc_out)
{
    sym_newton *nw = &g->newton;
    const int nu = g->nu, N = nw->nu;
    const double h = g->h;
    const size_t bytes = sizeof(double) * (size_t)N;
    /* the saved X, then the continuation's arrays */
    double *Xsave = g->br_buf;
    branch b = {Xsave + N, {Xsave + 2 * N, Xsave + 3 * N, Xsave + 4 * N}, Xsave + 5 * N,
                {0.0, 0.0, 0.0}, 1, 1};
    const enum sym_newton_mode mode = nw->mode;
    const int prev_iters = nw->prev_iters;
    memcpy(Xsave, g->X, bytes);
    nw->mode = SYM_NEWTON_FULL;
    g->points_stale = 1;
    double eta = h * BR_ETA0, ratio = 2.0;
    int st = first_stage(g, &b, &eta), iters = 0, stages = 0;
    while (!st && fabs(eta) < fabs(h)) {
        if (++stages > BR_STAGES) { st = SYM_EBRANCH; break; }
        const double next = fabs(eta * ratio) >= fabs(h) ? h : eta * ratio;
        stage_start(g, &b, eta, next);
        st = probe_solve(g, next, &iters);
        if (!st && iters <= BR_ITERS && rel_dist(g->X, b.Xp, nu) <= BR_STAGE) {
            /* a root on the far side of a fold: the branch from h -> 0 turns
             * back between eta and next and does not reach h */
            if (newton_det_sign(g) != b.sign) { st = SYM_EBRANCH; break; }
            push_root(g, &b, next);
            eta = next;
            ratio = ratio * ratio > 2.0 ? 2.0 : ratio * ratio;
        } else {
            if (st && !sym_newton_retryable(st)) break;
            st = SYM_OK;   /* a failed stage: a shorter one next */
            ratio = 1.0 + 0.5 * (ratio - 1.0);
            if (ratio < 1.0 + 1.0 / 64.0) st = SYM_EBRANCH;
        }
    }
    memcpy(g->X, Xsave, bytes);
    g->h = h;
    nw->mode = mode;
    nw->prev_iters = prev_iters;
    nw->lu_valid = 0;
    *Xc_out = b.R[2];
    return st;
}

/*
 * A step size past the stability limit.  Along the run, the discrete energy
 * balance sum_j (T_{j+1} - T_j + W_j - W_F,j) = T_k - T_0 + sum W - sum W_F
 * (W: the potential's work, approximating its change; W_F the forces')
 * stays a small fraction of the energy that flowed, S_k = max over the run
 * of T_j + |sum W| + |sum W_F|, however large h is while the scheme is
 * stable: the error of a symplectic scheme's energy is bounded.  Past the
 * limit of its linear stability (omega h > 2 sqrt 2 for Simpson) the
 * continued root itself grows the energy geometrically; then the balance
 * becomes the flow (|bal| >= BAL_RATIO S_k) while S_k grows far beyond its
 * value after the first step (>= BAL_GROWTH S_1): SYM_EUNSTABLE, before the
 * state runs off to overflow (the stiff two-mass spring at omega h = 14:
 * energy x 1e4 a step).  A forced run's energy follows its work, which the
 * balance includes.  The balance restarts whenever a step does not start
 * where the last one ended.  (S_k is the current flow T_k + |sum W| + |sum
 * W_F| rather than its maximum: a stable run's balance is far below either,
 * and the test below is then a single comparison, |bal| >= BAL_RATIO
 * BAL_GROWTH S_1 being necessary.)
 */
#define BAL_RATIO 0.9
#define BAL_GROWTH 100.0

static inline int track_balance(sym_gwork *g)
{
    const double W = g->work * g->h, WF = g->base.force ? g->base.force->work : 0.0;
    if (!g->kin_known || g->bal_steps == 0) {
        g->bal_steps = 0;
        g->bal = g->bal_W = g->bal_WF = 0.0;
    }
    g->bal += g->ebal;
    g->bal_W += W;
    g->bal_WF += WF;
    if (++g->bal_steps == 1)
        g->bal_scale1 = fmax(g->step_T0, g->kin_end + fabs(g->bal_W) + fabs(g->bal_WF));
    if (!(fabs(g->bal) >= BAL_RATIO * BAL_GROWTH * g->bal_scale1) || !(g->bal_scale1 > 0.0))
        return SYM_OK;
    /* (an energy beyond the double range is unstable too; a nan never is) */
    const double scale = g->kin_end + fabs(g->bal_W) + fabs(g->bal_WF);
    return scale >= BAL_GROWTH * g->bal_scale1 && fabs(g->bal) >= BAL_RATIO * scale
               ? SYM_EUNSTABLE
               : SYM_OK;
}

/* The step again, from the continued root Xc (N values): Newton converges
 * there at once and the outputs are that root's (counted in branch_fixes;
 * the next step starts from the Taylor predictor: no history).  A continued
 * root that the plausibility gate rejects is the scheme's own answer at this
 * h: SYM_EUNSTABLE.  *o gains the solve's iterations. */
static int redo_from(sym_gwork *g, const double *Xc, sym_newton_out *o)
{
    g->miss = 0.0;
    g->points_stale = 0;
    memcpy(g->X, Xc, sizeof(double) * (size_t)g->newton.nu);
    g->newton.lu_valid = 0;
    g->prev_valid = g->prev2_valid = 0;
    sym_newton_out o2 = {0, 0, 0.0, 1.0, 0.0, 0};
    const int st = sym_newton_root(&g->newton, &sym_galerkin_newton_ops, g, g->h, 0, &o2);
    o2.iters += o->iters;
    *o = o2;
    if (st) return st == SYM_EIMPLAUSIBLE ? SYM_EUNSTABLE : st;
    g->base.counts.branch_fixes++;
    return track_balance(g);
}

/* After Newton's root (st0: SYM_OK, or SYM_EIMPLAUSIBLE for a root the
 * plausibility gate rejected, which is always checked): the checks of the
 * comment above.  A continued root that is itself implausible is the
 * scheme's own answer at this h: SYM_EUNSTABLE.  *o is updated when the
 * step is redone from the continued root. */
int sym_galerkin_branch_check(sym_gwork *g, sym_newton_out *o, int st0, int extrapolated)
{
    const int nu = g->nu;
    /* the predictor's miss, measured by Newton's travel from it, and |X| */
    const double miss = g->newton.travel, xn = g->newton.xnorm;
    /* the history: misses of extrapolated starts only (a Taylor start's miss
     * is another kind, often far smaller: the next step's would look like a
     * jump); a Taylor start's root is judged by its miss relative to |X|, the
     * first extrapolated start's miss opens the history */
    const int extra = extrapolated && !o->second;
    const double ref = extra ? g->miss : 0.0;
    g->miss = extra ? (miss > BR_DECAY * ref ? miss : BR_DECAY * ref) : 0.0;
    const double ejump_max = g->tab->s == 2 ? BR_EJUMP2 : BR_EJUMP;
    const int mode = g->base.opt.branch;
    /* a far miss: from a Taylor start alone; from an extrapolated one (not
     * the two-node schemes', whose miss relative to |X| is O(1) at every
     * turning point) with an energy balance off by more than BR_EJUMP2 too,
     * since at omega h ~ 1 the extrapolation misses by a third of the step
     * on many genuine roots */
    const int far = !(miss <= BR_DIST * xn) &&
                    (!extra || (g->tab->s > 2 && fabs(g->ebal) > BR_EJUMP2 * g->eflow));
    const int suspicious = mode == SYM_BRANCH_ALWAYS || o->second || far ||
                           fabs(g->ebal) > ejump_max * g->eflow ||
                           (extra && ref > 0.0 && miss > BR_JUMP * ref);
    if (mode == SYM_BRANCH_NEVER) return st0 ? st0 : track_balance(g);
    if (mode == SYM_BRANCH_OFF) return st0;
    if (!st0 && !suspicious) return track_balance(g);
    g->base.counts.branch_checks++;
    double *Xc;
    int st = continued_root(g, &Xc);
    /* No continued root to compare with: the step equations turn singular
     * between h -> 0 and h (a linear system far past its stability limit
     * does so at resonant sizes), or the branch folds.  A root that keeps
     * the energy balance stands (uncertified: a linear system's is unique);
     * else SYM_EBRANCH. */
    if (st == SYM_EBRANCH && !st0 && !(fabs(g->ebal) > ejump_max * g->eflow))
        return track_balance(g);
    if (st) return st;
    if (rel_dist(Xc, g->X, nu) <= BR_SAME) return st0 ? SYM_EUNSTABLE : track_balance(g);
    return redo_from(g, Xc, o);   /* a false root */
}

/* Newton found no root from its starts (st0: no convergence, a singular
 * matrix, a non-finite value): the continued root, when the continuation
 * reaches h, is the step's (counted as a branch check and fix); else st0. */
int sym_galerkin_branch_rescue(sym_gwork *g, sym_newton_out *o, int st0)
{
    if (g->base.opt.branch == SYM_BRANCH_NEVER || g->base.opt.branch == SYM_BRANCH_OFF)
        return st0;
    g->base.counts.branch_checks++;
    double *Xc;
    int st = continued_root(g, &Xc);
    if (st == SYM_EBRANCH || (st && sym_newton_retryable(st))) return st0;
    return st ? st : redo_from(g, Xc, o);
}
