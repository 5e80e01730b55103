/*
 * GSL's adaptive explicit Runge-Kutta Prince-Dormand 8(9) ("rk8pd") on the
 * planar n-link chain of gsl_rk8pd_chain.c (point masses m_k on massless rods
 * l_k, absolute angles q_k from the downward vertical, pivot fixed), with the
 * accelerations from an O(n) forward-dynamics recursion instead of M(q) and LU.
 *
 * The recursion is the articulated-body algorithm (Featherstone, Rigid Body
 * Dynamics Algorithms, Springer 2008, ch. 7: articulated inertias from the tip
 * inwards, then accelerations from the base outwards) specialised to this
 * chain, derived directly in the absolute angles (no relative joint angles).
 *
 * Notation (plane vectors, x to the right, y up): e_k = (sin q_k, -cos q_k) the
 * unit vector along rod k (from joint k to mass k), t_k = de_k/dq_k =
 * (cos q_k, sin q_k), gravity m_k (0, -g).  Mass k sits at r_k = r_{k-1} +
 * l_k e_k (r_0 = 0, the pivot), so its acceleration is
 *
 *     a_k = a_{k-1} + l_k (qdd_k t_k - qd_k^2 e_k),   a_0 = 0.                 (1)
 *
 * Body k is rod k with mass k; F_k is the force body k-1 (the support for k = 1)
 * exerts on body k at joint k.  Body k has no rotational inertia about its mass
 * point and every other force on it acts at that point, so the moment balance
 * about r_k is l_k e_k x F_k = 0: F_k is along the rod, t_k . F_k = 0      (2)
 * (the massless rod carries only tension; the hinge passes no torque).
 *
 * Articulated inertia: the subchain k..n answers an acceleration a of joint k
 * (the point r_{k-1}) with the force F_k = A_k a + b_k it needs there, A_k a
 * symmetric 2x2 matrix, b_k a vector depending on (q, qd) only.  From the tip:
 * A_{n+1} = 0, b_{n+1} = 0.  Newton for mass k, m_k a_k = F_k - F_{k+1} +
 * m_k (0, -g), with F_{k+1} = A_{k+1} a_k + b_{k+1}, gives
 *
 *     F_k = J_k a_k + c_k,   J_k = m_k I + A_{k+1},   c_k = b_{k+1} + (0, m_k g).
 *
 * Inserting (1) with a_{k-1} = a: F_k = J_k a + l_k qdd_k u_k + w_k, where
 * u_k = J_k t_k and w_k = c_k - l_k qd_k^2 J_k e_k.  Condition (2) fixes qdd_k:
 *
 *     qdd_k = -(u_k . a + t_k . w_k) / (l_k D_k),   D_k = t_k . J_k t_k > 0,   (3)
 *
 * and substituting back,
 *
 *     A_k = J_k - u_k u_k^T / D_k,   b_k = w_k - u_k (t_k . w_k) / D_k.
 *
 * (A_k t_k = 0: the subchain resists the joint's motion only along rod k.)
 * The outward pass then runs (3) and (1) from k = 1 with a_0 = 0.  Work: two
 * sines/cosines and a fixed number of multiply-adds per link, O(n) in all.
 *
 * The result equals the solution of the Euler-Lagrange equations M(q) qdd = r
 * of gsl_rk8pd_chain.c (same Lagrangian); benchmarks/chain_baselines.py --check
 * compares the two right-hand sides at random states.
 *
 * Usage, input and output as gsl_rk8pd_chain.c:
 *     gsl_rk8pd_chain_aba T tol repeats [notrack] [counts]  < params
 *     gsl_rk8pd_chain_aba rhs  < params      (prints f(y(0)): qd, then qdd)
 * params (whitespace separated): n, g, m_1..m_n, l_1..l_n, q_1(0)..q_n(0), qd_1(0)..qd_n(0).
 * Prints one CSV line: T,tol,steps,seconds_per_run,e_H,y_1..y_2n (state at T);
 * with `counts`, two more fields at the end: the accepted and the rejected
 * (step size decreased and retried) steps of the last run, from GSL's evolve
 * object (count, failed_steps).
 */
#define _POSIX_C_SOURCE 199309L
#include "gsl_chain.h"

typedef struct {
    int n;
    double g;
    double *m, *l, *y0;           /* y0 = (q(0), qd(0)) */
    double *ws;                   /* per link: u_x, u_y, D, t.w (the inward pass's results) */
} chain_t;

static int rhs(double t, const double y[], double f[], void *vp)
{
    (void)t;
    chain_t *C = vp;
    const int n = C->n;
    const double *q = y, *qd = y + n;
    double A11 = 0.0, A12 = 0.0, A22 = 0.0, bx = 0.0, by = 0.0;   /* A_{n+1}, b_{n+1} */
    for (int k = n - 1; k >= 0; k--) {                            /* inward: A_k, b_k */
        const double s = sin(q[k]), c = cos(q[k]), m = C->m[k], l = C->l[k];
        const double J11 = m + A11, J12 = A12, J22 = m + A22;
        const double ex = s, ey = -c, tx = c, ty = s;
        const double v2 = l * qd[k] * qd[k];
        const double wx = bx - v2 * (J11 * ex + J12 * ey);
        const double wy = by + m * C->g - v2 * (J12 * ex + J22 * ey);
        const double ux = J11 * tx + J12 * ty, uy = J12 * tx + J22 * ty;
        const double D = tx * ux + ty * uy, tw = tx * wx + ty * wy;
        if (!(D > 0.0)) return GSL_EBADFUNC;
        double *W = C->ws + 4 * k;
        W[0] = ux; W[1] = uy; W[2] = D; W[3] = tw;
        A11 = J11 - ux * ux / D; A12 = J12 - ux * uy / D; A22 = J22 - uy * uy / D;
        bx = wx - ux * tw / D; by = wy - uy * tw / D;
    }
    double ax = 0.0, ay = 0.0;                                    /* a_0: the pivot is fixed */
    for (int k = 0; k < n; k++) {                                 /* outward: (3), then (1) */
        const double *W = C->ws + 4 * k, l = C->l[k];
        const double s = sin(q[k]), c = cos(q[k]);
        const double qdd = -(W[0] * ax + W[1] * ay + W[3]) / (l * W[2]);
        const double v2 = qd[k] * qd[k];
        ax += l * (qdd * c - v2 * s);
        ay += l * (qdd * s + v2 * c);
        f[k] = qd[k];
        f[n + k] = qdd;
    }
    return GSL_SUCCESS;
}

/* H = T + V from the Cartesian velocities of the masses, v_k = sum_{i<=k} l_i qd_i t_i
 * (T = 1/2 sum_k m_k |v_k|^2 = 1/2 qd^T M qd), V = g sum_k m_k y_k, y_k = -sum_{i<=k} l_i cos q_i. */
static double energy(void *vp, const double y[])
{
    chain_t *C = vp;
    const int n = C->n;
    double vx = 0, vy = 0, h = 0, T = 0, V = 0;
    for (int k = 0; k < n; k++) {
        const double c = cos(y[k]), s = sin(y[k]), w = C->l[k] * y[n + k];
        vx += w * c; vy += w * s; h -= C->l[k] * c;
        T += 0.5 * C->m[k] * (vx * vx + vy * vy);
        V += C->g * C->m[k] * h;
    }
    return T + V;
}

static int read_params(chain_t *C)
{
    if (scanf("%d %lf", &C->n, &C->g) != 2 || C->n < 1 || C->n > 1 << 20) return -1;
    const int n = C->n;
    double *block = calloc((size_t)n * 8, sizeof(double));
    C->m = block;                 /* owner of the block: freed by the caller in every case */
    if (!block) return -1;
    C->l = block + n; C->y0 = block + 2 * n; C->ws = block + 4 * n;
    return chain_read_values(n, C->m, C->l, C->y0);
}

/* chain_main's reader: read_params, then n and y0 */
static int read_chain(void *vp, int *n, const double **y0)
{
    chain_t *C = vp;
    if (read_params(C) != 0) return -1;
    *n = C->n;
    *y0 = C->y0;
    return 0;
}

int main(int argc, char **argv)
{
    chain_t C = {0};
    const int status = chain_main(argc, argv, &C, read_chain, rhs, energy);
    free(C.m);
    return status;
}
