/*
 * sym_constraints_tangent.c -- the exact tangent map D = d(q1, p1)/d(q, p)
 * of the constrained Galerkin step just taken (sym_constraints.c, whose
 * header comment has the equations and the notation used here), applied to
 * k columns (the contract of sym_scheme_ops.tangent).
 *
 * The step is a map of all of R^2n: (q, p) -> (q1, p1) through the root
 * Z = (X_1..X_{s-1}, Lambda_0..Lambda_{s-2}) of the leading block
 *
 *   R_a(Z; q, p) = [a = 0] p + dL_d/dQ_a - G(Q_a)^T Lambda_a = 0,  a = 0..s-2
 *   C_a(Z; q)    = g(Q_a) / h                              = 0,  a = 1..s-1
 *
 * with Q_0 = q and Q_a = q + X_a, followed by
 *
 *   q1 = q + X_{s-1},
 *   p~ = p + h sum_i b_i f_i - sum_{a=0}^{s-2} G(Q_a)^T Lambda_a,
 *   p1 = p~ - G1^T Lambda_{s-1},   W Lambda_{s-1} = G1 M1^{-1} p~,
 *
 * where G1 = G(q1), M1 = M(q1), W = G1 M1^{-1} G1^T.  Its derivative, piece
 * by piece, along a column (dq, dp); S(x, mu) = sum_k mu_k d^2 g_k/dq^2
 * (symplectic.h), so that d(G(x)^T mu)/dx at fixed mu is S(x, mu).
 *
 * 1. The leading block, by the implicit function theorem at the root:
 *
 *      Jc dZ = -(F_q dq + F_p dp),
 *
 *    Jc = d(R, C)/dZ the saddle-point matrix of sym_constraints.c (formed
 *    anew at the root: the kernel's J with every second derivative, minus
 *    S(Q_a, Lambda_a) at the internal nodes, the -G(Q_a)^T and G(Q_a)/h
 *    blocks) and, at fixed Z (every node moves with q):
 *
 *      dR_a/dq = R_q,a - S(Q_a, Lambda_a)           a = 0..s-2 (node 0 too)
 *      dR_0/dp = I,  dR_a/dp = 0 (a >= 1)
 *      dC_a/dq = G(Q_a) / h,  dC_a/dp = 0          a = 1..s-1
 *
 *    (R_q,a: the unconstrained step's dR_a/dq at fixed increments, with a
 *    force's terms, sym_galerkin_jac.c).  Then dq1 = dq + dX_{s-1}.
 *
 * 2. The momentum before the projection, with dQ_0 = dq, dQ_a = dq + dX_a:
 *
 *      dp~ = dp + d(h sum_i b_i f_i)                (sym_galerkin_jac.c)
 *            - sum_{a=0}^{s-2} [ S(Q_a, Lambda_a) dQ_a + G(Q_a)^T dLambda_a ].
 *
 * 3. The projection.  With u = M1^{-1} p1 (the end velocity, G1 u = 0),
 *    differentiate p1 = p~ - G1^T Lambda_{s-1} and the hidden constraint
 *    G1 M1^{-1} p1 = 0 that fixes Lambda_{s-1}:
 *
 *      dp1 = dp~ - S(q1, Lambda_{s-1}) dq1 - G1^T dLambda_{s-1}
 *      0   = (dG1) u - G1 M1^{-1} (dM1) u + G1 M1^{-1} dp1
 *
 *    since d(M^{-1}) p1 = -M^{-1} (dM) M^{-1} p1.  Here (dM1) u = A(q1, u) dq1
 *    (A(q, g) = d(M(q) g)/dq, symplectic.h: SYM_NEED_A) and (dG1) u =
 *    T(u) dq1 with T_kc = sum_j u_j d^2 g_k/dq_j dq_c, i.e. row k of T is
 *    (S(q1, e_k) u)^T (m evaluations of S).  Putting the first line into
 *    the second:
 *
 *      W dLambda_{s-1} = G1 M1^{-1} [ dp~ - S(q1, Lambda_{s-1}) dq1
 *                                     - A(q1, u) dq1 ] + T(u) dq1.
 *
 *    A constant mass has A = 0 and this is the derivative of the
 *    M^{-1}-orthogonal projection at fixed q1 plus the turning of G1.
 *
 * What D means.  Every output of D lies in the tangent space of the
 * manifold {g = 0, G M^-1 p = 0} at (q1, p1): C_{s-1} = 0 differentiated
 * gives G1 dq1 = 0, and the second line of 3 is the derivative of the
 * hidden constraint.  So D is the derivative of the step map on all of
 * R^2n (a variation off the manifold -- g(q) != 0 or G M^-1 p != 0 -- is
 * carried onto it in one step, as the step carries any (q, p)), and for a
 * variation in the manifold's tangent space at (q, p) it is the derivative
 * of the step along the manifold, the map whose restriction preserves the
 * symplectic form restricted to the manifold.
 *
 * Accuracy: D is the derivative at the root Newton returned (a root of the
 * equations to Newton's tolerance); the second derivatives are the
 * system's (S by central differences where the system has no
 * SYM_SYS_CONSTRAINT_HESS: about 1e-10 relative).
 *
 * State: the step's root (con->X), the chord's saddle-point matrix and
 * pivots (con->J, con->piv), S and G at the nodes (con->S, con->Gq), the
 * predictor's history and the caches are not written; g->J (the kernel's
 * matrix, into which sym_galerkin_tangent_root writes) is saved and put
 * back; the points' evaluations are the step's scratch, recomputed by the
 * next step.  So a run's states are bitwise those without the tangent.
 * The end state (q1, p1) is read from the predictor's copy (prev_qend,
 * prev_pend) and Lambda_{s-1} from con->rhs, where sym_gcon_outputs left
 * them.
 */
#include "sym_gwork.h"
#include "sym_params.h"

#include <stdlib.h>
#include <string.h>

/* The tangent's scratch: one allocation (ctan_new), freed by ctan_free. */
typedef struct ctan {
    int n, m, s, nu, N;
    double *Jc, *luw, *Jsave;   /* N x N, sym_lu_work_size(N), nu x nu     */
    double *Rq, *P;             /* nu x n, n x (n + nu)                     */
    double *GQ, *SQ;            /* per node: G(Q_a) (m x n), S(Q_a, Lam_a)
                                   (n x n; slot s-1: S(q1, Lambda_{s-1}))  */
    double *L1, *A1, *T, *Z1;   /* at q1: chol(M1), A(q1, u), T(u), M1^-1 G1^T
                                   (n x n, n x n, m x n, m x n)             */
    double *W, *u, *e;          /* chol(W) (m x m), u (n), e (m)            */
    double *dZ, *dq, *dp, *dpt, *b, *mu;   /* N, n, n, n, n, m              */
    double *Ru, *pu;            /* (s-1) n, n: a held force's variation's
                                   terms (sym_gforce_du)                    */
    int *piv;                   /* N                                        */
    void *block;
} ctan;

static void ctan_free(ctan *c)
{
    free(c->block);
}

static int ctan_new(const sym_gwork *g, ctan *c)
{
    const sym_gcon *con = g->con;
    const size_t n = (size_t)g->n, m = (size_t)con->m, s = (size_t)con->s;
    const size_t nu = (size_t)con->nu, N = (size_t)con->N, nn = n * n;
    const size_t sizes[] = {N * N, sym_lu_work_size((int)N), nu * nu, nu * n, n * (n + nu),
                            s * m * n,
                            s * nn, nn, nn, m * n, m * n, m * m, n, m,
                            N, n, n, n, n, m, (s - 1) * n, n};
    double **const parts[] = {&c->Jc, &c->luw, &c->Jsave, &c->Rq, &c->P, &c->GQ, &c->SQ, &c->L1,
                              &c->A1, &c->T, &c->Z1, &c->W, &c->u, &c->e,
                              &c->dZ, &c->dq, &c->dp, &c->dpt, &c->b, &c->mu, &c->Ru,
                              &c->pu};
    const size_t nparts = sizeof(sizes) / sizeof(sizes[0]);
    SYM_STATIC_CHECK(sizeof(sizes) / sizeof(sizes[0]) == sizeof(parts) / sizeof(parts[0]));
    size_t total = 0;
    for (size_t i = 0; i < nparts; i++) total += sizes[i];
    c->n = (int)n;
    c->m = (int)m;
    c->s = (int)s;
    c->nu = (int)nu;
    c->N = (int)N;
    c->block = malloc(sizeof(double) * total + sizeof(int) * N);
    if (!c->block) return SYM_ENOMEM;
    double *at = c->block;
    for (size_t i = 0; i < nparts; i++) {
        *parts[i] = at;
        at += sizes[i];
    }
    c->piv = (int *)at;
    return SYM_OK;
}

/* G(Q_a) at every node and S(Q_a, Lambda_a) at nodes 0..s-2 (step 1). */
static int node_terms(const sym_gwork *g, const double *q, ctan *c)
{
    const sym_gcon *con = g->con;
    const int n = c->n, m = c->m, s = c->s;
    const size_t mn = (size_t)m * n, nn = (size_t)n * n;
    for (int a = 0; a < s; a++) {
        double *Q = c->b;   /* the node, in a column's vector not yet in use */
        for (int j = 0; j < n; j++) Q[j] = q[j] + (a ? con->X[(size_t)(a - 1) * n + j] : 0.0);
        const unsigned need = a < s - 1 ? SYM_CNEED_JAC | SYM_CNEED_HESS : SYM_CNEED_JAC;
        const double *Lam = a < s - 1 ? con->X + c->nu + (size_t)a * m : NULL;
        sym_constraint_out out = {NULL, c->GQ + a * mn, a < s - 1 ? c->SQ + a * nn : NULL};
        const int st = sym_constraint_eval(g->base.sys, Q, Lam, need, &out, con->scratch);
        if (st) return st;
    }
    return SYM_OK;
}

/* At the end (q1, p1), step 3's pieces: chol(M1), u = M1^{-1} p1, A(q1, u),
 * S(q1, Lambda_{s-1}) (into slot s-1 of SQ), T(u), Z1 = M1^{-1} G1^T (rows
 * z_k = M1^{-1} g_k, g_k the rows of G1 = G(Q_{s-1})) and chol(W),
 * W_kl = g_k . z_l. */
static int end_terms(sym_gwork *g, ctan *c)
{
    const sym_gcon *con = g->con;
    const sym_system *sys = g->base.sys;
    const int n = c->n, m = c->m, s = c->s;
    const size_t nn = (size_t)n * n;
    const double *q1 = g->prev_qend, *G1 = c->GQ + (size_t)(s - 1) * m * n;
    sym_eval_out eo = {0};
    eo.M = c->L1;
    int st = sym_eval(sys, q1, NULL, SYM_NEED_M, &eo, g->base.scratch);
    if (!st) st = sym_cholesky(n, c->L1);
    if (st) return st;
    memcpy(c->u, g->prev_pend, sizeof(double) * (size_t)n);
    sym_cholesky_solve(n, c->L1, c->u);
    eo.M = NULL;
    eo.A = c->A1;
    g->base.counts.evaluations += 2;
    if ((st = sym_eval(sys, q1, c->u, SYM_NEED_A, &eo, g->base.scratch))) return st;
    sym_constraint_out so = {NULL, NULL, c->SQ + (size_t)(s - 1) * nn};
    if ((st = sym_constraint_eval(sys, q1, con->rhs, SYM_CNEED_HESS, &so, con->scratch)))
        return st;
    for (int k = 0; k < m; k++) {
        /* row k of T: S(q1, e_k) u, S formed in the Jacobian slot as scratch */
        memset(c->e, 0, sizeof(double) * (size_t)m);
        c->e[k] = 1.0;
        so.S = c->Jc;
        if ((st = sym_constraint_eval(sys, q1, c->e, SYM_CNEED_HESS, &so, con->scratch)))
            return st;
        for (int j = 0; j < n; j++) {
            double v = 0.0;
            for (int i = 0; i < n; i++) v += c->Jc[(size_t)j * n + i] * c->u[i];
            c->T[(size_t)k * n + j] = v;
        }
        memcpy(c->Z1 + (size_t)k * n, G1 + (size_t)k * n, sizeof(double) * (size_t)n);
        sym_cholesky_solve(n, c->L1, c->Z1 + (size_t)k * n);
    }
    for (int k = 0; k < m; k++)
        for (int l = 0; l < m; l++) {
            double v = 0.0;
            for (int j = 0; j < n; j++) v += G1[(size_t)k * n + j] * c->Z1[(size_t)l * n + j];
            c->W[(size_t)k * m + l] = v;
        }
    return sym_cholesky(m, c->W) ? SYM_ECONSTRAINT : SYM_OK;
}

/* Jc at the root, factorised in c->Jc (step 1), with R_q in c->Rq. */
static int saddle_matrix(sym_gwork *g, const double *q, double h, ctan *c)
{
    const sym_gcon *con = g->con;
    int st = sym_galerkin_tangent_root(g, q, h, c->Rq, c->P);
    if (st) return st;
    sym_gcon_assemble(g, c->GQ, c->SQ, c->Jc);
    g->base.counts.factorizations++;
    return con->lu_factor(c->N, c->Jc, c->piv, c->luw);
}

/* y -= S x (n x n) */
static void sub_matvec(int n, const double *S, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double v = 0.0;
        for (int j = 0; j < n; j++) v += S[(size_t)i * n + j] * x[j];
        y[i] -= v;
    }
}

/* The right-hand side -(F_q dq + F_p dp + F_u du) of step 1 into c->dZ;
 * Ru = F_u du, the held force's terms (sym_gforce_du), NULL: none. */
static void leading_rhs(double h, ctan *c, const double *Ru)
{
    const int n = c->n, m = c->m, s = c->s, nu = c->nu;
    const size_t mn = (size_t)m * n, nn = (size_t)n * n;
    for (int a = 0; a <= s - 2; a++) {
        double *va = c->dZ + (size_t)a * n;
        for (int i = 0; i < n; i++) {
            double v = (a == 0 ? c->dp[i] : 0.0) + (Ru ? Ru[(size_t)a * n + i] : 0.0);
            for (int d = 0; d < n; d++) v += c->Rq[((size_t)a * n + i) * n + d] * c->dq[d];
            va[i] = -v;
        }
        /* -(-S(Q_a, Lambda_a) dq) */
        for (int i = 0; i < n; i++) {
            double v = 0.0;
            for (int d = 0; d < n; d++) v += c->SQ[a * nn + (size_t)i * n + d] * c->dq[d];
            va[i] += v;
        }
    }
    for (int a = 1; a < s; a++)
        for (int k = 0; k < m; k++) {
            const double *Gk = c->GQ + a * mn + (size_t)k * n;
            double v = 0.0;
            for (int d = 0; d < n; d++) v += Gk[d] * c->dq[d];
            c->dZ[nu + (size_t)(a - 1) * m + k] = -v / h;
        }
}

/* dp~ of step 2 into c->dpt (dZ solved). */
static void tilde_dp(const sym_gwork *g, ctan *c)
{
    const int n = c->n, m = c->m, s = c->s, nu = c->nu;
    const size_t mn = (size_t)m * n, nn = (size_t)n * n;
    for (int j = 0; j < n; j++)
        c->dpt[j] = sym_galerkin_tangent_dp(g, c->P, j, c->dp[j], c->dq, c->dZ);
    for (int a = 0; a <= s - 2; a++) {
        double *dQ = c->b;
        for (int j = 0; j < n; j++)
            dQ[j] = c->dq[j] + (a ? c->dZ[(size_t)(a - 1) * n + j] : 0.0);
        sub_matvec(n, c->SQ + a * nn, dQ, c->dpt);
        const double *dLam = c->dZ + nu + (size_t)a * m, *Ga = c->GQ + a * mn;
        for (int j = 0; j < n; j++) {
            double v = 0.0;
            for (int k = 0; k < m; k++) v += Ga[(size_t)k * n + j] * dLam[k];
            c->dpt[j] -= v;
        }
    }
}

/* dp1 of step 3 into out (dq1 given; c->b, c->mu scratch); xdp, xb, xmu
 * (NULL: none) are a parameter column's further terms of dp1, of b and of
 * the right-hand side of W mu (sym_gcon_param_tangent). */
static void projected_dp(ctan *c, const double *dq1, double *dp1, const double *xdp,
                         const double *xb, const double *xmu)
{
    const int n = c->n, m = c->m, s = c->s;
    const double *S1 = c->SQ + (size_t)(s - 1) * n * n, *G1 = c->GQ + (size_t)(s - 1) * m * n;
    /* dp1 <- dp~ - S(q1, Lambda_{s-1}) dq1;  b <- dp1 - A(q1, u) dq1 */
    memcpy(dp1, c->dpt, sizeof(double) * (size_t)n);
    sub_matvec(n, S1, dq1, dp1);
    for (int j = 0; xdp && j < n; j++) dp1[j] += xdp[j];
    memcpy(c->b, dp1, sizeof(double) * (size_t)n);
    sub_matvec(n, c->A1, dq1, c->b);
    for (int j = 0; xb && j < n; j++) c->b[j] += xb[j];
    /* W mu = G1 M1^{-1} b + T dq1 */
    for (int k = 0; k < m; k++) {
        double v = xmu ? xmu[k] : 0.0;
        for (int j = 0; j < n; j++)
            v += c->Z1[(size_t)k * n + j] * c->b[j] + c->T[(size_t)k * n + j] * dq1[j];
        c->mu[k] = v;
    }
    sym_cholesky_solve(m, c->W, c->mu);
    for (int j = 0; j < n; j++) {
        double v = 0.0;
        for (int k = 0; k < m; k++) v += G1[(size_t)k * n + j] * c->mu[k];
        dp1[j] -= v;
    }
}

/* The k columns (dq, dp), or (dq, dp, du) with ublocks, of V through steps
 * 1-3 (Jc factorised); p~ gains the held force's impulse h sum_i b_i u_i,
 * so dp~ gains pu (sym_gforce_du). */
/* With pts (not NULL) the force points' states and their derivatives too
 * (sym_galerkin_point_column on the root's increments X and dX). */
static void columns(const sym_gwork *g, const double *q, double h, ctan *c, int k, int ublocks,
                    const double *V, double *out, double *pts, int ld)
{
    const int n = c->n, s = c->s;
    const sym_gcon *con = g->con;
    for (int col = 0; col < k; col++) {
        for (int d = 0; d < n; d++) {
            c->dq[d] = V[(size_t)d * k + col];
            c->dp[d] = V[(size_t)(n + d) * k + col];
            c->pu[d] = 0.0;
        }
        if (ublocks) sym_gforce_du(g, h, ublocks, V, k, col, c->Ru, c->pu);
        leading_rhs(h, c, ublocks ? c->Ru : NULL);
        con->lu_solve(c->N, c->Jc, c->piv, c->dZ);
        if (pts) sym_galerkin_point_column(g, c->dq, c->dZ, 0.0, h, pts, col + 1, ld);
        for (int d = 0; d < n; d++) c->dp[d] += c->pu[d];
        tilde_dp(g, c);
        double *dq1 = c->dq;   /* dq1 = dq + dX_{s-1}, in place (dq is spent) */
        for (int d = 0; d < n; d++) dq1[d] += c->dZ[(size_t)(s - 2) * n + d];
        for (int d = 0; d < n; d++) out[(size_t)d * k + col] = dq1[d];
        double *dp1 = c->dp;   /* dp is spent (in dp~) */
        projected_dp(c, dq1, dp1, NULL, NULL, NULL);
        for (int d = 0; d < n; d++) out[(size_t)(n + d) * k + col] = dp1[d];
    }
    if (pts) sym_galerkin_point_column(g, q, con->X, 0.0, h, pts, 0, ld);
}

int sym_gcon_tangent(sym_gwork *g, const double *q, const double *p, double h, int k,
                     int ublocks, const double *V, double *out, double *pts, int ld)
{
    ctan c;
    (void)p;   /* p enters through R_0 alone, linearly */
    if (!g->prev_valid) return SYM_EINVAL;   /* no step just taken */
    int st = ctan_new(g, &c);
    if (st) return st;
    const size_t nnu = (size_t)c.nu * (size_t)c.nu;
    memcpy(c.Jsave, g->J, sizeof(double) * nnu);
    st = node_terms(g, q, &c);
    if (!st) st = end_terms(g, &c);
    if (!st) st = saddle_matrix(g, q, h, &c);
    if (!st) columns(g, q, h, &c, k, ublocks, V, out, pts, ld);
    memcpy(g->J, c.Jsave, sizeof(double) * nnu);
    ctan_free(&c);
    return st;
}

/*
 * d(q1, p1)/dh and d(q1, p1)/dt of the constrained step just taken (the
 * contract of sym_scheme_ops.time_tangent).  Steps 1-3 above in h at fixed
 * (q, p): the leading rows R_a move with h as the unconstrained ones do
 * (their explicit derivative dR/dh of sym_galerkin_time_rhs; -G^T Lambda
 * does not see h), the rows C_a = g(Q_a) / h have the root of g(Q_a) = 0,
 * which does not move with h, so
 *
 *   Jc dZ = -(dR/dh, 0),  dq1 = dX_{s-1},
 *   dp~ = (d/dh of h sum_i b_i (f_i + F_i) at fixed Z) + P_X dX
 *         - sum_{a=1}^{s-2} [ S(Q_a, Lambda_a) dX_a ] - sum_a G(Q_a)^T dLambda_a,
 *
 * and the projection as in step 3 (it does not see h).  The same in the
 * start time t with dR/dt (a force that depends on t).  pts: the force
 * points' states' derivatives (sym_galerkin_point_column) into columns 0
 * and 1.
 */
int sym_gcon_time_tangent(sym_gwork *g, const double *q, double h, double *out, double *pts,
                          int ld)
{
    ctan c;
    if (!g->prev_valid) return SYM_EINVAL;   /* no step just taken */
    int st = ctan_new(g, &c);
    if (st) return st;
    const int n = c.n, s = c.s, nu = c.nu, r = g->tab->r;
    const size_t nnu = (size_t)nu * (size_t)nu, m2 = 2 * (size_t)n;
    double *buf = malloc(sizeof(double) * ((size_t)r * n + 2 * (size_t)nu + 2 * (size_t)n));
    if (!buf) {
        ctan_free(&c);
        return SYM_ENOMEM;
    }
    double *Ft = buf, *rh = Ft + (size_t)r * n, *rt = rh + nu, *ph = rt + nu, *pt = ph + n;
    memcpy(c.Jsave, g->J, sizeof(double) * nnu);
    st = node_terms(g, q, &c);
    if (!st) st = end_terms(g, &c);
    if (!st) st = saddle_matrix(g, q, h, &c);
    if (!st) st = sym_galerkin_time_rhs(g, h, Ft, rh, rt, ph, pt);
    for (int col = 0; col < 2 && !st; col++) {
        memset(c.dZ, 0, sizeof(double) * (size_t)c.N);
        memcpy(c.dZ, col ? rt : rh, sizeof(double) * (size_t)nu);
        g->con->lu_solve(c.N, c.Jc, c.piv, c.dZ);
        if (pts) sym_galerkin_point_column(g, NULL, c.dZ, col ? 0.0 : 1.0, h, pts, col, ld);
        memset(c.dq, 0, sizeof(double) * (size_t)n);
        memcpy(c.dp, col ? pt : ph, sizeof(double) * (size_t)n);
        tilde_dp(g, &c);
        const double *dq1 = c.dZ + (size_t)(s - 2) * n;
        for (int d = 0; d < n; d++) out[(size_t)col * m2 + d] = dq1[d];
        projected_dp(&c, dq1, c.dp, NULL, NULL, NULL);
        for (int d = 0; d < n; d++) out[(size_t)col * m2 + n + d] = c.dp[d];
    }
    memcpy(g->J, c.Jsave, sizeof(double) * nnu);
    free(buf);
    ctan_free(&c);
    return st;
}

/*
 * The parameter block C = d(q1, p1)/dtheta at fixed (q, p) of the step just
 * taken (sym_params.h), for M, V and the constraints g depending on theta:
 * the augmented system psys = (q, theta) carries g(q, theta), so that its
 * G holds G_theta = dg/dtheta and its S(x, mu) holds, in the rows q and
 * columns theta, S_theta(x, mu) = d(G(x)^T mu)/dtheta.  Steps 1-3 above,
 * differentiated in theta_j at fixed (q, p), with dQ_0 = 0:
 *
 *   1. Jc dZ = -(dR/dtheta_j - S_theta(Q_a, Lambda_a) e_j  (a = 0..s-2),
 *                G_theta(Q_a) e_j / h                       (a = 1..s-1)),
 *      dR/dtheta_j the unconstrained rows (sym_galerkin_theta_rhs); dq1 = dX_{s-1};
 *   2. dp~ = P_X dX + h sum_i b_i (H~_i - K~_i) e_j
 *            - sum_{a=0}^{s-2} [ S(Q_a, Lambda_a) dQ_a + G(Q_a)^T dLambda_a
 *                                + S_theta(Q_a, Lambda_a) e_j ];
 *   3. dp1 = dp~ - S(q1, Lambda_{s-1}) dq1 - S_theta(q1, Lambda_{s-1}) e_j
 *            - G1^T dLambda_{s-1}, and the hidden constraint G1 M1^{-1} p1
 *      = 0 gains (dG1/dtheta_j) u and -G1 M1^{-1} (dM1/dtheta_j) u:
 *      W dLambda_{s-1} = G1 M1^{-1} [ dp1' - A(q1, u) dq1 - (dM1/dtheta_j) u ]
 *                        + T(u) dq1 + (dG1/dtheta_j) u,
 *      dp1' the first line before its last term; (dM1/dtheta_j) u is row
 *      block q, column theta_j of psys's A at ((q1, theta), (u, 0)), and
 *      ((dG1/dtheta_j) u)_k = sum_c u_c d^2 g_k/dq_c dtheta_j, from psys's
 *      S(q1, e_k).
 */
typedef struct cpar {
    int np, Na;                    /* parameters, n + np                     */
    double *Rt, *F, *z;            /* nu x np, n x np, theta_rhs's scratch    */
    double *GT, *ST;               /* per node: G_theta (m x np), S_theta
                                      (n x np; slot s-1 at q1, Lambda_{s-1})  */
    double *AT, *UT;               /* (dM1/dtheta) u (n x np), (dG1/dtheta) u
                                      (m x np)                                */
    double *Ga, *Sa, *Qt, *Ut, *es;  /* psys's G (m x Na), S or A (Na x Na),
                                        a point, a velocity (Na), its scratch */
    double *xdp, *xb, *xmu;        /* a column's further terms (n, n, m)      */
    void *block;
} cpar;

static int cpar_new(const sym_gwork *g, const sym_params_run *par, cpar *P)
{
    const size_t n = (size_t)g->n, m = (size_t)g->con->m, s = (size_t)g->con->s,
                 np = (size_t)par->n_par, Na = n + np, nu = (size_t)g->nu;
    size_t es = sym_eval_scratch_size(par->psys);
    if (sym_constraint_scratch_size(par->psys) > es) es = sym_constraint_scratch_size(par->psys);
    const size_t sizes[] = {nu * np, n * np, sym_galerkin_theta_scratch(g, par), s * m * np,
                            s * n * np, n * np, m * np, m * Na, Na * Na, Na, Na, es, n, n, m};
    double **const parts[] = {&P->Rt, &P->F, &P->z, &P->GT, &P->ST, &P->AT, &P->UT, &P->Ga,
                              &P->Sa, &P->Qt, &P->Ut, &P->es, &P->xdp, &P->xb, &P->xmu};
    const size_t nparts = sizeof(sizes) / sizeof(sizes[0]);
    SYM_STATIC_CHECK(sizeof(sizes) / sizeof(sizes[0]) == sizeof(parts) / sizeof(parts[0]));
    size_t total = 0;
    for (size_t i = 0; i < nparts; i++) total += sizes[i];
    P->np = (int)np;
    P->Na = (int)Na;
    P->block = malloc(sizeof(double) * total);
    if (!P->block) return SYM_ENOMEM;
    double *at = P->block;
    for (size_t i = 0; i < nparts; i++) {
        *parts[i] = at;
        at += sizes[i];
    }
    return SYM_OK;
}

/* psys's G_theta and S_theta at every node (Lambda_{s-1} at q1), then at q1
 * (dM1/dtheta) u and (dG1/dtheta) u; c->u from end_terms. */
static int theta_terms(sym_gwork *g, const sym_params_run *par, const double *q, ctan *c,
                       cpar *P)
{
    const sym_gcon *con = g->con;
    const int n = c->n, m = c->m, s = c->s, np = P->np, Na = P->Na;
    int st = SYM_OK;
    memcpy(P->Qt + n, par->theta, sizeof(double) * (size_t)np);
    for (int a = 0; a < s && !st; a++) {
        for (int j = 0; j < n; j++) P->Qt[j] = q[j] + (a ? con->X[(size_t)(a - 1) * n + j] : 0.0);
        const double *Lam = a < s - 1 ? con->X + c->nu + (size_t)a * m : con->rhs;
        sym_constraint_out out = {NULL, P->Ga, P->Sa};
        st = sym_constraint_eval(par->psys, P->Qt, Lam, SYM_CNEED_JAC | SYM_CNEED_HESS, &out,
                                 P->es);
        for (int j = 0; j < np; j++) {
            for (int k = 0; k < m; k++)
                P->GT[((size_t)a * m + k) * np + j] = P->Ga[(size_t)k * Na + n + j];
            for (int i = 0; i < n; i++)
                P->ST[((size_t)a * n + i) * np + j] = P->Sa[(size_t)i * Na + n + j];
        }
    }
    /* Qt is (q1, theta) now: (dG1/dtheta_j) u from S(q1, e_k), row theta_j */
    for (int k = 0; k < m && !st; k++) {
        memset(c->e, 0, sizeof(double) * (size_t)m);
        c->e[k] = 1.0;
        sym_constraint_out out = {NULL, NULL, P->Sa};
        st = sym_constraint_eval(par->psys, P->Qt, c->e, SYM_CNEED_HESS, &out, P->es);
        for (int j = 0; j < np; j++) {
            double v = 0.0;
            for (int i = 0; i < n; i++) v += P->Sa[(size_t)(n + j) * Na + i] * c->u[i];
            P->UT[(size_t)k * np + j] = v;
        }
    }
    if (st) return st;
    memcpy(P->Ut, c->u, sizeof(double) * (size_t)n);
    memset(P->Ut + n, 0, sizeof(double) * (size_t)np);
    sym_eval_out eo = {0};
    eo.A = P->Sa;
    g->base.counts.evaluations++;
    if ((st = sym_eval(par->psys, P->Qt, P->Ut, SYM_NEED_A, &eo, P->es))) return st;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < np; j++) P->AT[(size_t)i * np + j] = P->Sa[(size_t)i * Na + n + j];
    return SYM_OK;
}

/* C's column j through steps 1-3 of the parameter block (Jc factorised). */
static void param_column(const sym_gwork *g, double h, ctan *c, const cpar *P, int j, double *C)
{
    const int n = c->n, m = c->m, s = c->s, nu = c->nu, np = P->np;
    for (int a = 0; a <= s - 2; a++)
        for (int i = 0; i < n; i++) {
            const size_t e = ((size_t)a * n + i) * np + j;
            c->dZ[(size_t)a * n + i] = -P->Rt[e] + P->ST[e];
        }
    for (int a = 1; a < s; a++)
        for (int k = 0; k < m; k++)
            c->dZ[nu + (size_t)(a - 1) * m + k] = -P->GT[((size_t)a * m + k) * np + j] / h;
    g->con->lu_solve(c->N, c->Jc, c->piv, c->dZ);
    memset(c->dq, 0, sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) c->dp[i] = h * P->F[(size_t)i * np + j];
    tilde_dp(g, c);
    for (int a = 0; a <= s - 2; a++)
        for (int i = 0; i < n; i++) c->dpt[i] -= P->ST[((size_t)a * n + i) * np + j];
    for (int d = 0; d < n; d++) {
        c->dq[d] = c->dZ[(size_t)(s - 2) * n + d];
        C[(size_t)d * np + j] = c->dq[d];
        P->xdp[d] = -P->ST[((size_t)(s - 1) * n + d) * np + j];
        P->xb[d] = -P->AT[(size_t)d * np + j];
    }
    for (int k = 0; k < m; k++) P->xmu[k] = P->UT[(size_t)k * np + j];
    projected_dp(c, c->dq, c->dp, P->xdp, P->xb, P->xmu);
    for (int d = 0; d < n; d++) C[(size_t)(n + d) * np + j] = c->dp[d];
}

int sym_gcon_param_tangent(sym_gwork *g, const double *q, double h,
                           const sym_params_run *par, double *C)
{
    ctan c;
    cpar P;
    if (!g->prev_valid) return SYM_EINVAL;   /* no step just taken */
    if (par->psys->m != g->con->m) return SYM_EINVAL;
    int st = ctan_new(g, &c);
    if (st) return st;
    if ((st = cpar_new(g, par, &P))) {
        ctan_free(&c);
        return st;
    }
    const size_t nnu = (size_t)c.nu * (size_t)c.nu;
    memcpy(c.Jsave, g->J, sizeof(double) * nnu);
    st = node_terms(g, q, &c);
    if (!st) st = end_terms(g, &c);
    if (!st) st = saddle_matrix(g, q, h, &c);
    if (!st) st = sym_galerkin_theta_rhs(g, par, h, P.z, P.Rt, P.F);
    if (!st) st = theta_terms(g, par, q, &c, &P);
    for (int j = 0; !st && j < P.np; j++) param_column(g, h, &c, &P, j, C);
    memcpy(g->J, c.Jsave, sizeof(double) * nnu);
    free(P.block);
    ctan_free(&c);
    return st;
}
