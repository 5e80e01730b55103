/*
 * The double pendulum as a compiled callback for symplectic.System.from_cfunc
 * (the flat signature of csrc/core/symplectic.h).  Compiled by benchmarks/models.py
 * at benchmark time: cc -std=c99 -O2 -shared -fPIC cfunc_dp.c -lm.
 *
 * M = [[a, b cos(q1-q2)], [b cos(q1-q2), d]],  V = -v1 cos q1 - v2 cos q2.
 * need bits: M = 1, A = 2, H = 4, V = 8, grad V = 16, hess V = 32.
 */
#include <math.h>

typedef struct { double a, b, d, v1, v2; } dp_par;

int dp_eval(const double *q, const double *g, unsigned need, double *M, double *A, double *H,
            double *V, double *dV, double *d2V, void *user)
{
    const dp_par *P = (const dp_par *)user;
    const double dq = q[0] - q[1];
    if (need & (1u | 4u)) {
        const double bc = P->b * cos(dq);
        if (need & 1u) {
            M[0] = P->a;
            M[1] = M[2] = bc;
            M[3] = P->d;
        }
        if (need & 4u) {            /* Hessian of 1/2 g^T M(q) g */
            const double t = bc * g[0] * g[1];
            H[0] = H[3] = -t;
            H[1] = H[2] = t;
        }
    }
    if (need & 2u) {                /* A[i][c] = sum_j dM_ij/dq_c g_j */
        const double bs = P->b * sin(dq);
        A[0] = -bs * g[1];
        A[1] = bs * g[1];
        A[2] = -bs * g[0];
        A[3] = bs * g[0];
    }
    if (need & (8u | 32u)) {
        const double c1 = cos(q[0]), c2 = cos(q[1]);
        if (need & 8u) V[0] = -P->v1 * c1 - P->v2 * c2;
        if (need & 32u) {
            d2V[0] = P->v1 * c1;
            d2V[1] = d2V[2] = 0.0;
            d2V[3] = P->v2 * c2;
        }
    }
    if (need & 16u) {
        dV[0] = P->v1 * sin(q[0]);
        dV[1] = P->v2 * sin(q[1]);
    }
    return 0;
}
