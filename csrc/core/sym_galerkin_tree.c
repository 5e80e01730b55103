/*
 * sym_galerkin_tree.c -- the Galerkin step's Newton linear algebra in O(n)
 * for the planar chain of point masses (the built-in pendulum_chain, in its
 * absolute angles), behind the same residual / factor / solve that Newton
 * sees for the dense path (sym_galerkin.c); the choice of the path, and the
 * dispatch to the spatial trees' (the "tree" built-in: sym_galerkin_stree.c).  Issue 50's design and its
 * measurements: benchmarks/prototypes/linear_time_newton/DESIGN.md.
 *
 * The chain (sym_sys_pendulums.c): body k at x_k = sum_{i<=k} l_i (sin q_i,
 * -cos q_i), so with e_k = (cos q_k, sin q_k), e'_k = (-sin q_k, cos q_k)
 * and mu_j = sum_{k>=j} m_k, at one point (q, g):
 *   xdot_k = xdot_{k-1} + l_k g_k e_k               (root to tip),
 *   pi_j   = pi_{j+1} + m_j xdot_j                   (tip to root),
 *   P_j = (M g)_j = l_j e_j . pi_j,
 *   f_j = dT/dq_j - dV/dq_j = l_j g_j e'_j . pi_j - grav mu_j l_j sin q_j,
 * two passes, O(n), no n x n matrix (M_ij = l_i l_j mu_max(i,j) cos(q_i -
 * q_j) is semiseparable of rank 2).
 *
 * The Galerkin step (sym_galerkin.c; s nodes, r quadrature points, m = s - 1
 * unknowns per joint x_j = (X_1j .. X_mj), Q_ij = q_j + sum_b B_ib X_bj,
 * g_ij = sum_b D_ib X_bj / h, b = 1..m):
 *   R_aj = [a = 0] p_j + sum_i b_i (D_ia P_ij + h B_ia f_ij)   (a = 0..m-1);
 * the Lobatto rows have B = I (points = nodes), the Gauss rows r = s - 1
 * interior points.
 * Its linearisation per point, with u_ij = l_j g_ij e'_ij, v_ij = l_j e_ij:
 *   d xdot_ij = d xdot_i,j-1 + u_ij dQ_ij + v_ij dg_ij,
 *   d pi_ij  = d pi_i,j+1 + m_j d xdot_ij,
 *   dP_ij = v_ij . d pi_ij + cP_ij dQ_ij,            cP = l e' . pi,
 *   df_ij = u_ij . d pi_ij + ef_ij dg_ij + cf_ij dQ_ij,
 *           ef = l e' . pi,  cf = -l g e . pi - grav mu l cos q.
 * Stacking the r points' 2-vectors, Y_j = (d xdot_ij)_i and Z_j = (d pi_ij)_i
 * (F = 2 r entries each), the Newton system J x = rhs is the chain-structured
 *   Y_j = Y_{j-1} + U_j x_j,   Z_j = Z_{j+1} + m_j Y_j,
 *   Aa_j Z_j + N_j x_j = rhs_j,
 * with U_j (F x m): rows (i, d) u_ij,d B_ib + v_ij,d D_ib / h (column b - 1),
 * Aa_j (m x F): row a, columns (i, d) b_i (D_ia v_ij,d + h B_ia u_ij,d),
 * N_j (m x m): N_ab = sum_i b_i (D_ia cP_ij B_ib + B_ia ef_ij D_ib
 *                                 + h B_ia cf_ij B_ib)
 * (b = 1..m the unknowns' nodes; with B = I, N_ab = b_b D_ba cP_bj
 * + b_a ef_aj D_ab + [a = b] h b_a cf_aj).  Elimination tip to root (the articulated-
 * body pattern; Z_j = Phi_j Y_{j-1} + phi_j once the joints beyond j are gone):
 *   Psi_j = m_j I + Phi_{j+1},        D_j = Aa_j Psi_j U_j + N_j (m x m pivot),
 *   G_j = D_j^{-1} Aa_j Psi_j,        Phi_j = Psi_j - (Psi_j U_j) G_j,
 * and in the solve
 *   t_j = D_j^{-1} (rhs_j - Aa_j phi_{j+1}),  phi_j = phi_{j+1} + (Psi_j U_j) t_j,
 *   x_j = t_j - G_j Y_{j-1},  Y_j = Y_{j-1} + U_j x_j   (root to tip).
 * This is block Gaussian elimination of J in the joint order n-1 .. 0 with
 * its fill kept in the F x F Phi, so det J = prod_j det D_j (the branch
 * check's sign).  Pivoting happens only inside each D_j (the directions'
 * accuracy against the dense LU's: DESIGN.md section 3).  Cost per joint:
 * O(F^2 m) to factor, O(F m) to solve.
 *
 * A force F = held - D qdot with D tridiagonal (the chain's joint friction
 * -Delta^T diag(c) Delta qdot) adds f_ij += F_ij and, per point, a third
 * slot to both interfaces: gamma_ij = d g_ij forward (not inherited: T
 * drops the parent's, which enters joint j's rows directly through
 * B_beta = -h b_i B_ia D_{j,j-1}) and zeta_ij = d g_ij of the joint passed
 * to its parent (whose rows read it with -h b_i B_ia D_{j-1,j}); its own
 * rate adds -D_jj to ef.  The elimination then carries S (the momentum
 * slots pass up, zeta is replaced) and V (zeta_j = gamma_j):
 *   Zhat_j = Z_{j+1} + W_j Y_j,  Z_j = S Zhat_j + V Y_j,
 *   E = A Psi T + B_beta,  Phi_j = (S Psi + V)(T - U G),
 *   phi_j = (S Psi + V) U t_j + S phi_{j+1}.
 *
 * The plausibility test's kinetic energy T = 1/2 p^T M^{-1} p by the same
 * chain (articulated-body recursion): from the tip, the subtree's momentum
 * as a function of the parent point's velocity w, pi_j = I_j w + c_j, with
 *   A_j = m_j I + I_{j+1},  d_j = e_j^T A_j e_j  (>= m_j > 0),
 *   I_j = A_j - (A_j e_j)(A_j e_j)^T / d_j,
 *   c_j = c_{j+1} + A_j e_j (p_j / l_j - e_j . c_{j+1}) / d_j,
 * then from the root (w_{-1} = 0)
 *   v_j = (p_j / l_j - e_j . (A_j w_{j-1} + c_{j+1})) / (l_j d_j),
 *   w_j = w_{j-1} + l_j v_j e_j,    T = 1/2 sum_j v_j p_j.
 */
#include "sym_forces.h"
#include "sym_gwork.h"
#include "sym_simd.h"
#include "sym_sincos.h"
#include "sym_sysdef.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define TF (3 * SYM_MAX_NODES)       /* F, the largest interface (3 slots a point) */
#define TM (SYM_MAX_NODES - 1)       /* m, the most unknowns per joint */

/* The interface padded to a multiple of 4 entries (zeros beyond F),
 * the stride of every per-joint row: four-lane loads need no remainder. */
#define GT_PAD(F) (((F) + 3) & ~3)

/* doubles of the tree arrays for s nodes, r points and n joints: point
 * data cos, sin, pi (4 r n), per joint U, Aa, PU, G (4 L m, L the padded
 * interface of 3 slots a point) and the pivot's inverse (m m), the kinetic
 * recursion's 8 n, the damping's three diagonals (3 n), the solve's Y (L),
 * scratch for the points' four-lane pass and the kinetic energy (20 n), the
 * pivots (m n ints) */
double sym_gtree_size(int s, int r, int n)
{
    const double L = (double)GT_PAD(3 * r), m = s - 1.0, dn = n;
    return 4.0 * r * dn + (4.0 * L * m + m * m) * dn + 31.0 * dn + L +
           (double)sym_int_doubles((size_t)(s - 1) * (size_t)n);
}

void sym_gtree_layout(sym_gwork *g, double *buf)
{
    sym_gtree *t = &g->tree;
    const size_t r = (size_t)g->tab->r, n = (size_t)g->n, F = (size_t)GT_PAD(3 * g->tab->r);
    const size_t m = (size_t)g->tab->s - 1;
    t->cs = buf;
    t->sn = t->cs + r * n;
    t->pi0 = t->sn + r * n;
    t->pi1 = t->pi0 + r * n;
    t->U = t->pi1 + r * n;
    t->Aa = t->U + n * F * m;
    t->PU = t->Aa + n * F * m;
    t->G = t->PU + n * F * m;
    t->LU = t->G + n * F * m;
    t->kin = t->LU + n * m * m;
    t->dlo = t->kin + 8 * n;
    t->dd = t->dlo + n;
    t->dup = t->dd + n;
    t->Y = t->dup + n;
    t->pv = t->Y + F;
    t->piv = (int *)(t->pv + 20 * n);
}

/* Whether the step can take the O(n) path: the chain built-in, no
 * constraints, and the options' solver (auto: from SYM_TREE_MIN_N joints
 * on, where it is the faster one; benchmarks/NOTES.md section 10). */
#define SYM_TREE_MIN_N 6
/* The spatial "tree" built-in (sym_galerkin_stree.c) from this many joints
 * on: the measured crossover on spatial chains and branched trees, lobatto5
 * and simpson (benchmarks/results/spatial_tree_solver.md) */
#define SYM_STREE_MIN_N 48

/* Whether the step of the options can take the spatial path (its gravity
 * then in *gw) */
static int stree_wanted(const sym_system *sys, const sym_options *o, const double **gw)
{
    if (o->solver == SYM_SOLVER_DENSE || sys->m > 0 || sym_tree_view(sys, gw)) return 0;
    return o->solver == SYM_SOLVER_TREE || sys->n >= SYM_STREE_MIN_N;
}

double sym_gtree_system_size(const sym_method *m, const sym_system *sys, const sym_options *o)
{
    const double *gw;
    return stree_wanted(sys, o, &gw) ? sym_stree_size(m->table->s, m->table->r, sys->n) : 0.0;
}

void sym_gtree_setup(sym_gwork *g)
{
    sym_gtree *t = &g->tree;
    const int want = g->base.opt.solver;
    t->ok = t->spatial = 0;
    if (g->base.xblock && stree_wanted(g->base.sys, &g->base.opt, &t->gw)) {
        t->ok = t->spatial = 1;
        sym_stree_layout(g, g->base.xblock);
        sym_tree_parents(g->base.sys, t->spar);
        return;
    }
    if (want == SYM_SOLVER_DENSE || g->base.sys->m > 0) return;
    if (sym_chain_view(g->base.sys, &t->l, &t->m, &t->mu, &t->grav)) return;
    t->ok = want == SYM_SOLVER_TREE || g->n >= SYM_TREE_MIN_N;
#if SYM_FMA_DISPATCH
    t->fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
}

/* The force the path takes: held values (a zero-order hold, any) and a
 * damping F = -D qdot whose D is tridiagonal on the chain (its own joint
 * friction D = Delta^T diag(c) Delta, or any other) and diagonal on a
 * spatial tree (the joints' own damping), no callback terms; its three
 * diagonals copied.  Checked once per attached force, O(n^2). */
void sym_gtree_force(sym_gwork *g)
{
    sym_gtree *t = &g->tree;
    const sym_fwork *fw = g->base.force;
    const int n = g->n, band = t->spatial ? 0 : 1;
    t->force_ok = t->damped = 0;
    if (!t->ok || !fw || fw->f.nterms > 0) return;
    const double *D = fw->f.damping;
    if (D) {
        for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++)
                if ((k < i - band || k > i + band) && D[(size_t)i * n + k] != 0.0) return;
        for (int j = 0; j < n; j++) {
            t->dlo[j] = j > 0 ? D[(size_t)j * n + j - 1] : 0.0;
            t->dd[j] = D[(size_t)j * n + j];
            t->dup[j] = j < n - 1 ? D[(size_t)j * n + j + 1] : 0.0;
        }
        t->damped = 1;
    }
    t->force_ok = 1;
}

/* Point i's two passes of the header: xdot_j (root to tip) into pi0, pi1,
 * then pi_j (tip to root) over them. */
SYM_INLINE void gtree_point_passes(sym_gwork *g, int i)
{
    sym_gtree *t = &g->tree;
    const int n = g->n;
    const size_t o = (size_t)i * n;
    const double *l = t->l, *mass = t->m, *gv = g->Gp + o, *c = t->cs + o, *sn = t->sn + o;
    double *p0 = t->pi0 + o, *p1 = t->pi1 + o;
    double x0 = 0.0, x1 = 0.0;
    for (int j = 0; j < n; j++) {   /* xdot_j, root to tip */
        x0 += l[j] * gv[j] * c[j];
        x1 += l[j] * gv[j] * sn[j];
        p0[j] = x0;
        p1[j] = x1;
    }
    double a0 = 0.0, a1 = 0.0;
    for (int j = n - 1; j >= 0; j--) {   /* pi_j, tip to root */
        a0 += mass[j] * p0[j];
        a1 += mass[j] * p1[j];
        p0[j] = a0;
        p1[j] = a1;
    }
}

/* Point i's grad V_j, P_j = l_j e_j . pi_j and f_j = l_j g_j e'_j . pi_j -
 * grad V_j for the joints j0 .. n-1. */
SYM_INLINE void gtree_point_outputs(sym_gwork *g, int i, int j0)
{
    sym_gtree *t = &g->tree;
    const int n = g->n;
    const size_t o = (size_t)i * n;
    const double *l = t->l, *mu = t->mu, grav = t->grav, *gv = g->Gp + o;
    const double *c = t->cs + o, *sn = t->sn + o, *p0 = t->pi0 + o, *p1 = t->pi1 + o;
    double *P = g->P + o, *f = g->f + o, *dV = g->dVp + o;
    for (int j = j0; j < n; j++) {
        dV[j] = grav * mu[j] * l[j] * sn[j];
        P[j] = l[j] * (c[j] * p0[j] + sn[j] * p1[j]);
        f[j] = l[j] * gv[j] * (c[j] * p1[j] - sn[j] * p0[j]) - dV[j];
    }
}

/* With a force (sym_gtree_force): point i's F_i = held - D g_i into the
 * force's F and f_i. */
SYM_INLINE void gtree_point_force(sym_gwork *g, int i)
{
    sym_gtree *t = &g->tree;
    const int n = g->n;
    const size_t o = (size_t)i * n;
    const double *gv = g->Gp + o;
    double *Fi = g->base.force->F + o, *f = g->f + o;
    sym_force_held(g->base.force, g->base.k, i, Fi);
    if (t->damped)
        for (int j = 0; j < n; j++) {
            double v = t->dd[j] * gv[j];
            if (j > 0) v += t->dlo[j] * gv[j - 1];
            if (j < n - 1) v += t->dup[j] * gv[j + 1];
            Fi[j] -= v;
        }
    for (int j = 0; j < n; j++) f[j] += Fi[j];
}

/* P_i, f_i and grad V_i at every point (Qp, Gp) by the two passes of the
 * header, the point data (cos, sin, pi) kept for the factorisation; with a
 * force (sym_gtree_force) F_i = held - D g_i into the force's F and f_i. */
static void gtree_points_k(sym_gwork *g)
{
    for (int i = 0; i < g->tab->r; i++) {
        gtree_point_passes(g, i);
        gtree_point_outputs(g, i, 0);
        if (g->base.force) gtree_point_force(g, i);
    }
}

#if SYM_FMA_DISPATCH
/* lane e of v to p[e * stride], e = 0..3 */
SYM_AVX2 SYM_INLINE void v4_scatter(double *p, size_t stride, sym_v4d v)
{
    p[0] = v[0];
    p[stride] = v[1];
    p[2 * stride] = v[2];
    p[3 * stride] = v[3];
}

/* (p[0], p[stride], p[2 stride], p[3 stride]) */
SYM_AVX2 SYM_INLINE sym_v4d v4_gather(const double *p, size_t stride)
{
    return (sym_v4d){p[0], p[stride], p[2 * stride], p[3 * stride]};
}

/* The same compiled for AVX2, four points at a time (lane e = point
 * i0 + e): each point's passes and outputs are the scalar ones, the same
 * operations in the same order for each entry with no fused multiply-add,
 * so the same numbers.  The forward pass keeps its vectors (cos, sin,
 * l g, xdot) in the tree's scratch pv (5 n vectors); the backward pass
 * forms pi and the outputs from them and spreads them to the points. */
SYM_AVX2 static void gtree_points_avx2(sym_gwork *g)
{
    sym_gtree *t = &g->tree;
    const int n = g->n, r = g->tab->r;
    const size_t sn_ = (size_t)n;
    const double *l = t->l, *mass = t->m, *mu = t->mu, grav = t->grav;
    double *pv = t->pv;
    int i0 = 0;
    for (; i0 + 4 <= r; i0 += 4) {
        const size_t o = (size_t)i0 * sn_;
        sym_v4d x0 = sym_v4_splat(0.0), x1 = x0;
        for (int j = 0; j < n; j++) {   /* xdot_j, root to tip */
            const sym_v4d c = v4_gather(t->cs + o + j, sn_), sn = v4_gather(t->sn + o + j, sn_);
            const sym_v4d w = sym_v4_splat(l[j]) * v4_gather(g->Gp + o + j, sn_);
            x0 += w * c;
            x1 += w * sn;
            double *v = pv + 20 * (size_t)j;
            sym_v4_store(v, c);
            sym_v4_store(v + 4, sn);
            sym_v4_store(v + 8, w);
            sym_v4_store(v + 12, x0);
            sym_v4_store(v + 16, x1);
        }
        sym_v4d a0 = sym_v4_splat(0.0), a1 = a0;
        for (int j = n - 1; j >= 0; j--) {   /* pi_j, tip to root, and the outputs */
            const double *v = pv + 20 * (size_t)j;
            const sym_v4d c = sym_v4_load(v), sn = sym_v4_load(v + 4), w = sym_v4_load(v + 8);
            const sym_v4d m = sym_v4_splat(mass[j]);
            a0 += m * sym_v4_load(v + 12);
            a1 += m * sym_v4_load(v + 16);
            v4_scatter(t->pi0 + o + j, sn_, a0);
            v4_scatter(t->pi1 + o + j, sn_, a1);
            const sym_v4d dV = sym_v4_splat(grav * mu[j] * l[j]) * sn;
            v4_scatter(g->dVp + o + j, sn_, dV);
            v4_scatter(g->P + o + j, sn_, sym_v4_splat(l[j]) * (c * a0 + sn * a1));
            v4_scatter(g->f + o + j, sn_, w * (c * a1 - sn * a0) - dV);
        }
    }
    for (int i = i0; i < r; i++) {
        gtree_point_passes(g, i);
        gtree_point_outputs(g, i, 0);
    }
    if (g->base.force)
        for (int i = 0; i < r; i++) gtree_point_force(g, i);
}
#endif

void sym_gtree_points(sym_gwork *g)
{
    sym_gtree *t = &g->tree;
    const int n = g->n, r = g->tab->r;
    if (t->spatial) {
        sym_stree_points(g);
        return;
    }
    g->base.counts.evaluations += r;
    /* the r n angles at once (the points' Q are consecutive) */
#if SYM_FMA_DISPATCH
    if (t->fma) {
        sym_sincos_n4(r * n, g->Qp, t->sn, t->cs);
        gtree_points_avx2(g);
        return;
    }
#endif
    sym_sincos_n(r * n, g->Qp, t->sn, t->cs);
    gtree_points_k(g);
}

/* R_a = [a = 0] p + sum_i b_i (D_ia P_i + h B_ia f_i) from the points' P,
 * f; returns the scale max(|p|, |P_i|, |h f_i|) as the dense kernels do. */
SYM_INLINE double gtree_residual_k(sym_gwork *g, const double *p, double h, double *rnorm)
{
    const int n = g->n, s = g->tab->s, r = g->tab->r;
    const sym_gtab *tab = g->tab;
    double scale = 0.0, rn = 0.0;   /* (a NaN never wins the comparisons) */
    for (int k = 0; k < n; k++)
        if (fabs(p[k]) > scale) scale = fabs(p[k]);
    for (size_t k = 0; k < (size_t)r * n; k++) {
        const double a = fabs(g->P[k]), b = fabs(h * g->f[k]);
        if (a > scale) scale = a;
        if (b > scale) scale = b;
    }
    for (int a = 0; a <= s - 2; a++) {
        double *Ra = g->R + (size_t)a * n;
        for (int j = 0; j < n; j++) Ra[j] = a == 0 ? p[j] : 0.0;
        for (int i = 0; i < r; i++) {
            const double cP = tab->b[i] * tab->D[i][a], cf = h * tab->b[i] * tab->B[i][a];
            const double *Pi = g->P + (size_t)i * n, *fi = g->f + (size_t)i * n;
            if (cf != 0.0)
                for (int j = 0; j < n; j++) Ra[j] += cf * fi[j];
            if (cP != 0.0)
                for (int j = 0; j < n; j++) Ra[j] += cP * Pi[j];
        }
        for (int j = 0; j < n; j++) rn = sym_nanmax(rn, fabs(Ra[j]));
    }
    *rnorm = rn;
    return scale > 0.0 ? scale : DBL_MIN;
}

#if SYM_FMA_DISPATCH
typedef int64_t sym_v4i __attribute__((vector_size(32)));

/* |x| lane by lane (the sign bit cleared, as fabs) */
SYM_AVX2 SYM_INLINE sym_v4d v4_abs(sym_v4d x)
{
    const sym_v4i mask = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
    return (sym_v4d)((sym_v4i)x & mask);
}

/* x where x > m, else m, lane by lane (a NaN x never wins, as in the
 * scalar comparison) */
SYM_AVX2 SYM_INLINE sym_v4d v4_raise(sym_v4d m, sym_v4d x)
{
    const sym_v4i take = (sym_v4i)(x > m);
    return (sym_v4d)(((sym_v4i)x & take) | ((sym_v4i)m & ~take));
}

/* sym_nanmax lane by lane: m where m is a NaN or x <= m, else x */
SYM_AVX2 SYM_INLINE sym_v4d v4_nanmax(sym_v4d m, sym_v4d x)
{
    const sym_v4i keep = (sym_v4i)(m != m) | (sym_v4i)(x <= m);
    return (sym_v4d)(((sym_v4i)m & keep) | ((sym_v4i)x & ~keep));
}

/* gtree_residual_k four joints at a time: each entry of R gets the same
 * terms in the same order from the same start (p_j or 0.0), no fused
 * multiply-add; the scale's and the norm's maxima by lanes (a maximum does
 * not depend on the order of its entries; a NaN never wins the scale's, as
 * in the scalar comparisons, and always wins the norm's, as sym_nanmax):
 * the same numbers. */
SYM_AVX2 static double gtree_residual_avx2(sym_gwork *g, const double *p, double h, double *rnorm)
{
    const int n = g->n, s = g->tab->s, r = g->tab->r;
    const sym_gtab *tab = g->tab;
    const size_t rn_all = (size_t)r * (size_t)n;
    double scale = 0.0, rn = 0.0;
    for (int k = 0; k < n; k++)
        if (fabs(p[k]) > scale) scale = fabs(p[k]);
    sym_v4d sv = sym_v4_splat(scale);
    const sym_v4d hv = sym_v4_splat(h);
    size_t k = 0;
    for (; k + 4 <= rn_all; k += 4) {
        sv = v4_raise(sv, v4_abs(sym_v4_load(g->P + k)));
        sv = v4_raise(sv, v4_abs(hv * sym_v4_load(g->f + k)));
    }
    for (int e = 0; e < 4; e++)
        if (sv[e] > scale) scale = sv[e];
    for (; k < rn_all; k++) {
        const double a = fabs(g->P[k]), b = fabs(h * g->f[k]);
        if (a > scale) scale = a;
        if (b > scale) scale = b;
    }
    /* the weights b_i D_ia and h b_i B_ia, each formed as in gtree_residual_k */
    double cPt[TM][SYM_MAX_NODES], cft[TM][SYM_MAX_NODES];
    for (int a = 0; a <= s - 2; a++)
        for (int i = 0; i < r; i++) {
            cPt[a][i] = tab->b[i] * tab->D[i][a];
            cft[a][i] = h * tab->b[i] * tab->B[i][a];
        }
    sym_v4d rv = sym_v4_splat(0.0);
    for (int a = 0; a <= s - 2; a++) {
        double *Ra = g->R + (size_t)a * n;
        int j = 0;
        for (; j + 4 <= n; j += 4) {
            sym_v4d v = a == 0 ? sym_v4_load(p + j) : sym_v4_splat(0.0);
            for (int i = 0; i < r; i++) {
                const double cP = cPt[a][i], cf = cft[a][i];
                const size_t o = (size_t)i * n + j;
                if (cf != 0.0) v += sym_v4_splat(cf) * sym_v4_load(g->f + o);
                if (cP != 0.0) v += sym_v4_splat(cP) * sym_v4_load(g->P + o);
            }
            sym_v4_store(Ra + j, v);
            rv = v4_nanmax(rv, v4_abs(v));
        }
        for (; j < n; j++) {
            double v = a == 0 ? p[j] : 0.0;
            for (int i = 0; i < r; i++) {
                const double cP = cPt[a][i], cf = cft[a][i];
                const size_t o = (size_t)i * n + j;
                if (cf != 0.0) v += cf * g->f[o];
                if (cP != 0.0) v += cP * g->P[o];
            }
            Ra[j] = v;
            rn = sym_nanmax(rn, fabs(v));
        }
    }
    for (int e = 0; e < 4; e++) rn = sym_nanmax(rn, rv[e]);
    *rnorm = rn;
    return scale > 0.0 ? scale : DBL_MIN;
}
#endif

double sym_gtree_residual(sym_gwork *g, const double *p, double h, double *rnorm)
{
#if SYM_FMA_DISPATCH
    if (g->tree.fma) return gtree_residual_avx2(g, p, h, rnorm);
#endif
    return gtree_residual_k(g, p, h, rnorm);
}

/* Dot products over L = GT_PAD(F) entries with four partial sums (lanes k
 * mod 4), combined as (s0 + s2) + (s1 + s3); y += sgn sum_k c_{k cs} x_k
 * over K rows x_k of L entries.  The two-lane forms are portable; the
 * four-lane forms use fused multiply-adds (one rounding per product and
 * sum), so the two instances agree to rounding, not bitwise. */
SYM_INLINE double dot_v2(const double *restrict a, const double *restrict b, const int L)
{
#if SYM_VEC2
    sym_v2d lo = sym_v2_load(a) * sym_v2_load(b), hi = sym_v2_load(a + 2) * sym_v2_load(b + 2);
    for (int k = 4; k < L; k += 4) {
        lo += sym_v2_load(a + k) * sym_v2_load(b + k);
        hi += sym_v2_load(a + k + 2) * sym_v2_load(b + k + 2);
    }
    return (lo[0] + hi[0]) + (lo[1] + hi[1]);
#else
    double s0 = a[0] * b[0], s1 = a[1] * b[1], s2 = a[2] * b[2], s3 = a[3] * b[3];
    for (int k = 4; k < L; k += 4) {
        s0 += a[k] * b[k];
        s1 += a[k + 1] * b[k + 1];
        s2 += a[k + 2] * b[k + 2];
        s3 += a[k + 3] * b[k + 3];
    }
    return (s0 + s2) + (s1 + s3);
#endif
}

/* out_k = dot(A + k as, B + k bs) for k < cnt */
SYM_INLINE void dots_v2(double *out, const double *A, const size_t as, const double *B,
                        const size_t bs, const int cnt, const int L)
{
    for (int k = 0; k < cnt; k++) out[k] = dot_v2(A + k * as, B + k * bs, L);
}

SYM_INLINE void axpym_v2(double *y, const double *y0, const double *restrict c, const int cs,
                         const double sgn, const double *restrict x, const int K, const int L)
{
    if (y0 != y)
        for (int e = 0; e < L; e++) y[e] = y0 ? y0[e] : 0.0;
    for (int k = 0; k < K; k++) {
        const double ck = sgn * c[(size_t)k * cs];
        const double *xk = x + (size_t)k * L;
#if SYM_VEC2
        const sym_v2d cv = sym_v2_splat(ck);
        for (int e = 0; e < L; e += 2) sym_v2_store(y + e, sym_v2_load(y + e) + cv * sym_v2_load(xk + e));
#else
        for (int e = 0; e < L; e++) y[e] += ck * xk[e];
#endif
    }
}

#define GT_NAME(x) x##_v2
#define GT_ATTR
#define GT_DOT dot_v2
#define GT_DOTS dots_v2
#define GT_AXPYM axpym_v2
#include "sym_gtree_kernel.h"
#undef GT_NAME
#undef GT_ATTR
#undef GT_DOT
#undef GT_DOTS
#undef GT_AXPYM

#if SYM_FMA_DISPATCH
SYM_FMA SYM_INLINE double dot_fma(const double *restrict a, const double *restrict b, const int L)
{
    sym_v4d acc = sym_v4_load(a) * sym_v4_load(b);
    for (int k = 4; k < L; k += 4) acc = sym_v4_fma(sym_v4_load(a + k), sym_v4_load(b + k), acc);
    return (acc[0] + acc[2]) + (acc[1] + acc[3]);
}

#if defined(__clang__)
#define GT_SHUFFLE(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
#define GT_SHUFFLE(a, b, i, j, k, l) __builtin_shuffle(a, b, (sym_v4i){i, j, k, l})
#endif

/* dots_v2 for the four-lane instance: four dot_fma's at once, each's
 * partial sums formed as there and combined in the same order, (s0 + s2)
 * + (s1 + s3), across the four by lane shuffles: the same numbers. */
SYM_FMA SYM_INLINE void dots_fma(double *out, const double *A, const size_t as, const double *B,
                                 const size_t bs, const int cnt, const int L)
{
    int k = 0;
    for (; k + 4 <= cnt; k += 4) {
        const double *a0 = A + k * as, *a1 = a0 + as, *a2 = a1 + as, *a3 = a2 + as;
        const double *b0 = B + k * bs, *b1 = b0 + bs, *b2 = b1 + bs, *b3 = b2 + bs;
        sym_v4d c0 = sym_v4_load(a0) * sym_v4_load(b0), c1 = sym_v4_load(a1) * sym_v4_load(b1);
        sym_v4d c2 = sym_v4_load(a2) * sym_v4_load(b2), c3 = sym_v4_load(a3) * sym_v4_load(b3);
        for (int e = 4; e < L; e += 4) {
            c0 = sym_v4_fma(sym_v4_load(a0 + e), sym_v4_load(b0 + e), c0);
            c1 = sym_v4_fma(sym_v4_load(a1 + e), sym_v4_load(b1 + e), c1);
            c2 = sym_v4_fma(sym_v4_load(a2 + e), sym_v4_load(b2 + e), c2);
            c3 = sym_v4_fma(sym_v4_load(a3 + e), sym_v4_load(b3 + e), c3);
        }
        /* (c_k[0] + c_k[2], c_k[1] + c_k[3]) for k = 0, 2 and 1, 3 */
        const sym_v4d s02 = GT_SHUFFLE(c0, c2, 0, 1, 4, 5) + GT_SHUFFLE(c0, c2, 2, 3, 6, 7);
        const sym_v4d s13 = GT_SHUFFLE(c1, c3, 0, 1, 4, 5) + GT_SHUFFLE(c1, c3, 2, 3, 6, 7);
        sym_v4_store(out + k, GT_SHUFFLE(s02, s13, 0, 4, 2, 6) + GT_SHUFFLE(s02, s13, 1, 5, 3, 7));
    }
    for (; k < cnt; k++) out[k] = dot_fma(A + k * as, B + k * bs, L);
}

/* the row y is held in registers over the K updates (L <= GT_PAD(TF)) */
SYM_FMA SYM_INLINE void axpym_fma(double *y, const double *y0, const double *restrict c,
                                  const int cs, const double sgn, const double *restrict x,
                                  const int K, const int L)
{
    sym_v4d acc[GT_PAD(TF) / 4];
    for (int e = 0; e < L / 4; e++) acc[e] = y0 ? sym_v4_load(y0 + 4 * e) : sym_v4_splat(0.0);
    for (int k = 0; k < K; k++) {
        const sym_v4d cv = sym_v4_splat(sgn * c[(size_t)k * cs]);
        const double *xk = x + (size_t)k * L;
        for (int e = 0; e < L / 4; e++) acc[e] = sym_v4_fma(cv, sym_v4_load(xk + 4 * e), acc[e]);
    }
    for (int e = 0; e < L / 4; e++) sym_v4_store(y + 4 * e, acc[e]);
}

#define GT_NAME(x) x##_fma
#define GT_ATTR SYM_FMA
#define GT_DOT dot_fma
#define GT_DOTS dots_fma
#define GT_AXPYM axpym_fma
#define GT_V4_SETUP
#include "sym_gtree_kernel.h"
#undef GT_NAME
#undef GT_ATTR
#undef GT_DOT
#undef GT_DOTS
#undef GT_AXPYM
#undef GT_V4_SETUP

#endif

int sym_gtree_factor(sym_gwork *g, double h)
{
    if (g->tree.spatial) return sym_stree_factor(g, h);
#if SYM_FMA_DISPATCH
    if (g->tree.fma) return factor_fma(g, h);
#endif
    return factor_v2(g, h);
}

void sym_gtree_solve(sym_gwork *g, double *b)
{
    if (g->tree.spatial) {
        sym_stree_solve(g, b);
        return;
    }
#if SYM_FMA_DISPATCH
    if (g->tree.fma) {
        solve_fma(g, b);
        return;
    }
#endif
    solve_v2(g, b);
}

/* The factors a tangent keeps aside: the chain's from U to the kinetic
 * scratch (one block), the spatial path's (sym_stree_factors) */
double *sym_gtree_factors(sym_gwork *g, size_t *count)
{
    if (g->tree.spatial) return sym_stree_factors(g, count);
    *count = (size_t)(g->tree.kin - g->tree.U);
    return g->tree.U;
}

/* T = 1/2 p^T M(q)^{-1} p by the header's articulated-body recursion (the
 * spatial trees': sym_tree_kinetic) */
double sym_gtree_kinetic(sym_gwork *g, const double *q, const double *p)
{
    sym_gtree *t = &g->tree;
    if (t->spatial) return sym_stree_kinetic(g, q, p);
    const int n = g->n;
    const double *l = t->l;
    /* per joint: A (3: xx, xy, yy), c_{j+1} (2), d, e_j (2) */
    double *K = t->kin, *sn = t->pv, *cs = t->pv + n;   /* (pv: scratch here) */
#if SYM_FMA_DISPATCH
    if (t->fma)
        sym_sincos_n4(n, q, sn, cs);
    else
#endif
        sym_sincos_n(n, q, sn, cs);
    double I0 = 0.0, I1 = 0.0, I2 = 0.0, c0 = 0.0, c1 = 0.0;
    for (int j = n - 1; j >= 0; j--) {
        const double e0 = cs[j], e1 = sn[j];
        const double A0 = t->m[j] + I0, A1 = I1, A2 = t->m[j] + I2;
        const double ae0 = A0 * e0 + A1 * e1, ae1 = A1 * e0 + A2 * e1;
        const double d = e0 * ae0 + e1 * ae1;
        double *Kj = K + 8 * (size_t)j;
        Kj[6] = e0;
        Kj[7] = e1;
        Kj[0] = A0;
        Kj[1] = A1;
        Kj[2] = A2;
        Kj[3] = c0;
        Kj[4] = c1;
        Kj[5] = d;
        I0 = A0 - ae0 * ae0 / d;
        I1 = A1 - ae0 * ae1 / d;
        I2 = A2 - ae1 * ae1 / d;
        const double z = (p[j] / l[j] - (e0 * c0 + e1 * c1)) / d;
        c0 += ae0 * z;
        c1 += ae1 * z;
    }
    double w0 = 0.0, w1 = 0.0, T = 0.0;
    for (int j = 0; j < n; j++) {
        const double *Kj = K + 8 * (size_t)j;
        const double e0 = Kj[6], e1 = Kj[7];
        const double aw0 = Kj[0] * w0 + Kj[1] * w1 + Kj[3], aw1 = Kj[1] * w0 + Kj[2] * w1 + Kj[4];
        const double v = (p[j] / l[j] - (e0 * aw0 + e1 * aw1)) / (l[j] * Kj[5]);
        w0 += l[j] * v * e0;
        w1 += l[j] * v * e1;
        T += v * p[j];
    }
    return 0.5 * T;
}
