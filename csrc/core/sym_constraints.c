/*
 * sym_constraints.c -- holonomic constraints g(q) = 0 in the Galerkin
 * variational integrators: the constrained discrete Euler-Lagrange equations,
 * hooked into the engine of sym_galerkin.c where the workspace has a
 * constraint slice (g->con; every hook is skipped without constraints, so
 * the unconstrained step is unchanged, bitwise).
 *
 * The equations (Marsden & West, Acta Numerica 2001, Section 3.5; Jay, SIAM
 * J. Numer. Anal. 33, 1996, for Lobatto IIIA-IIIB; RATTLE, Andersen 1983 and
 * Leimkuhler & Skeel 1994, for the 2-node case).  With m constraints
 * g: R^n -> R^m, G = dg/dq of full rank m, and the discrete Lagrangian
 * L_d(Q_0, ..., Q_{s-1}) of sym_galerkin.c, the constrained action sum
 *
 *   sum_j [ L_d(Q^j) - h sum_a w_a lambda_a^j . g(Q_a^j) ]
 *
 * puts one multiplier vector lambda_a at every node Q_a = q(t_j + c_a h) of
 * a step, weighted by the node weights w_a = int_0^1 l_a(t) dt of the
 * interpolatory quadrature on the nodes (w_a = b_a for Lobatto nodes, whose
 * quadrature is that one; w = (1/2, 1/2) for the implicit midpoint rule).
 * The unknowns of Newton are the increments X_a = Q_a - q_j (a = 1..s-1)
 * and the impulses Lambda_a = h w_a lambda_a (a = 0..s-2), in momentum
 * units; the equations are
 *
 *   R_a = [a = 0] p_j + dL_d/dQ_a - G(Q_a)^T Lambda_a = 0,   a = 0..s-2  (n each)
 *   C_a = g(Q_a) / h                                 = 0,   a = 1..s-1  (m each)
 *
 * -- (s-1)(n + m) unknowns and equations -- and then
 *
 *   p_{j+1} = p_j + h sum_i b_i f_i - sum_{a=0}^{s-1} G(Q_a)^T Lambda_a
 *
 * (difference form, as in sym_galerkin.c: sum_a dL_d/dQ_a = h sum_i b_i f_i)
 * with the last impulse Lambda_{s-1} fixed by the hidden (velocity-level)
 * constraint at the step's end
 *
 *   K = G(q_{j+1}) M(q_{j+1})^{-1} p_{j+1} = 0                         (m).
 *
 * Together: (s-1) n + s m unknowns (X, Lambda_0..Lambda_{s-1}) and as many
 * equations (R, C, K), one Newton system.  Its Jacobian is block lower
 * triangular in (X, Lambda_0..s-2 | Lambda_{s-1}): R and C do not contain
 * Lambda_{s-1}, and K is linear in it.  So Newton's iterates on the whole
 * system are those of Newton on the leading block (R, C) followed by the
 * exact solution of the trailing m x m block, which is done once, after
 * convergence: with M = L L^T (Cholesky) at q_{j+1}, Y = L^{-1} G^T and
 * p~ = p_{j+1} before Lambda_{s-1},
 *
 *   (Y^T Y) Lambda_{s-1} = Y^T L^{-1} p~,     p_{j+1} = p~ - G^T Lambda_{s-1}
 *
 * (the M^{-1}-orthogonal projection of p~ onto G M^{-1} p = 0, as in the
 * second half of RATTLE).  K then holds to rounding at every step's end, and
 * g(Q_a) = 0 at every node to the Newton tolerance.  The trailing block is
 * exactly linear, so this is Newton's method on all (s-1) n + s m equations,
 * not an approximation of it; it also needs no derivative of G M^-1 p.
 *
 * The Jacobian of the leading block, with J the unconstrained one of
 * sym_galerkin.c and S(q, mu) = sum_k mu_k d^2 g_k/dq^2 (symplectic.h):
 *
 *   dR_a/dX_b      = J_ab - [a = b >= 1] S(Q_a, Lambda_a)
 *   dR_a/dLambda_c = -[a = c] G(Q_a)^T
 *   dC_a/dX_b      = [a = b] G(Q_a) / h,      dC_a/dLambda = 0
 *
 * (S appears only at the internal nodes 1..s-2: the 2-node schemes never
 * need second derivatives of g).  The rows C are divided by h so that they
 * are of the size of the rows R over h (G X / h ~ G qdot, against
 * M X / h ~ p), which keeps the saddle-point matrix well scaled for the
 * partially pivoted LU.
 *
 * Orders: the Lobatto members are the Lobatto IIIA-IIIB pair in variational
 * form (Marsden & West 2001, Section 2.6), whose constrained version with
 * the hidden constraint keeps order 2s - 2 in q and p (Jay 1996); the
 * 2-node schemes are order 2.  Measured in tests/model/test_constraints.py.
 *
 * Convergence of Newton: the update test compares the increments with their
 * size and the impulses with the larger of their size and the residual's
 * momentum scale (sym_newton.h, two blocks); the residual test measures each
 * C_a against the size of the terms of g at Q_a, max_k sum_j |G_kj| |Q_aj|.
 *
 * Predictors: the increments as in sym_galerkin.c; the impulses start from
 * the previous step's (the unknown vector is kept across steps) or from zero
 * with the Taylor predictor.
 *
 * Multipliers reported at the nodes: lambda_a = Lambda_a / (h w_a); the
 * constraint force at node a is -G(Q_a)^T lambda_a.
 */
#include "sym_gwork.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Evaluation, with central differences for S                           */
/* ------------------------------------------------------------------ */
size_t sym_constraint_scratch_size(const sym_system *sys)
{
    return 2u * (size_t)sys->m * (size_t)sys->n + (size_t)sys->n;
}

/* Central-difference step for coordinate value x: eps^(1/3) scaled (as
 * sym_eval.c). */
static double fd_step(double x)
{
    const double base = 6.0554544523933395e-06; /* cbrt(DBL_EPSILON) */
    const double ax = fabs(x);
    return base * (ax > 1.0 ? ax : 1.0);
}

/* S(q, mu)[c][d] = d/dq_d (G(q)^T mu)_c by central differences of G,
 * symmetrised (error O(delta^2), about 1e-10 relative). */
static int fd_constraint_hess(const sym_system *sys, const double *q, const double *mu,
                              double *S, double *scratch)
{
    const int n = sys->n, m = sys->m;
    double *Gp = scratch, *Gm = Gp + (size_t)m * n, *qq = Gm + (size_t)m * n;
    memcpy(qq, q, sizeof(double) * (size_t)n);
    for (int d = 0; d < n; d++) {
        const double dl = fd_step(q[d]);
        sym_constraint_out op = {NULL, Gp, NULL}, om = {NULL, Gm, NULL};
        qq[d] = q[d] + dl;
        if (sys->constraint(qq, NULL, SYM_CNEED_JAC, &op, sys->constraint_params))
            return SYM_ECALLBACK;
        qq[d] = q[d] - dl;
        if (sys->constraint(qq, NULL, SYM_CNEED_JAC, &om, sys->constraint_params))
            return SYM_ECALLBACK;
        qq[d] = q[d];
        for (int c = 0; c < n; c++) {
            double v = 0.0;
            for (int k = 0; k < m; k++) v += (Gp[(size_t)k * n + c] - Gm[(size_t)k * n + c]) * mu[k];
            S[(size_t)c * n + d] = v / (2.0 * dl);
        }
    }
    for (int c = 0; c < n; c++)
        for (int d = c + 1; d < n; d++) {
            const double v = 0.5 * (S[(size_t)c * n + d] + S[(size_t)d * n + c]);
            S[(size_t)c * n + d] = S[(size_t)d * n + c] = v;
        }
    return SYM_OK;
}

int sym_constraint_eval(const sym_system *sys, const double *q, const double *mu,
                        unsigned need, const sym_constraint_out *out, double *scratch)
{
    if (sys->m <= 0 || !sys->constraint) return SYM_EINVAL;
    const int fd = (need & SYM_CNEED_HESS) && !(sys->flags & SYM_SYS_CONSTRAINT_HESS);
    const unsigned direct = fd ? need & ~SYM_CNEED_HESS : need;
    if (direct && sys->constraint(q, (direct & SYM_CNEED_HESS) ? mu : NULL, direct, out,
                                  sys->constraint_params))
        return SYM_ECALLBACK;
    return fd ? fd_constraint_hess(sys, q, mu, out->S, scratch) : SYM_OK;
}

/* ------------------------------------------------------------------ */
/* The workspace slice                                                  */
/* ------------------------------------------------------------------ */
/* Lagrange basis polynomial l_a on the nodes c[0..s-1]. */
static double lagrange(const double *c, int s, int a, double x)
{
    double v = 1.0;
    for (int k = 0; k < s; k++)
        if (k != a) v *= (x - c[k]) / (c[a] - c[k]);
    return v;
}

/* w_a = int_0^1 l_a: the Lobatto weights where the quadrature points are the
 * nodes, else by 4-point Gauss-Legendre (exact for degree s - 1 <= 7). */
static void node_weights(const sym_gtab *t, double *w)
{
    static const double x4[4] = {0.069431844202973712, 0.33000947820757187,
                                 0.66999052179242813, 0.93056815579702629};
    static const double b4[4] = {0.17392742256872693, 0.32607257743127307,
                                 0.32607257743127307, 0.17392742256872693};
    for (int a = 0; a < t->s; a++) {
        if (t->lobatto) {
            w[a] = t->b[a];
            continue;
        }
        double v = 0.0;
        for (int i = 0; i < 4; i++) v += b4[i] * lagrange(t->c, t->s, a, x4[i]);
        w[a] = v;
    }
}

#define CPARTS 21

static void cpart_sizes(int s, int n, int m, double *c)
{
    const double dn = n, dm = m, N = (double)(s - 1) * (dn + dm), ds = s;
    const double lu = N <= SYM_MAX_DOF ? (double)sym_lu_work_size((int)N) : 8.0 * N;
    const double head = (double)((sizeof(sym_gcon) + sizeof(double) - 1) / sizeof(double));
    const double sizes[CPARTS] = {
        head, N, N, N, N, N * N, lu, (double)sym_int_doubles((size_t)N), ds * dm, ds * dm * dn,
        ds * dn * dn, dn, dm * dn, dn, dm * dn, dn, dm * dm, dm, ds * dm, 5.0 * N + dn,
        2.0 * dm * dn + dn * dn + dm * dm + 2.0 * dm,
    };
    memcpy(c, sizes, sizeof(sizes));
}

int sym_gcon_size(const sym_method *m, int n, int mc, double *doubles)
{
    *doubles = 0.0;
    if (!m->table || m->table->s < 2 || m->table->s > SYM_MAX_NODES) return SYM_EINVAL;
    const int s = m->table->s;
    double c[CPARTS];
    cpart_sizes(s, n, mc, c);
    *doubles = sym_slices_size(c, CPARTS) + 2.0 * mc * (double)n + n;   /* + eval scratch */
    return (double)(s - 1) * ((double)n + mc) > SYM_MAX_DOF ? SYM_ENOMEM : SYM_OK;
}

int sym_gcon_setup(sym_gwork *g, double *block)
{
    const sym_system *sys = g->base.sys;
    const int s = g->tab->s, n = g->n, m = sys->m;
    double *head, *piv, c[CPARTS];
    cpart_sizes(s, n, m, c);
    sym_gcon *con = (sym_gcon *)block;   /* the struct first, then its arrays */
    double **const parts[] = {
        &head, &con->X, &con->dX, &con->R, &con->prevX, &con->J, &con->lu_work, &piv,
        &con->gq, &con->Gq, &con->S, &con->Qa, &con->G1, &con->q1, &con->Y, &con->z,
        &con->schur, &con->rhs, &con->lam, &g->br_buf, &con->tay,
    };
    SYM_STATIC_CHECK(sizeof(parts) / sizeof(parts[0]) == CPARTS);
    sym_lay_out(block, parts, c, CPARTS);
    con->piv = (int *)piv;
    con->scratch = block + (size_t)sym_slices_size(c, CPARTS);
    con->m = m;
    con->s = s;
    con->n = n;
    con->nu = g->nu;
    con->N = (s - 1) * (n + m);
    node_weights(g->tab, con->w);
    for (int a = 0; a < s; a++)
        if (!(con->w[a] > 0.0)) return SYM_ENOTCONSTRAINED;   /* a node without weight */
    sym_lu_pick(con->N, &con->lu_factor, &con->lu_solve);
    /* Newton runs on [X | Lambda] (its arrays: these, sym_galerkin_setup);
     * the kernels see the first nu entries */
    g->X = con->X;
    g->dX = con->dX;
    g->R = con->R;
    g->prev_X = con->prevX;
    g->newton.nu = con->N;
    g->newton.nu_x = g->nu;
    g->con = con;
    return SYM_OK;
}

void sym_gcon_reset(sym_gwork *g)
{
    g->con->g1_valid = g->con->lam_valid = 0;
}

/* ------------------------------------------------------------------ */
/* The step                                                             */
/* ------------------------------------------------------------------ */
/* Q_a = q_j + X_a (a >= 1) */
static void node_point(const sym_gwork *g, int a, double *Q)
{
    const int n = g->n;
    for (int k = 0; k < n; k++) Q[k] = g->q[k] + g->X[(size_t)(a - 1) * n + k];
}

/* G(q_j) into node 0: the previous step's G(q_{j+1}) when the step starts
 * there (bitwise), else evaluated. */
int sym_gcon_start(sym_gwork *g)
{
    sym_gcon *con = g->con;
    const size_t n = (size_t)g->n, mn = (size_t)con->m * n;
    con->lam_valid = 0;
    if (con->g1_valid && memcmp(con->q1, g->q, sizeof(double) * n) == 0) {
        memcpy(con->Gq, con->G1, sizeof(double) * mn);
        return SYM_OK;
    }
    sym_constraint_out out = {NULL, con->Gq, NULL};
    return sym_constraint_eval(g->base.sys, g->q, NULL, SYM_CNEED_JAC, &out, con->scratch);
}

/*
 * The Taylor start of a constrained step (after sym_galerkin_taylor's, whose
 * v = M^-1 p, a0 = M^-1 f and chol M(q) it reads): the acceleration of the
 * motion on g(q) = 0, whose multipliers keep it on the manifold.  With
 * M a = f - G^T lambda and the second derivative of g(q(t)) = 0,
 * G a + c = 0, c_k = v^T (d^2 g_k/dq^2) v (the index-1 form; Hairer, Lubich
 * & Wanner, GNI VII.1):
 *   (G M^-1 G^T) lambda = G a0 + c,   a = a0 - M^-1 G^T lambda,
 * g->acc becomes a (the caller's increments X_a = tau_a v + tau_a^2 a / 2
 * use it) and the impulses Lambda_a = h w_a lambda.  Without it, a start at rest on the manifold
 * (a pendulum's turning point) would predict the unconstrained fall, whose
 * normal part no shorter step removes.  A singular G M^-1 G^T (a degenerate
 * constraint) leaves a0 and zero impulses.
 */
int sym_gcon_taylor(sym_gwork *g, const double *q, double h)
{
    sym_gcon *con = g->con;
    const int n = g->n, m = con->m, s = con->s, nu = con->nu;
    double *G = con->tay, *S = G + (size_t)m * n, *Z = S + (size_t)n * n, *W = Z + (size_t)m * n,
           *lam = W + (size_t)m * m, *e = lam + m;
    memset(con->X + nu, 0, sizeof(double) * (size_t)(con->N - nu));
    sym_constraint_out out = {NULL, G, NULL};
    int st = sym_constraint_eval(g->base.sys, q, NULL, SYM_CNEED_JAC, &out, con->scratch);
    for (int k = 0; k < m && !st; k++) {
        /* c_k = v^T S(q, e_k) v; z_k = M^-1 g_k */
        memset(e, 0, sizeof(double) * (size_t)m);
        e[k] = 1.0;
        out = (sym_constraint_out){NULL, NULL, S};
        st = sym_constraint_eval(g->base.sys, q, e, SYM_CNEED_HESS, &out, con->scratch);
        double c = 0.0, ga = 0.0;
        for (int i = 0; i < n; i++) {
            double Sv = 0.0;
            for (int j = 0; j < n; j++) Sv += S[(size_t)i * n + j] * g->v[j];
            c += g->v[i] * Sv;
            ga += G[(size_t)k * n + i] * g->acc[i];
        }
        lam[k] = ga + c;
        memcpy(Z + (size_t)k * n, G + (size_t)k * n, sizeof(double) * (size_t)n);
        sym_cholesky_solve(n, g->Lm, Z + (size_t)k * n);
    }
    if (st) return st;
    for (int k = 0; k < m; k++)
        for (int l = 0; l < m; l++) {
            double v = 0.0;
            for (int i = 0; i < n; i++) v += G[(size_t)k * n + i] * Z[(size_t)l * n + i];
            W[(size_t)k * m + l] = v;
        }
    if (sym_cholesky(m, W)) return SYM_OK;
    sym_cholesky_solve(m, W, lam);
    for (int k = 0; k < m; k++)
        for (int i = 0; i < n; i++) g->acc[i] -= Z[(size_t)k * n + i] * lam[k];
    for (int a = 0; a <= s - 2; a++)
        for (int k = 0; k < m; k++) con->X[nu + (size_t)a * m + k] = h * con->w[a] * lam[k];
    return SYM_OK;
}

/* The constraint rows and terms of the residual (after the kernel's R). */
int sym_gcon_det_sign(const sym_gwork *g)
{
    const sym_gcon *con = g->con;
    return sym_lu_det_sign(con->N, con->J, con->piv);
}

int sym_gcon_residual(sym_gwork *g, double *rnorm, double *rscale)
{
    sym_gcon *con = g->con;
    const int n = g->n, s = con->s, m = con->m, nu = con->nu;
    const size_t mn = (size_t)m * n;
    const double h = g->h;
    for (int a = 1; a < s; a++) {
        node_point(g, a, con->Qa);
        sym_constraint_out out = {con->gq + (size_t)a * m, con->Gq + (size_t)a * mn, NULL};
        const int st = sym_constraint_eval(g->base.sys, con->Qa, NULL,
                                           SYM_CNEED_G | SYM_CNEED_JAC, &out, con->scratch);
        if (st) return st;
    }
    /* R_a -= G(Q_a)^T Lambda_a, a = 0..s-2 */
    double scale = *rscale, rn = 0.0;
    for (int a = 0; a <= s - 2; a++) {
        const double *Lam = con->X + nu + (size_t)a * m, *Ga = con->Gq + (size_t)a * mn;
        double *Ra = con->R + (size_t)a * n;
        for (int j = 0; j < n; j++) {
            double v = 0.0;
            for (int k = 0; k < m; k++) v += Ga[(size_t)k * n + j] * Lam[k];
            Ra[j] -= v;
            if (fabs(v) > scale) scale = fabs(v);
        }
    }
    for (int k = 0; k < nu; k++) {
        const double v = fabs(con->R[k]);
        rn = sym_nanmax(rn, v);   /* propagates nan */
    }
    /* C_a = g(Q_a)/h, measured against the size of g's terms at Q_a */
    for (int a = 1; a < s; a++) {
        const double *ga = con->gq + (size_t)a * m, *Ga = con->Gq + (size_t)a * mn;
        node_point(g, a, con->Qa);
        double cs = 0.0;
        for (int k = 0; k < m; k++) {
            double t = 0.0;
            for (int j = 0; j < n; j++) t += fabs(Ga[(size_t)k * n + j]) * fabs(con->Qa[j]);
            if (t > cs) cs = t;
        }
        for (int k = 0; k < m; k++) {
            con->R[nu + (size_t)(a - 1) * m + k] = ga[k] / h;
            double r = cs > 0.0 ? fabs(ga[k]) / cs : (ga[k] == 0.0 ? 0.0 : 1.0);
            if (r > 1.0) r = 1.0;               /* far from rounding either way */
            if (isnan(ga[k])) r = ga[k];
            const double v = r * scale;
            rn = sym_nanmax(rn, v);
        }
    }
    *rnorm = rn;
    *rscale = scale;
    return SYM_OK;
}

/* The saddle-point matrix of the leading block from the kernel's J (in
 * g->J), G at the nodes (Gq: s x m x n) and S(Q_a, Lambda_a) at the
 * internal nodes (S: s x n x n, slots 1..s-2 read): the formulas of the
 * header, into J (N x N). */
void sym_gcon_assemble(const sym_gwork *g, const double *Gq, const double *S, double *J)
{
    const sym_gcon *con = g->con;
    const int n = g->n, s = con->s, m = con->m, nu = con->nu, N = con->N;
    const size_t nn = (size_t)n * n, mn = (size_t)m * n;
    const double ih = 1.0 / g->h;
    memset(J, 0, sizeof(double) * (size_t)N * N);
    for (int r = 0; r < nu; r++) memcpy(J + (size_t)r * N, g->J + (size_t)r * nu, sizeof(double) * nu);
    for (int a = 0; a <= s - 2; a++) {
        const double *Ga = Gq + (size_t)a * mn, *Sa = S + (size_t)a * nn;
        for (int i = 0; i < n; i++) {
            double *row = J + ((size_t)a * n + i) * N;
            if (a >= 1)
                for (int j = 0; j < n; j++) row[(size_t)(a - 1) * n + j] -= Sa[(size_t)i * n + j];
            for (int k = 0; k < m; k++) row[nu + (size_t)a * m + k] = -Ga[(size_t)k * n + i];
        }
    }
    for (int a = 1; a < s; a++) {
        const double *Ga = Gq + (size_t)a * mn;
        for (int k = 0; k < m; k++) {
            double *row = J + ((size_t)nu + (size_t)(a - 1) * m + k) * N + (size_t)(a - 1) * n;
            for (int j = 0; j < n; j++) row[j] = Ga[(size_t)k * n + j] * ih;
        }
    }
}

/* The Newton matrix of the leading block (after the kernel's J). */
int sym_gcon_jacobian(sym_gwork *g)
{
    sym_gcon *con = g->con;
    const int n = g->n, s = con->s, m = con->m, nu = con->nu, N = con->N;
    const size_t nn = (size_t)n * n;
    /* S(Q_a, Lambda_a) at the internal nodes */
    for (int a = 1; a <= s - 2; a++) {
        node_point(g, a, con->Qa);
        sym_constraint_out out = {NULL, NULL, con->S + (size_t)a * nn};
        const int st = sym_constraint_eval(g->base.sys, con->Qa, con->X + nu + (size_t)a * m,
                                           SYM_CNEED_HESS, &out, con->scratch);
        if (st) return st;
    }
    double *J = con->J;
    sym_gcon_assemble(g, con->Gq, con->S, J);
    for (size_t k = 0; k < (size_t)N * N; k++)
        if (!isfinite(J[k])) return SYM_ENONFINITE;
    return SYM_OK;
}

int sym_gcon_factor(sym_gwork *g)
{
    sym_gcon *con = g->con;
    const int st = sym_gcon_jacobian(g);
    return st ? st : con->lu_factor(con->N, con->J, con->piv, con->lu_work);
}

void sym_gcon_solve(sym_gwork *g, double *b)
{
    sym_gcon *con = g->con;
    con->lu_solve(con->N, con->J, con->piv, b);
}

/* The Newton matrix last formed (sym_galerkin_newton_system). */
const double *sym_gcon_matrix(const sym_gwork *g)
{
    return g->con->J;
}

/* y <- L^{-1} y, L lower triangular (n x n, row-major). */
static void forward(int n, const double *L, double *y)
{
    for (int i = 0; i < n; i++) {
        double v = y[i];
        for (int k = 0; k < i; k++) v -= L[(size_t)i * n + k] * y[k];
        y[i] = v / L[(size_t)i * n + i];
    }
}

/*
 * The step's momentum (g->p1 holds p_j + h sum_i b_i f_i): the impulses at
 * nodes 0..s-2, and the last one from the hidden constraint at q_{j+1}
 * (the projection in the header).  After a final Newton update Delta
 * (converged == 2) the terms G(Q_a)^T Lambda_a were formed before it: they
 * are advanced to first order with S(Q_a, Lambda_a) Delta_a (internal nodes;
 * Lambda already includes the update), as the kernels advance f.
 */
int sym_gcon_outputs(sym_gwork *g, int converged)
{
    sym_gcon *con = g->con;
    const sym_system *sys = g->base.sys;
    const int n = g->n, s = con->s, m = con->m, nu = con->nu;
    const size_t nn = (size_t)n * n, mn = (size_t)m * n;
    double *p1 = g->p1;
    for (int a = 0; a <= s - 2; a++) {
        const double *Lam = con->X + nu + (size_t)a * m, *Ga = con->Gq + (size_t)a * mn;
        for (int j = 0; j < n; j++) {
            double v = 0.0;
            for (int k = 0; k < m; k++) v += Ga[(size_t)k * n + j] * Lam[k];
            p1[j] -= v;
        }
        if (converged == 2 && a >= 1) {
            const double *Sa = con->S + (size_t)a * nn, *dXa = con->dX + (size_t)(a - 1) * n;
            for (int j = 0; j < n; j++) {
                double v = 0.0;
                for (int k = 0; k < n; k++) v += Sa[(size_t)j * n + k] * dXa[k];
                p1[j] -= v;
            }
        }
    }
    /* G and M at q_{j+1} */
    sym_constraint_out out = {NULL, con->G1, NULL};
    con->g1_valid = 0;
    int st = sym_constraint_eval(sys, g->q1, NULL, SYM_CNEED_JAC, &out, con->scratch);
    if (st) return st;
    memcpy(con->q1, g->q1, sizeof(double) * (size_t)n);
    con->g1_valid = 1;
    st = sym_galerkin_left_cache(g, g->q1);
    if (st) return st;
    double *L = g->Lm;
    memcpy(L, g->cache_M, sizeof(double) * nn);
    st = sym_cholesky(n, L);
    if (st) return st;
    /* Y = L^{-1} G^T (rows y_k), z = L^{-1} p~ */
    for (int k = 0; k < m; k++) {
        double *y = con->Y + (size_t)k * n;
        memcpy(y, con->G1 + (size_t)k * n, sizeof(double) * (size_t)n);
        forward(n, L, y);
    }
    memcpy(con->z, p1, sizeof(double) * (size_t)n);
    forward(n, L, con->z);
    double dmax = 0.0;
    for (int k = 0; k < m; k++) {
        const double *yk = con->Y + (size_t)k * n;
        double r = 0.0;
        for (int j = 0; j < n; j++) r += yk[j] * con->z[j];
        con->rhs[k] = r;
        for (int l = 0; l <= k; l++) {
            const double *yl = con->Y + (size_t)l * n;
            double v = 0.0;
            for (int j = 0; j < n; j++) v += yk[j] * yl[j];
            con->schur[(size_t)k * m + l] = con->schur[(size_t)l * m + k] = v;
        }
        if (con->schur[(size_t)k * m + k] > dmax) dmax = con->schur[(size_t)k * m + k];
    }
    /* G M^-1 G^T: singular, or numerically so (a pivot below 1e-12 of the
     * largest diagonal entry: condition beyond 1e12), is a lost rank */
    if (sym_cholesky(m, con->schur)) return SYM_ECONSTRAINT;
    for (int k = 0; k < m; k++) {
        const double d = con->schur[(size_t)k * m + k];
        if (!(d * d > 1e-12 * dmax)) return SYM_ECONSTRAINT;
    }
    sym_cholesky_solve(m, con->schur, con->rhs);
    for (int j = 0; j < n; j++) {
        double v = 0.0;
        for (int k = 0; k < m; k++) v += con->G1[(size_t)k * n + j] * con->rhs[k];
        p1[j] -= v;
    }
    /* the multipliers at the nodes, lambda_a = Lambda_a / (h w_a) */
    for (int a = 0; a < s; a++) {
        const double *Lam = a < s - 1 ? con->X + nu + (size_t)a * m : con->rhs;
        const double c = 1.0 / (g->h * con->w[a]);
        for (int k = 0; k < m; k++) con->lam[(size_t)a * m + k] = Lam[k] * c;
    }
    con->lam_valid = 1;
    return SYM_OK;
}

int sym_gcon_multipliers(const sym_work *w, double *lambda)
{
    const sym_gwork *g = (const sym_gwork *)w;
    if (!g->con || !g->con->lam_valid) return SYM_EINVAL;
    memcpy(lambda, g->con->lam, sizeof(double) * (size_t)g->con->s * (size_t)g->con->m);
    return SYM_OK;
}
