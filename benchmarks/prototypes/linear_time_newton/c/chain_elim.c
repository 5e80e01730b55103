#define _POSIX_C_SOURCE 199309L
/* chain_elim.c -- timing prototype (scratch) of the O(n) Lobatto-5 Newton pieces for the planar
 * point-mass chain in absolute angles (chain.py / elim.py of this folder, d_f = d_b = 2, r = 5, m = 4):
 *   eval():   the residual R (4 x n) at X, the point data (cos, sin, pi) kept for the factorisation
 *   factor(): the leaf-to-root elimination (Psi, PU = Psi U, Dj = Aa PU + N, G = Dj^-1 Aa Psi,
 *             Phi = Psi - PU G), per joint 10x10 / 10x4 / 4x10 blocks
 *   solve():  rhs -> x (leaf to root, then root to leaf).
 * Called through ctypes by cbench.py (agreement with the dense LU direction) and timed there. */
#include <math.h>
#include <string.h>
#include <stdlib.h>

#define R 5
#define MM 4
#define F 10

typedef struct {
    int n; double h, grav;
    const double *l, *m, *mu;
    double Dn[R][R], w[R];
    /* point data, [i][j] */
    double *c, *s, *g, *pi0, *pi1;
    /* per joint factors */
    double *Aa;   /* n x MM x F */
    double *PU;   /* n x F x MM */
    double *LU;   /* n x MM x MM */
    int *piv;     /* n x MM */
    double *G;    /* n x MM x F */
    double Phi[F][F];
} ctx;

static double *al(size_t k) { return calloc(k, sizeof(double)); }

void *chain_new(int n, double h, double grav, const double *l, const double *m, const double *mu,
                const double *D, const double *w)
{
    ctx *C = calloc(1, sizeof(ctx));
    C->n = n; C->h = h; C->grav = grav; C->l = l; C->m = m; C->mu = mu;
    memcpy(C->Dn, D, sizeof(C->Dn)); memcpy(C->w, w, sizeof(C->w));
    C->c = al(R * n); C->s = al(R * n); C->g = al(R * n); C->pi0 = al(R * n); C->pi1 = al(R * n);
    C->Aa = al((size_t)n * MM * F); C->PU = al((size_t)n * F * MM); C->LU = al((size_t)n * MM * MM);
    C->G = al((size_t)n * MM * F); C->piv = calloc((size_t)n * MM, sizeof(int));
    return C;
}

/* residual R[a*n + j], a = 0..3, X[a*n + j] = X_{a+1} */
void chain_eval(void *vc, const double *q, const double *p, const double *X, double *Rr)
{
    ctx *C = vc;
    const int n = C->n;
    const double h = C->h, *l = C->l, *m = C->m;
    double P[R], f[R];
    for (int i = 0; i < R; i++) {
        double *c = C->c + i * n, *s = C->s + i * n, *g = C->g + i * n;
        double x0 = 0, x1 = 0;
        for (int j = 0; j < n; j++) {
            double Q = q[j] + (i ? X[(i - 1) * n + j] : 0.0), gg = 0.0;
            for (int b = 1; b < R; b++) gg += C->Dn[i][b] * X[(b - 1) * n + j];
            gg /= h;
            g[j] = gg;
            c[j] = cos(Q); s[j] = sin(Q);
            x0 += l[j] * gg * c[j]; x1 += l[j] * gg * s[j];
            C->pi0[i * n + j] = x0; C->pi1[i * n + j] = x1;   /* xdot for now */
        }
        double p0 = 0, p1 = 0;
        for (int j = n - 1; j >= 0; j--) {
            p0 += m[j] * C->pi0[i * n + j]; p1 += m[j] * C->pi1[i * n + j];
            C->pi0[i * n + j] = p0; C->pi1[i * n + j] = p1;
        }
    }
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < R; i++) {
            const int k = i * n + j;
            const double c = C->c[k], s = C->s[k], a = C->pi0[k], b = C->pi1[k];
            P[i] = l[j] * (c * a + s * b);
            f[i] = l[j] * C->g[k] * (-s * a + c * b) - C->grav * C->mu[j] * l[j] * s;
        }
        for (int a = 0; a < MM; a++) {
            double r = (a == 0 ? p[j] : 0.0) + h * C->w[a] * f[a];
            for (int i = 0; i < R; i++) r += C->w[i] * C->Dn[i][a] * P[i];
            Rr[a * n + j] = r;
        }
    }
}

static int lu4(double A[MM][MM], int *piv)
{
    for (int k = 0; k < MM; k++) {
        int p = k;
        for (int i = k + 1; i < MM; i++) if (fabs(A[i][k]) > fabs(A[p][k])) p = i;
        piv[k] = p;
        if (p != k) for (int j = 0; j < MM; j++) { double t = A[k][j]; A[k][j] = A[p][j]; A[p][j] = t; }
        if (A[k][k] == 0.0) return 1;
        for (int i = k + 1; i < MM; i++) {
            A[i][k] /= A[k][k];
            for (int j = k + 1; j < MM; j++) A[i][j] -= A[i][k] * A[k][j];
        }
    }
    return 0;
}

static void lus4(const double A[MM][MM], const int *piv, double *b)
{
    for (int k = 0; k < MM; k++) { if (piv[k] != k) { double t = b[k]; b[k] = b[piv[k]]; b[piv[k]] = t; } }
    for (int i = 0; i < MM; i++) for (int k = 0; k < i; k++) b[i] -= A[i][k] * b[k];
    for (int i = MM - 1; i >= 0; i--) { for (int k = i + 1; k < MM; k++) b[i] -= A[i][k] * b[k]; b[i] /= A[i][i]; }
}

/* the factorisation at the point data of the last chain_eval */
int chain_factor(void *vc)
{
    ctx *C = vc;
    const int n = C->n;
    const double h = C->h, *l = C->l;
    double Psi[F][F];
    memset(C->Phi, 0, sizeof(C->Phi));
    for (int j = n - 1; j >= 0; j--) {
        double U[F][MM], (*Aa)[F] = (double (*)[F])(C->Aa + (size_t)j * MM * F);
        double (*PU)[MM] = (double (*)[MM])(C->PU + (size_t)j * F * MM);
        double (*G)[F] = (double (*)[F])(C->G + (size_t)j * MM * F);
        double Dj[MM][MM], cP[R], cf[R], ef[R];
        for (int i = 0; i < R; i++) {
            const int k = i * n + j;
            const double c = C->c[k], s = C->s[k], g = C->g[k], a = C->pi0[k], b = C->pi1[k];
            const double ep = -s * a + c * b, ee = c * a + s * b;
            const double u0 = -l[j] * g * s, u1 = l[j] * g * c, v0 = l[j] * c, v1 = l[j] * s;
            for (int bb = 0; bb < MM; bb++) {
                const double Dv = C->Dn[i][bb + 1] / h, Bv = (i == bb + 1);
                U[2 * i][bb] = u0 * Bv + v0 * Dv;
                U[2 * i + 1][bb] = u1 * Bv + v1 * Dv;
            }
            for (int aa = 0; aa < MM; aa++) {
                const double ca = C->w[i] * C->Dn[i][aa], cb = C->w[i] * h * (i == aa);
                Aa[aa][2 * i] = ca * v0 + cb * u0;       /* aP = l e, af = l g e' */
                Aa[aa][2 * i + 1] = ca * v1 + cb * u1;
            }
            cP[i] = l[j] * ep;
            cf[i] = -l[j] * g * ee - C->grav * C->mu[j] * l[j] * c;
            ef[i] = l[j] * ep;
        }
        /* N[a][b] = w_{b+1} D_{b+1,a} cP_{b+1} + delta_{a,b+1} h w_a cf_a + w_a ef_a D_{a,b+1} */
        for (int aa = 0; aa < MM; aa++)
            for (int bb = 0; bb < MM; bb++)
                Dj[aa][bb] = C->w[bb + 1] * C->Dn[bb + 1][aa] * cP[bb + 1] +
                             (aa == bb + 1 ? h * C->w[aa] * cf[aa] : 0.0) + C->w[aa] * ef[aa] * C->Dn[aa][bb + 1];
        for (int a = 0; a < F; a++)
            for (int b = 0; b < F; b++) Psi[a][b] = C->Phi[a][b] + (a == b ? C->m[j] : 0.0);
        for (int a = 0; a < F; a++)
            for (int bb = 0; bb < MM; bb++) {
                double t = 0; for (int k = 0; k < F; k++) t += Psi[a][k] * U[k][bb];
                PU[a][bb] = t;
            }
        double E[MM][F];
        for (int aa = 0; aa < MM; aa++) {
            for (int bb = 0; bb < MM; bb++) {
                double t = 0; for (int k = 0; k < F; k++) t += Aa[aa][k] * PU[k][bb];
                Dj[aa][bb] += t;
            }
            for (int b = 0; b < F; b++) {
                double t = 0; for (int k = 0; k < F; k++) t += Aa[aa][k] * Psi[k][b];
                E[aa][b] = t;
            }
        }
        double (*LU)[MM] = (double (*)[MM])(C->LU + (size_t)j * MM * MM);
        memcpy(LU, Dj, sizeof(Dj));
        if (lu4(LU, C->piv + j * MM)) return 1;
        for (int b = 0; b < F; b++) {
            double col[MM];
            for (int aa = 0; aa < MM; aa++) col[aa] = E[aa][b];
            lus4((const double (*)[MM])LU, C->piv + j * MM, col);
            for (int aa = 0; aa < MM; aa++) G[aa][b] = col[aa];
        }
        for (int a = 0; a < F; a++)
            for (int b = 0; b < F; b++) {
                double t = Psi[a][b];
                for (int k = 0; k < MM; k++) t -= PU[a][k] * G[k][b];
                C->Phi[a][b] = t;
            }
        /* U is rebuilt in solve from the point data (kept small); store nothing else */
    }
    return 0;
}

/* x = J^-1 rhs, rhs/x [a*n + j] */
void chain_solve(void *vc, const double *rhs, double *x)
{
    ctx *C = vc;
    const int n = C->n;
    const double h = C->h, *l = C->l;
    double phi[F] = {0}, *gs = x;
    for (int j = n - 1; j >= 0; j--) {
        const double (*Aa)[F] = (const double (*)[F])(C->Aa + (size_t)j * MM * F);
        const double (*PU)[MM] = (const double (*)[MM])(C->PU + (size_t)j * F * MM);
        double t[MM];
        for (int aa = 0; aa < MM; aa++) {
            double v = rhs[aa * n + j];
            for (int k = 0; k < F; k++) v -= Aa[aa][k] * phi[k];
            t[aa] = v;
        }
        lus4((const double (*)[MM])(C->LU + (size_t)j * MM * MM), C->piv + j * MM, t);
        for (int a = 0; a < F; a++) { double v = 0; for (int k = 0; k < MM; k++) v += PU[a][k] * t[k]; phi[a] += v; }
        for (int aa = 0; aa < MM; aa++) gs[aa * n + j] = t[aa];
    }
    double Y[F] = {0};
    for (int j = 0; j < n; j++) {
        const double (*G)[F] = (const double (*)[F])(C->G + (size_t)j * MM * F);
        double xj[MM];
        for (int aa = 0; aa < MM; aa++) {
            double v = gs[aa * n + j];
            for (int k = 0; k < F; k++) v -= G[aa][k] * Y[k];
            xj[aa] = v; x[aa * n + j] = v;
        }
        for (int i = 0; i < R; i++) {
            const int k = i * n + j;
            const double c = C->c[k], s = C->s[k], g = C->g[k];
            const double u0 = -l[j] * g * s, u1 = l[j] * g * c, v0 = l[j] * c, v1 = l[j] * s;
            double dq = (i ? xj[i - 1] : 0.0), dg = 0;
            for (int bb = 0; bb < MM; bb++) dg += C->Dn[i][bb + 1] * xj[bb];
            dg /= h;
            Y[2 * i] += u0 * dq + v0 * dg;
            Y[2 * i + 1] += u1 * dq + v1 * dg;
        }
    }
}

/* timing loops: reps of (eval), (factor), (solve) -> seconds each */
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
void chain_time(void *vc, const double *q, const double *p, const double *X, int reps, double *out)
{
    ctx *C = vc;
    const int n = C->n;
    double *Rr = al((size_t)MM * n), *x = al((size_t)MM * n);
    double best[3] = {1e9, 1e9, 1e9};
    for (int rnd = 0; rnd < 5; rnd++) {
        double t0 = now();
        for (int k = 0; k < reps; k++) chain_eval(C, q, p, X, Rr);
        double t1 = now();
        for (int k = 0; k < reps; k++) chain_factor(C);
        double t2 = now();
        for (int k = 0; k < reps; k++) chain_solve(C, Rr, x);
        double t3 = now();
        double d[3] = {(t1 - t0) / reps, (t2 - t1) / reps, (t3 - t2) / reps};
        for (int i = 0; i < 3; i++) if (d[i] < best[i]) best[i] = d[i];
    }
    memcpy(out, best, sizeof(best));
    free(Rr); free(x);
}
