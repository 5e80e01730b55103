/*
 * sym_galerkin_setup.c -- what the Galerkin engine derives once per
 * workspace from a method's nodes c_a and quadrature (x_i, b_i) (see
 * sym_galerkin.c for the scheme), and the layout of its workspace.
 *
 *   B_ia = l_a(x_i), D_ia = l_a'(x_i)   (Lagrange basis l_a on the nodes),
 *   E_ab = l_b(1 + c_a)                 (extrapolation to the next step),
 *
 * with B_i0 = 1 - sum_{a>=1} B_ia and D_i0 = -sum_{a>=1} D_ia exactly (the
 * increment form of the step equations defines L_d with these values).
 */
#include "sym_gwork.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Lagrange basis polynomial l_a on nodes c[0..s-1] and its derivative. */
static double lagrange(const double *c, int s, int a, double x)
{
    double v = 1.0;
    for (int m = 0; m < s; m++)
        if (m != a) v *= (x - c[m]) / (c[a] - c[m]);
    return v;
}

static double lagrange_d(const double *c, int s, int a, double x)
{
    double sum = 0.0;
    for (int k = 0; k < s; k++) {
        if (k == a) continue;
        double v = 1.0 / (c[a] - c[k]);
        for (int m = 0; m < s; m++)
            if (m != a && m != k) v *= (x - c[m]) / (c[a] - c[m]);
        sum += v;
    }
    return sum;
}

/* Point i is the centre node a of nodes symmetric about 1/2 (c_k + c_{s-1-k}
 * = 1 to rounding, s odd): there l_a'(1/2) = 0 exactly, as l_a is even about
 * 1/2; the sum above leaves ~1e-15 of rounding (lobatto7), which would keep
 * the fixed-size kernels, which skip that term, off the method
 * (sym_galerkin_pick_kernels). */
static int centre_point(const sym_galerkin_table *gt, int i, int a)
{
    const int s = gt->s;
    if (s % 2 == 0 || 2 * a != s - 1 || gt->x[i] != gt->c[a] || gt->c[a] != 0.5) return 0;
    for (int k = 0; k < s / 2; k++)
        if (!(fabs(gt->c[k] + gt->c[s - 1 - k] - 1.0) <= 4.0 * DBL_EPSILON)) return 0;
    return 1;
}

static int table_ok(const sym_galerkin_table *gt)
{
    return gt && gt->s >= 2 && gt->s <= SYM_MAX_NODES && gt->r >= 1 && gt->r <= SYM_MAX_NODES;
}

int sym_galerkin_unknowns(const sym_method *m, int n)
{
    return table_ok(m->table) ? (m->table->s - 1) * n : 0;
}

static void basis_tables(sym_gtab *t, const sym_galerkin_table *gt);

/* The eigenvalues of W = Ah^-1 Bh (sym_galerkin_decouple.c) into re, im
 * (s - 1 each): their count, 0 when the method has no decoupled form,
 * SYM_ENOMEM. */
int sym_galerkin_newton_blocks(const sym_method *m, double *re, double *im)
{
    if (!table_ok(m->table)) return 0;
    sym_gtab *t = malloc(sizeof(sym_gtab));
    if (!t) return SYM_ENOMEM;
    basis_tables(t, m->table);
    sym_galerkin_decouple_tables(t);
    int count = 0;
    for (int k = 0; t->dec_ok && k < t->dec_nb; k++) {
        const int o = t->dec_off[k];
        re[count] = t->dec_L[o][o];
        im[count++] = 0.0;
        if (t->dec_sz[k] == 1) continue;
        re[count - 1] = re[count] = t->dec_L[o][o];
        im[count - 1] = t->dec_L[o][o + 1];
        im[count++] = -t->dec_L[o][o + 1];
    }
    free(t);
    return count;
}

/* B, D (exact partition of unity and zero row sums), E, and the Lobatto
 * structure (points = nodes: B = I) with its precombined weights. */
static void basis_tables(sym_gtab *t, const sym_galerkin_table *gt)
{
    const int s = gt->s, r = gt->r;
    t->s = s;
    t->r = r;
    for (int a = 0; a < s; a++) t->c[a] = gt->c[a];
    for (int i = 0; i < r; i++) {
        t->b[i] = gt->b[i];
        t->unit[i] = -1;
        double bsum = 0.0, dsum = 0.0;
        for (int a = 0; a < s; a++) {
            t->B[i][a] = lagrange(gt->c, s, a, gt->x[i]);
            t->D[i][a] = centre_point(gt, i, a) ? 0.0 : lagrange_d(gt->c, s, a, gt->x[i]);
            if (gt->x[i] == gt->c[a]) t->unit[i] = a;
            if (a > 0) { bsum += t->B[i][a]; dsum += t->D[i][a]; }
        }
        t->B[i][0] = 1.0 - bsum;
        t->D[i][0] = -dsum;
        if (t->unit[i] >= 0)
            for (int a = 0; a < s; a++) t->B[i][a] = (a == t->unit[i]) ? 1.0 : 0.0;
    }
    for (int a = 0; a < s; a++)
        for (int b = 0; b < s; b++) t->E[a][b] = lagrange(gt->c, s, b, 1.0 + gt->c[a]);
    /* E2_ap = L_p(c_a) on the 2s - 1 nodes of the last two steps,
     * c_b - 2 (b = 0..s-1), c_b - 1 (b = 1..s-1), the last one being 0 */
    double c2[2 * SYM_MAX_NODES];
    int m = 0;
    for (int b = 0; b < s; b++) c2[m++] = gt->c[b] - 2.0;
    for (int b = 1; b < s; b++) c2[m++] = gt->c[b] - 1.0;
    for (int a = 0; a < s; a++)
        for (int p = 0; p < m; p++) t->E2[a][p] = lagrange(c2, m, p, gt->c[a]);
    /* E1_ap = L_p(c_a) on the s + 1 nodes -2, c_b - 1 (b = 0..s-1) */
    double c1[SYM_MAX_NODES + 1];
    c1[0] = -2.0;
    for (int b = 0; b < s; b++) c1[b + 1] = gt->c[b] - 1.0;
    for (int a = 0; a < s; a++)
        for (int p = 0; p <= s; p++) t->E1[a][p] = lagrange(c1, s + 1, p, gt->c[a]);
    t->lobatto = (r == s);
    for (int i = 0; i < r; i++) if (t->unit[i] != i) t->lobatto = 0;
    t->jac_h = t->inv_of = NAN;   /* jac_cM, inv_h: at first use */
    if (t->lobatto)
        for (int i = 0; i < s; i++)
            for (int a = 0; a < s; a++) {
                t->bD[i][a] = t->b[i] * t->D[i][a];
                for (int b = 0; b < s; b++) t->bDD[a][b][i] = t->b[i] * t->D[i][a] * t->D[i][b];
            }
}

/* Term lists: J_ab += c X_i with X in {M/h, A, A^T, h (H - K)} and
 * R_a += c P_i or c h f_i, keeping only nonzero coefficients. */
static void term_lists(sym_gtab *t)
{
    const int s = t->s, r = t->r;
    t->njt = t->nrt = 0;
    for (int a = 0; a <= s - 2; a++) {
        for (int i = 0; i < r; i++) {
            const double cP = t->b[i] * t->D[i][a], cf = t->b[i] * t->B[i][a];
            if (cP != 0.0) t->rt[t->nrt++] = (struct sym_rterm){(short)i, (short)a, 0, cP};
            if (cf != 0.0) t->rt[t->nrt++] = (struct sym_rterm){(short)i, (short)a, 1, cf};
        }
        for (int b = 1; b <= s - 1; b++)
            for (int i = 0; i < r; i++) {
                const double bi = t->b[i];
                const double cs[4] = {bi * t->D[i][a] * t->D[i][b], bi * t->D[i][a] * t->B[i][b],
                                      bi * t->B[i][a] * t->D[i][b], bi * t->B[i][a] * t->B[i][b]};
                for (int kind = 0; kind < 4; kind++)
                    if (cs[kind] != 0.0)
                        t->jt[t->njt++] = (struct sym_jterm){(short)i, (short)a, (short)b,
                                                             (short)kind, cs[kind]};
            }
    }
}

/* The points that coincide with the end nodes, and what Newton evaluates
 * at each point. */
static void point_roles(sym_gwork *g)
{
    const sym_gtab *t = g->tab;
    g->left_point = g->right_point = -1;
    for (int i = 0; i < t->r; i++) {
        if (t->unit[i] == 0) g->left_point = i;
        if (t->unit[i] == t->s - 1) g->right_point = i;
    }
    for (int i = 0; i < t->r; i++) {
        if (i == g->left_point) {
            /* M and grad V at q_j are cached; A depends on g_0.  H and K of
             * the left node enter neither the Newton matrix (B_0b = 0 for
             * the unknowns b >= 1) nor the final momentum correction. */
            g->need_full[i] = SYM_NEED_A;
        } else {
            /* H and K enter the Newton matrix (through B_ia B_ib) and the
             * linearised final momentum (through B_ia, a >= 1). */
            g->need_full[i] = SYM_NEED_M | SYM_NEED_A | SYM_NEED_DV | SYM_NEED_H | SYM_NEED_D2V;
        }
    }
}

/* The workspace, in the order layout() hands it out: unknowns, update,
 * residual, predictor history (nu each), the Newton matrix (nu^2); at each of
 * the r points q_i, g_i, grad V, f_i, P_i (n each) and M, A, H, K (n^2 each);
 * the left node cache and the previous end (4 n), two n x n and three n
 * buffers; the LU panel buffer, the pivots (nu ints) and the derived tables
 * (last: the arrays start right after the evaluation scratch, as before the
 * tables moved here); then the step before's increments (nu) and the branch
 * check's buffers (5 nu + n, sym_galerkin_roots.c; a constrained system's are in
 * its slice) and the decoupled Newton matrix's scratch (2 n^2 + nu,
 * sym_galerkin_decouple.c), and the O(n) path's arrays (sym_galerkin_tree.c,
 * O(n) doubles, for every method).  The speed of the small dense kernels depends on where
 * the arrays fall relative to cache lines and pages; this order was kept
 * over the other placements tried because it stays closest to the previous
 * layout (benchmarks/NOTES.md section 3). */
#define PARTS 30
/* newton="auto": the decoupled mode from this many unknowns (s - 1) n on */
#define AUTO_MIN_UNKNOWNS 16

static void part_sizes(const sym_method *m, int n, double *c)
{
    const double dn = (double)n, nn = dn * dn, nu = (double)(m->table->s - 1) * dn;
    const double r = (double)m->table->r;
    const double lu = nu <= SYM_MAX_DOF ? (double)sym_lu_work_size((int)nu) : 8.0 * nu;
    const double tab = (double)((sizeof(sym_gtab) + sizeof(double) - 1) / sizeof(double));
    const double sizes[PARTS] = {
        nu, nu, nu, nu, nu * nu, r * dn, r * dn, r * dn, r * dn, r * dn, r * nn, r * nn,
        r * nn, r * nn, dn, dn, dn, dn, nn, nn, dn, dn, dn, lu,
        (double)sym_int_doubles((size_t)nu), tab, nu, 5.0 * nu + dn, 2.0 * nn + nu,
        sym_gtree_size(m->table->s, m->table->r, n),
    };
    memcpy(c, sizes, sizeof(sizes));
}

int sym_galerkin_work_size(const sym_method *m, int n, double *doubles)
{
    *doubles = 0.0;
    if (!table_ok(m->table)) return SYM_EINVAL;
    double c[PARTS];
    part_sizes(m, n, c);
    *doubles = sym_slices_size(c, PARTS);   /* exact for every size that can be allocated */
    /* the Newton matrix is nu x nu, indexed with int arithmetic: beyond
     * SYM_MAX_DOF it would need > 16 GiB and overflow those indices */
    return (double)(m->table->s - 1) * n > SYM_MAX_DOF ? SYM_ENOMEM : SYM_OK;
}

static void layout(sym_gwork *g, double *cur)
{
    double *tab, *piv, c[PARTS];
    double **const slot[] = {
        &g->X, &g->dX, &g->R, &g->prev_X, &g->J, &g->Qp, &g->Gp, &g->dVp, &g->f, &g->P,
        &g->Mp, &g->Ap, &g->Hp, &g->Kp, &g->cache_q, &g->cache_dV, &g->prev_qend, &g->prev_pend,
        &g->cache_M, &g->Lm, &g->v, &g->acc, &g->tmp, &g->lu_work, &piv, &tab, &g->prev2_X,
        &g->br_buf, &g->dec_buf, &g->tree.cs,
    };
    SYM_STATIC_CHECK(sizeof(slot) / sizeof(slot[0]) == PARTS);
    part_sizes(g->base.method, g->n, c);
    sym_lay_out(cur, slot, c, PARTS);
    g->tab = (sym_gtab *)tab;
    g->piv = (int *)piv;
    /* each point's output slots (V is never asked for at the points) */
    const size_t n = (size_t)g->n, nn = n * n;
    for (int i = 0; i < SYM_MAX_NODES; i++) {
        const size_t k = i < g->base.method->table->r ? (size_t)i : 0;
        sym_eval_out *o = &g->pout[i];
        o->M = g->Mp + k * nn;
        o->A = g->Ap + k * nn;
        o->H = g->Hp + k * nn;
        o->V = NULL;
        o->dV = g->dVp + k * n;
        o->d2V = g->Kp + k * nn;
    }
}

int sym_galerkin_setup(sym_work *w, double *block)
{
    sym_gwork *g = (sym_gwork *)w;
    g->n = w->n;
    g->nu = (w->method->table->s - 1) * w->n;
    layout(g, block);
    basis_tables(g->tab, w->method->table);
    term_lists(g->tab);
    sym_galerkin_decouple_tables(g->tab);
    g->dec_active = 0;
    point_roles(g);
    sym_galerkin_pick_kernels(g);
    sym_gtree_layout(g, g->tree.cs);
    sym_gtree_setup(g);
    sym_lu_pick(g->nu, &g->lu_factor, &g->lu_solve);
    g->kinetic = sym_kinetic_pick(g->n);
    sym_newton *nw = &g->newton;
    nw->nu = g->nu;
    nw->rtol = w->opt.rtol;
    nw->max_iter = w->opt.max_iter;
    nw->mode = (enum sym_newton_mode)w->opt.newton;   /* checked by sym_work.c */
    /* auto: on the O(n) path (sym_galerkin_tree.c) per-step Newton (one
     * factorisation a step: the fewest on chains, benchmarks/NOTES.md
     * section 10); else from AUTO_MIN_UNKNOWNS unknowns on the decoupled
     * matrix, where the method has it and the system no constraints
     * (benchmarks/NOTES.md section 8), except where an evaluation costs far
     * more than the factorisations it saves and M(q) varies (the frozen
     * matrix's extra updates each evaluate the system at every point):
     * per-step Newton there; full Newton below */
    if (nw->mode == SYM_NEWTON_AUTO && g->tree.ok)
        nw->mode = SYM_NEWTON_STEP;
    if (nw->mode == SYM_NEWTON_AUTO) {
        const unsigned fl = w->sys->flags;
        const int costly = (fl & SYM_SYS_COSTLY_EVAL) && !(fl & SYM_SYS_CONSTANT_MASS);
        nw->mode = g->nu < AUTO_MIN_UNKNOWNS || !g->tab->dec_ok || w->sys->m != 0
                       ? SYM_NEWTON_FULL
                   : costly ? SYM_NEWTON_STEP
                            : SYM_NEWTON_DECOUPLED;
    }
    nw->n_q = g->n;   /* q_ref: each step's q_j (sym_galerkin_step) */
    g->con = NULL;
    /* a constrained system: the constraint slice (sym_constraints.c), which
     * moves X, dX, R and prev_X into [X | Lambda] and sets Newton's nu */
    if (w->sys->m > 0) {
        /* the decoupled matrix has no constrained form */
        if (nw->mode == SYM_NEWTON_DECOUPLED) return SYM_EINVAL;
        const int st = sym_gcon_setup(g, w->cblock);
        if (st) return st;
    }
    nw->X = g->X;
    nw->dX = g->dX;
    nw->R = g->R;
    nw->X0 = g->prev_X;
    return SYM_OK;
}
