/*
 * sym_galerkin_decouple.c -- the decoupled Newton matrix of a Galerkin step
 * (newton="decoupled"): s - 1 systems of size n (2 n for a complex pair)
 * in place of one of size (s - 1) n.
 *
 * The exact Jacobian of the step equations (sym_galerkin.c) is
 *
 *   dR_a/dQ_b = sum_i b_i [ D_ia D_ib M_i / h + h B_ia B_ib S_i
 *                           + D_ia B_ib A_i + B_ia D_ib A_i^T ],   S = H - K.
 *
 * With M_i and S_i frozen at their quadrature means Mb = sum_i b_i M_i and
 * Sb (the same mean over the points where S is evaluated; a force's dF/dq
 * joins S), and without the A terms and the force's dF/dqdot (their
 * coefficients b_i D_ia B_ib do not share the eigenvectors), it becomes
 *
 *   J0 = (1/h) Ah (x) Mb + h Bh (x) Sb,
 *   Ah_ab = sum_i b_i D_ia D_ib,  Bh_ab = sum_i b_i B_ia B_ib
 *   (rows a = 0..s-2, columns b = 1..s-1),
 *
 * and with W = Ah^-1 Bh = T L T^-1, L real block diagonal (a 1 x 1 block
 * per real eigenvalue, [[al, be], [-be, al]] per pair al +- i be),
 *
 *   J0 = (Ah T (x) I) blockdiag_k( (1/h) I (x) Mb + h L_k (x) Sb ) (T^-1 (x) I).
 *
 * The transformation of the simplified Newton iteration of implicit
 * Runge-Kutta methods (Hairer & Wanner, Solving ODEs II, Section IV.8),
 * here for the variational step equations.  A factorisation then costs
 * (number of real eigenvalues + 8 x number of pairs) n^3 / 3 flops against
 * (s - 1)^3 n^3 / 3: Simpson (eigenvalues 0, -1/24) 4x fewer, lobatto5
 * (0, -0.0166, -0.0051 +- 0.0137 i) 6.4x fewer; Gauss2 (one pair) none.
 * The iteration is a simplified Newton iteration with an approximate
 * matrix: it contracts linearly, at a rate O(h) on smooth motion; Newton's
 * safeguards (sym_newton.c) take the exact matrix where it contracts poorly.
 */
#include "sym_forces.h"
#include "sym_gwork.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>

#define DM (SYM_MAX_NODES - 1)
typedef double complex cplx;

/* C x = y for an m x m complex C by elimination with partial pivoting; C and
 * y are overwritten (y by x).  0 for a zero pivot. */
static int csolve(int m, cplx C[DM][DM], cplx *y)
{
    for (int k = 0; k < m; k++) {
        int p = k;
        for (int i = k + 1; i < m; i++)
            if (cabs(C[i][k]) > cabs(C[p][k])) p = i;
        if (!(cabs(C[p][k]) > 0.0)) return 0;
        if (p != k) {
            for (int j = 0; j < m; j++) {
                const cplx t = C[k][j];
                C[k][j] = C[p][j];
                C[p][j] = t;
            }
            const cplx t = y[k];
            y[k] = y[p];
            y[p] = t;
        }
        for (int i = k + 1; i < m; i++) {
            const cplx l = C[i][k] / C[k][k];
            for (int j = k; j < m; j++) C[i][j] -= l * C[k][j];
            y[i] -= l * y[k];
        }
    }
    for (int i = m - 1; i >= 0; i--) {
        cplx s = y[i];
        for (int j = i + 1; j < m; j++) s -= C[i][j] * y[j];
        y[i] = s / C[i][i];
    }
    return 1;
}

/* X = A^-1 B (m x m, real); 0 when A is singular. */
static int rsolve(int m, double A[DM][DM], double B[DM][DM], double X[DM][DM])
{
    for (int j = 0; j < m; j++) {
        cplx C[DM][DM], y[DM];
        for (int i = 0; i < m; i++) {
            for (int k = 0; k < m; k++) C[i][k] = A[i][k];
            y[i] = B[i][j];
        }
        if (!csolve(m, C, y)) return 0;
        for (int i = 0; i < m; i++) X[i][j] = creal(y[i]);
    }
    return 1;
}

/* det(z I - W) = sum_k c_k z^k, c_m = 1 (Faddeev-LeVerrier:
 * N_k = W N_{k-1} + c_{m-k+1} I, c_{m-k} = -tr(W N_k) / k, N_0 = 0). */
static void charpoly(int m, double W[DM][DM], double *c)
{
    double N[DM][DM] = {{0.0}}, WN[DM][DM];
    c[m] = 1.0;
    for (int k = 1; k <= m; k++) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                double s = 0.0;
                for (int l = 0; l < m; l++) s += W[i][l] * N[l][j];
                WN[i][j] = s;
            }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) N[i][j] = WN[i][j] + (i == j ? c[m - k + 1] : 0.0);
        double tr = 0.0;
        for (int i = 0; i < m; i++)
            for (int l = 0; l < m; l++) tr += W[i][l] * N[l][i];
        c[m - k] = -tr / k;
    }
}

/* The roots of sum_k c_k z^k (c_m = 1) by the Aberth-Ehrlich iteration from
 * points on a circle inside the Cauchy bound 1 + max |c_k|. */
static void roots(int m, const double *c, cplx *z)
{
    double R = 0.0;
    for (int k = 0; k < m; k++) R = fmax(R, fabs(c[k]));
    R += 1.0;
    for (int k = 0; k < m; k++) z[k] = 0.5 * R * cexp(I * (6.283185307179586 * k / m + 0.4));
    for (int it = 0; it < 500; it++) {
        double change = 0.0;
        for (int k = 0; k < m; k++) {
            cplx p = c[m], dp = 0.0;
            for (int j = m - 1; j >= 0; j--) {
                dp = dp * z[k] + p;
                p = p * z[k] + c[j];
            }
            if (p == 0.0) continue;
            cplx sum = 0.0;
            for (int j = 0; j < m; j++)
                if (j != k) sum += 1.0 / (z[k] - z[j]);
            const cplx w = p / dp, d = w / (1.0 - w * sum);
            z[k] -= d;
            change = fmax(change, cabs(d));
        }
        if (!(change > 1e-15 * R)) break;
    }
}

/* The eigenvector of W for the eigenvalue near *lam by inverse iteration
 * (shift lam + 1e-10 |W|), scaled to 1 at its largest entry; *lam refined
 * to (W v)_p / v_p there.  0 when it fails or |W v - lam v| > 1e-12 |W|. */
static int eigvec(int m, double W[DM][DM], double wn, cplx *lam, cplx *v)
{
    const cplx mu = *lam + 1e-10 * wn;
    for (int i = 0; i < m; i++) v[i] = 1.0 + 0.1 * i;
    int p = 0;
    for (int it = 0; it < 4; it++) {
        cplx C[DM][DM];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) C[i][j] = W[i][j] - (i == j ? mu : 0.0);
        if (!csolve(m, C, v)) return 0;
        p = 0;
        for (int i = 1; i < m; i++)
            if (cabs(v[i]) > cabs(v[p])) p = i;
        const cplx vp = v[p];
        if (!(cabs(vp) > 0.0) || !isfinite(cabs(vp))) return 0;
        for (int i = 0; i < m; i++) v[i] /= vp;
    }
    cplx Wv[DM];
    for (int i = 0; i < m; i++) {
        Wv[i] = 0.0;
        for (int j = 0; j < m; j++) Wv[i] += W[i][j] * v[j];
    }
    *lam = Wv[p];   /* v_p = 1 */
    for (int i = 0; i < m; i++)
        if (!(cabs(Wv[i] - *lam * v[i]) <= 1e-12 * wn)) return 0;
    return 1;
}

/* T and L from the eigenpairs of W (m x m); 0 when W has a multiple or
 * a failed eigenvalue. */

static int real_form(sym_gtab *t, int m, double W[DM][DM])
{
    double c[DM + 1], wn = 0.0;
    cplx z[DM];
    for (int i = 0; i < m; i++) {
        double row = 0.0;
        for (int j = 0; j < m; j++) row += fabs(W[i][j]);
        wn = fmax(wn, row);
    }
    if (!(wn > 0.0)) return 0;
    charpoly(m, W, c);
    roots(m, c, z);
    for (int k = 0; k < m; k++)
        for (int j = 0; j < k; j++)
            if (!(cabs(z[k] - z[j]) > 1e-6 * wn)) return 0;
    memset(t->dec_L, 0, sizeof t->dec_L);
    int col = 0;
    t->dec_nb = 0;
    for (int k = 0; k < m; k++) {
        const int real = fabs(cimag(z[k])) <= 1e-9 * wn;
        if (!real && cimag(z[k]) < 0.0) continue;   /* the pair's other half */
        cplx lam = real ? creal(z[k]) : z[k], v[DM];
        if (!eigvec(m, W, wn, &lam, v)) return 0;
        t->dec_off[t->dec_nb] = col;
        t->dec_sz[t->dec_nb++] = real ? 1 : 2;
        for (int i = 0; i < m; i++) t->dec_T[i][col] = creal(v[i]);
        if (real) {
            t->dec_L[col][col] = creal(lam);
            col++;
            continue;
        }
        /* W [vr, vi] = [vr, vi] [[al, be], [-be, al]] for W v = (al + i be) v */
        for (int i = 0; i < m; i++) t->dec_T[i][col + 1] = cimag(v[i]);
        t->dec_L[col][col] = t->dec_L[col + 1][col + 1] = creal(lam);
        t->dec_L[col][col + 1] = cimag(lam);
        t->dec_L[col + 1][col] = -cimag(lam);
        col += 2;
    }
    if (col != m) return 0;
    /* W T = T L to rounding */
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double d = 0.0, tn = 0.0;
            for (int l = 0; l < m; l++) {
                d += W[i][l] * t->dec_T[l][j] - t->dec_T[i][l] * t->dec_L[l][j];
                tn = fmax(tn, fabs(t->dec_T[l][j]));
            }
            if (!(fabs(d) <= 1e-11 * wn * tn)) return 0;
        }
    return 1;
}

void sym_galerkin_decouple_tables(sym_gtab *t)
{
    const int m = t->s - 1;
    double Ah[DM][DM], Bh[DM][DM], W[DM][DM], AT[DM][DM], I_[DM][DM];
    t->dec_ok = 0;
    if (m < 2) return;   /* one block of size n already */
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++) {
            double sa = 0.0, sb = 0.0;
            for (int i = 0; i < t->r; i++) {
                sa += t->b[i] * t->D[i][a] * t->D[i][b + 1];
                sb += t->b[i] * t->B[i][a] * t->B[i][b + 1];
            }
            Ah[a][b] = sa;
            Bh[a][b] = sb;
            I_[a][b] = a == b ? 1.0 : 0.0;
        }
    if (!rsolve(m, Ah, Bh, W) || !real_form(t, m, W)) return;
    /* Tl = (Ah T)^-1 */
    for (int a = 0; a < m; a++)
        for (int k = 0; k < m; k++) {
            double s = 0.0;
            for (int b = 0; b < m; b++) s += Ah[a][b] * t->dec_T[b][k];
            AT[a][k] = s;
        }
    if (!rsolve(m, AT, I_, t->dec_Tl)) return;
    for (int a = 0; a < m; a++)
        for (int k = 0; k < m; k++)
            if (!isfinite(t->dec_Tl[a][k])) return;
    t->dec_ok = 1;
}

/* Mb and Sb (module comment) into g->dec_buf: the quadrature means over the
 * points, S over those where H and K are evaluated (not a Lobatto left
 * node, whose S enters no equation), with the force's dF/dq where it has
 * one (it enters the Newton matrix as S does: h b_i B_ia B_ib Fq_i). */
static void frozen_means(sym_gwork *g)
{
    const sym_gtab *t = g->tab;
    const int n = g->n;
    const size_t nn = (size_t)n * (size_t)n;
    double *Mb = g->dec_buf, *Sb = Mb + nn, wm = 0.0, ws = 0.0;
    const sym_fwork *fw = g->base.force;
    const double *Fq = fw && (fw->jac & SYM_FORCE_DQ) ? fw->Fq : NULL;
    memset(Mb, 0, sizeof(double) * 2 * nn);
    for (int i = 0; i < t->r; i++) {
        const double bi = t->b[i], *Mi = g->Mp + i * nn;
        wm += bi;
        for (size_t e = 0; e < nn; e++) Mb[e] += bi * Mi[e];
        if (!(g->need_full[i] & SYM_NEED_D2V)) continue;
        const double *Hi = g->Hp + i * nn, *Ki = g->Kp + i * nn;
        ws += bi;
        for (size_t e = 0; e < nn; e++) Sb[e] += bi * (Hi[e] - Ki[e]);
        if (!Fq) continue;
        for (size_t e = 0; e < nn; e++) Sb[e] += bi * Fq[i * nn + e];
    }
    for (size_t e = 0; e < nn; e++) {
        Mb[e] /= wm;
        Sb[e] = ws > 0.0 ? Sb[e] / ws : 0.0;
    }
}

/* Each block (1/h) I (x) Mb + h L_k (x) Sb formed and factorised in g->J,
 * one after the other (sum of their sizes squared <= nu^2), pivots in
 * g->piv.  At the current points (the residual's evaluation). */
int sym_galerkin_decouple_factor(sym_gwork *g, double h)
{
    const sym_gtab *t = g->tab;
    const int n = g->n;
    const size_t nn = (size_t)n * (size_t)n;
    frozen_means(g);
    const double *Mb = g->dec_buf, *Sb = Mb + nn, ih = 1.0 / h;
    double *J = g->J;
    int *piv = g->piv;
    for (int k = 0; k < t->dec_nb; k++) {
        const int sz = t->dec_sz[k], o = t->dec_off[k], m = sz * n;
        for (int x = 0; x < sz; x++)
            for (int y = 0; y < sz; y++) {
                const double cm = x == y ? ih : 0.0, cs = h * t->dec_L[o + x][o + y];
                for (int c = 0; c < n; c++) {
                    double *row = J + (size_t)(x * n + c) * m + (size_t)y * n;
                    for (int d = 0; d < n; d++) row[d] = cm * Mb[c * n + d] + cs * Sb[c * n + d];
                }
            }
        sym_lu_factor_fn factor;
        sym_lu_solve_fn solve;
        sym_lu_pick(m, &factor, &solve);
        const int st = factor(m, J, piv, g->lu_work);
        if (st) return st;
        J += (size_t)m * m;
        piv += m;
    }
    return SYM_OK;
}

/* b <- J0^-1 b with the factors of sym_galerkin_decouple_factor:
 * y = (Tl (x) I) b, the blocks' solves, b = (T (x) I) y. */
void sym_galerkin_decouple_solve(sym_gwork *g, double *b)
{
    const sym_gtab *t = g->tab;
    const int n = g->n, ms = t->s - 1;
    double *y = g->dec_buf + 2 * (size_t)n * (size_t)n;
    for (int k = 0; k < ms; k++) {
        double *yk = y + (size_t)k * n;
        sym_vscale(n, t->dec_Tl[k][0], b, yk);
        for (int a = 1; a < ms; a++) sym_vaxpy(n, t->dec_Tl[k][a], b + (size_t)a * n, yk);
    }
    const double *J = g->J;
    const int *piv = g->piv;
    for (int k = 0; k < t->dec_nb; k++) {
        const int m = t->dec_sz[k] * n;
        sym_lu_factor_fn factor;
        sym_lu_solve_fn solve;
        sym_lu_pick(m, &factor, &solve);
        solve(m, J, piv, y + (size_t)t->dec_off[k] * n);
        J += (size_t)m * m;
        piv += m;
    }
    for (int a = 0; a < ms; a++) {
        double *xa = b + (size_t)a * n;
        sym_vscale(n, t->dec_T[a][0], y, xa);
        for (int k = 1; k < ms; k++) sym_vaxpy(n, t->dec_T[a][k], y + (size_t)k * n, xa);
    }
}
