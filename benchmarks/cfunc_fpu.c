/*
 * The Fermi-Pasta-Ulam problem (Hairer, Lubich & Wanner, Geometric Numerical
 * Integration, Section I.5) as a compiled callback for
 * symplectic.System.from_cfunc: n = 2m unit masses on a line between fixed
 * walls, joined alternately by soft quartic springs and stiff linear ones,
 *
 *   V = sum_{i even} d_i^4 + sum_{i odd} omega^2 d_i^2 / 4,
 *   d_i = x_{i+1} - x_i (i = 0..n, x_0 = x_{n+1} = 0),   M = I.
 *
 * Compiled by benchmarks/decoupled.py: cc -std=c99 -O2 -shared -fPIC.
 * need bits: M = 1, A = 2, H = 4, V = 8, grad V = 16, hess V = 32.
 */
#include <string.h>

typedef struct { int n; double omega; } fpu_par;

/* the spring between x_i and x_{i+1}: energy, force f = dV/dd, stiffness */
static void spring(int i, double d, double om2, double *e, double *f, double *k)
{
    if (i % 2) {
        *e = 0.25 * om2 * d * d;
        *f = 0.5 * om2 * d;
        *k = 0.5 * om2;
    } else {
        *e = d * d * d * d;
        *f = 4.0 * d * d * d;
        *k = 12.0 * d * d;
    }
}

int fpu_eval(const double *q, const double *g, unsigned need, double *M, double *A, double *H,
             double *V, double *dV, double *d2V, void *user)
{
    (void)g;
    const fpu_par *P = (const fpu_par *)user;
    const int n = P->n;
    const double om2 = P->omega * P->omega;
    const size_t nn = (size_t)n * (size_t)n;
    if (need & 1u) {
        memset(M, 0, sizeof(double) * nn);
        for (int i = 0; i < n; i++) M[(size_t)i * n + i] = 1.0;
    }
    if (need & 2u) memset(A, 0, sizeof(double) * nn);
    if (need & 4u) memset(H, 0, sizeof(double) * nn);
    if (need & 16u) memset(dV, 0, sizeof(double) * (size_t)n);
    if (need & 32u) memset(d2V, 0, sizeof(double) * nn);
    double v = 0.0;
    for (int i = 0; i <= n; i++) {
        const double xl = i > 0 ? q[i - 1] : 0.0, xr = i < n ? q[i] : 0.0;
        double e, f, k;
        spring(i, xr - xl, om2, &e, &f, &k);
        v += e;
        if (need & 16u) {
            if (i > 0) dV[i - 1] -= f;
            if (i < n) dV[i] += f;
        }
        if (need & 32u) {
            if (i > 0) d2V[(size_t)(i - 1) * n + i - 1] += k;
            if (i < n) d2V[(size_t)i * n + i] += k;
            if (i > 0 && i < n) {
                d2V[(size_t)(i - 1) * n + i] -= k;
                d2V[(size_t)i * n + i - 1] -= k;
            }
        }
    }
    if (need & 8u) V[0] = v;
    return 0;
}
