"""C callbacks compiled by fixtures that several test modules share (conftest.py builds them
with support.cbuild): the driven double pendulum's force and friends (test_forces.py,
test_inputs_forces.py) and a one-degree-of-freedom pendulum system (test_messages.py,
test_mass_validation.py)."""
import textwrap

from support import cbuild

FORCE = textwrap.dedent(r"""
    #include <math.h>
    /* the test's double-pendulum force as a compiled sym_force_fn;
     * par: D (4), A, W, B, W2, kappa, l1, l2 */
    int dp_force(double t, long k, const double *q, const double *v, unsigned need,
                 double *F, double *Fq, double *Fv, void *ud)
    {
        const double *P = ud, *D = P;
        const double A = P[4], W = P[5], B = P[6], W2 = P[7], ka = P[8], l1 = P[9], l2 = P[10];
        const double tip = B * sin(W2 * t);
        (void)k;
        if (need & 1u) {
            F[0] = -(D[0] * v[0] + D[1] * v[1]) + A * cos(W * t) + tip * l1 * cos(q[0])
                   - ka * v[0] * v[0] * v[0];
            F[1] = -(D[2] * v[0] + D[3] * v[1]) + tip * l2 * cos(q[1]) - ka * v[1] * v[1] * v[1];
        }
        if (need & 2u) {
            Fq[0] = -tip * l1 * sin(q[0]); Fq[1] = 0.0; Fq[2] = 0.0; Fq[3] = -tip * l2 * sin(q[1]);
        }
        if (need & 4u) {
            Fv[0] = -D[0] - 3 * ka * v[0] * v[0]; Fv[1] = -D[1];
            Fv[2] = -D[2]; Fv[3] = -D[3] - 3 * ka * v[1] * v[1];
        }
        return 0;
    }
    /* a torque tau (ud[0]) on coordinate 0, nothing else */
    int torque0(double t, long k, const double *q, const double *v, unsigned need,
                double *F, double *Fq, double *Fv, void *ud)
    {
        (void)t; (void)k; (void)q; (void)v; (void)Fq; (void)Fv;
        if (need & 1u) { F[0] = *(const double *)ud; F[1] = 0.0; F[2] = 0.0; }
        return 0;
    }
    int fails_at_step_3(double t, long k, const double *q, const double *v, unsigned need,
                        double *F, double *Fq, double *Fv, void *ud)
    {
        (void)t; (void)q; (void)v; (void)Fq; (void)Fv; (void)ud;
        if (need & 1u) { F[0] = 0.0; F[1] = 0.0; }
        return k == 3 ? 7 : 0;
    }
    int nan_at_step_2(double t, long k, const double *q, const double *v, unsigned need,
                      double *F, double *Fq, double *Fv, void *ud)
    {
        (void)t; (void)q; (void)v; (void)Fq; (void)Fv; (void)ud;
        if (need & 1u) { F[0] = k == 2 ? NAN : 0.0; F[1] = 0.0; }
        return 0;
    }
""")

PENDULUM = r"""
#include <math.h>
/* pendulum V = m w^2 (1 - cos q), M = m; parameters (m, w) from user_data */
int pend_eval(const double *q, const double *g, unsigned need, double *M, double *A,
              double *H, double *V, double *dV, double *d2V, void *ud)
{
    const double *par = (const double *)ud;
    const double m = par[0], w2 = par[1] * par[1];
    (void)g;
    if (need & 1u) M[0] = m;
    if (need & 2u) A[0] = 0.0;
    if (need & 4u) H[0] = 0.0;
    if (need & 8u) V[0] = m * w2 * (1.0 - cos(q[0]));
    if (need & 16u) dV[0] = m * w2 * sin(q[0]);
    if (need & 32u) d2V[0] = m * w2 * cos(q[0]);
    return 0;
}
int seven_eval(const double *q, const double *g, unsigned need, double *M, double *A,
               double *H, double *V, double *dV, double *d2V, void *ud)
{
    (void)q; (void)g; (void)need; (void)M; (void)A; (void)H; (void)V; (void)dV; (void)d2V;
    (void)ud;
    return 7;
}
"""


def force_library(directory):
    """FORCE compiled and loaded; skips without a C compiler."""
    return cbuild.shared_or_skip(FORCE, directory, "force")


def pendulum_library(directory):
    """PENDULUM compiled (at -O1, as test_messages.py always did) and loaded; skips without a
    C compiler."""
    return cbuild.shared_or_skip(PENDULUM, directory, "m_msgs", flags=("-O1",))
