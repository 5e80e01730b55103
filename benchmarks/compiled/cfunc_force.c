/* The generalized force of benchmarks/suite/forces.py as a compiled callback
 * (sym_force_fn of csrc/core/sym_force_api.h): joint friction of the double pendulum
 * plus a pivot drive,
 *     F = -D qdot + (A cos(W t), 0),   D = [[c1 + c2, -c2], [-c2, c2]],
 * dF/dq = 0, dF/dqdot = -D.  user_data: c1, c2, A, W. */
#include <math.h>

int dp_damped_driven(double t, long k, const double *q, const double *v, unsigned need,
                     double *F, double *Fq, double *Fv, void *user_data)
{
    const double *par = (const double *)user_data;
    const double c1 = par[0], c2 = par[1], A = par[2], W = par[3];
    (void)k;
    (void)q;
    if (need & 1u) {
        F[0] = -(c1 + c2) * v[0] + c2 * v[1] + A * cos(W * t);
        F[1] = c2 * v[0] - c2 * v[1];
    }
    if (need & 2u)
        for (int i = 0; i < 4; i++) Fq[i] = 0.0;
    if (need & 4u) {
        Fv[0] = -(c1 + c2);
        Fv[1] = c2;
        Fv[2] = c2;
        Fv[3] = -c2;
    }
    return 0;
}
