/*
 * sym_systems.c -- the registry of the built-in systems (sym_builtins.h):
 * one row per built-in with its worked example, and the one constructor
 * (sym_sysdef.h) through which every built-in's make function checks its
 * parameters, allocates its params block and sets the system's slots.  The
 * systems themselves are defined one family to a file:
 *   sym_sys_pendulums.c  pendulum, double_pendulum, pendulum_chain
 *   sym_sys_linear.c     linear
 *   sym_sys_tops.c       lagrange_top, lagrange_top_quaternion
 *   sym_sys_linkages.c   pendulum_cartesian, spherical_pendulum_cartesian,
 *                        four_bar
 *   sym_sys_tree.c       tree
 */
#include "sym_sysdef.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int all_finite(const double *x, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

int sym_builtin_new(const sym_builtin_spec *spec, int n, const double *par, size_t npar,
                    sym_system *out)
{
    if (n < spec->n_min || n > spec->n_max || npar != spec->npar || !all_finite(par, npar))
        return SYM_ESYSTEM;
    for (size_t i = 0; i < spec->npos; i++)
        if (!(par[i] > 0.0)) return SYM_ESYSTEM;
    if (spec->check) {
        const int st = spec->check(n, par);
        if (st) return st;
    }
    void *P = malloc(spec->bytes);
    if (!P) return SYM_ENOMEM;
    const int st = spec->fill(n, par, P);
    if (st) {
        free(P);
        return st;
    }
    *out = (sym_system){.n = n, .params = P, .eval = spec->eval, .prep = spec->prep,
                        .eval_prep = spec->eval_prep, .prep_size = spec->prep_size,
                        .prep_n = spec->prep_n,
                        .scratch_size = spec->scratch_size, .flags = spec->flags,
                        .m = spec->m, .constraint = spec->constraint,
                        .constraint_params = spec->m ? P : NULL};
    return SYM_OK;
}

/* ------------------------------------------------------------------ */
/* Registry                                                             */
/* ------------------------------------------------------------------ */
/* Worked examples (sym_builtins.h: ex_n, ex_npar, ex_par, ex_q0, ex_p0): a
 * smooth motion of each system, integrated by tests with every method. */
static const double pendulum_ex[] = {1.0, 1.0}, pendulum_q0[] = {2.0}, pendulum_p0[] = {0.0};
static const double linear_ex[] = {2.0, 0.5, 0.5, 1.0, 3.0, -1.0, -1.0, 2.0};
static const double linear_q0[] = {0.4, -0.2}, linear_p0[] = {0.1, 0.3};
static const double dp_ex[] = {1.0, 1.0, 1.0, 1.0, 9.81};
static const double dp_q0[] = {0.7853981633974483, 1.0471975511965976}, dp_p0[] = {0.0, 0.0};
/* a moderately spinning top: theta stays in [1.0, 2.34] for t <= 4 */
static const double top_ex[] = {1.0, 1.0, 0.5, 1.0, 9.81};
static const double top_q0[] = {0.0, 1.0, 0.0}, top_p0[] = {1.75, 0.0, 2.625};
/* the same top state in a quaternion (from_euler of top_q0, top_p0): on the
 * constraint manifold, |Q| = 1 and Q.P = 0 to rounding */
static const double qtop_ex[] = {1.0, 1.0, 0.5, 1.0, 9.81};
static const double qtop_q0[] = {0.8775825618903728, 0.479425538604203, 0.0, 0.0};
static const double qtop_p0[] = {0.0, 0.0, -1.8251009375668028, 4.985285932044902};
static const double chain_ex[] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 9.81};
static const double chain_q0[] = {0.5, 0.3, -0.2}, chain_p0[] = {0.0, 0.0, 0.0};
/* constrained: states on the constraint manifold (g = 0 and G M^-1 p = 0 to
 * rounding): released at 2 rad from the bottom; a swing about the vertical
 * with a horizontal push; the crank-rocker released at rest with the crank
 * at -1 rad (0.84 rad from its equilibrium -1.843) */
static const double cpend_ex[] = {1.0, 1.0, 9.81};
static const double cpend_q0[] = {0.90929742682568170, 0.41614683654714241};
static const double cpend_p0[] = {0.0, 0.0};
static const double spend_q0[] = {0.84147098480789650, 0.0, -0.54030230586813977};
static const double spend_p0[] = {0.0, 2.0, 0.0};
static const double fourbar_ex[] = {0.3, 1.0, 0.8, 0.3, 1.0, 0.8, 1.0, 9.81};
static const double fourbar_q0[] = {-1.0, 1.1646955236335035, 2.157475793956095};
static const double fourbar_p0[] = {0.0, 0.0, 0.0};
/* a turntable (joint 0, vertical axis) carrying a cart on a horizontal rail (1,
 * prismatic) with a pendulum hanging from it (2), and a second pendulum on a tilted
 * axis (3, a branch); rotated joint frames and full inertia tensors.  For t <= 2 the
 * cart stays within [-0.14, 0.12] m and the pendulums within 0.6 rad of q = 0.
 * Per joint: parent, type, axis; R (rows); p; m, com; inertia. */
static const double tree_ex[] = {
    0.0, 0.0, -9.81,   /* g_w */
    /* 0: turntable: revolute about z */
    -1.0, 0.0, 0.0, 0.0, 1.0,
    1.0, 0.0, 0.0,
    0.0, 1.0, 0.0,
    0.0, 0.0, 1.0,
    0.0, 0.0, 0.1,
    2.0, 0.25, 0.0, 0.05,
    0.02, 0.001, -0.002, 0.05, 0.0015, 0.06,
    /* 1: cart: prismatic along x (the rail), roll 0.3, yaw 0.2 */
    0.0, 1.0, 1.0, 0.0, 0.0,
    0.9800665778412416, -0.18979606097868743, 0.05871080169382652,
    0.19866933079506122, 0.9362933635841992, -0.28962947762551555,
    0.0, 0.29552020666133955, 0.955336489125606,
    0.4, 0.0, 0.0,
    0.7, 0.05, 0.02, -0.01,
    0.003, 0.0002, 0.0001, 0.004, -0.0003, 0.005,
    /* 2: pendulum on the cart: revolute about y, roll -0.25, yaw 0.1 */
    1.0, 0.0, 0.0, 1.0, 0.0,
    0.9950041652780258, -0.09672983749092606, -0.024699182544331684,
    0.09983341664682815, 0.9640718953917106, 0.2461679699645253,
    0.0, -0.24740395925452294, 0.9689124217106447,
    0.0, 0.0, -0.05,
    1.0, 0.0, 0.02, -0.35,
    0.04, -0.001, 0.002, 0.045, 0.003, 0.01,
    /* 3: branch: revolute about (1, 1, 0)/sqrt 2, rpy (0.3, -0.2, 0.4) */
    0.0, 0.0, 0.7071067811865475, 0.7071067811865475, 0.0,
    0.90270109637546, -0.4261017813090817, -0.059732759586093365,
    0.3816559020950483, 0.8570601132100352, -0.3461022027384634,
    0.19866933079506122, 0.28962947762551555, 0.9362933635841992,
    -0.2, 0.1, 0.05,
    0.8, 0.0, 0.05, -0.25,
    0.02, 0.0005, -0.001, 0.018, 0.002, 0.006,
    0.0};   /* no mimic constraints */
static const double tree_q0[] = {0.3, 0.05, 0.6, -0.5}, tree_p0[] = {0.1, 0.1, 0.0, 0.05};

#define EXAMPLE(N, PAR, Q0, P0) N, sizeof(PAR) / sizeof(PAR[0]), PAR, Q0, P0

static const sym_builtin builtins[] = {
    {"pendulum",
     "Nonlinear pendulum L = 1/2 m qdot^2 - m omega^2 (1 - cos q) (FVCA).",
     "m, omega", sym_sys_pendulum, EXAMPLE(1, pendulum_ex, pendulum_q0, pendulum_p0)},
    {"linear",
     "Quadratic Lagrangian L = 1/2 qdot^T M qdot - 1/2 q^T K q with constant "
     "symmetric M (positive definite) and K (AXIOMS).",
     "M (n*n row-major), K (n*n row-major)", sym_sys_linear,
     EXAMPLE(2, linear_ex, linear_q0, linear_p0)},
    {"double_pendulum",
     "Planar double pendulum, absolute angles from the downward vertical "
     "(TOP Section 3).",
     "m1, m2, l1, l2, g", sym_sys_double_pendulum, EXAMPLE(2, dp_ex, dp_q0, dp_p0)},
    {"lagrange_top",
     "Heavy symmetric (Lagrange) top in ZXZ Euler angles (phi, theta, psi), "
     "V = m g l cos(theta) (TOP Section 4).",
     "m, I, I3, l, g", sym_sys_lagrange_top, EXAMPLE(3, top_ex, top_q0, top_p0)},
    {"lagrange_top_quaternion",
     "Heavy symmetric (Lagrange) top in a unit quaternion Q (scalar first), "
     "M(Q) = 4 E^T J E + 4 I Q Q^T, V = m g l (axis z-component), with the "
     "holonomic constraint g = |Q|^2 - 1 (no coordinate singularity).",
     "m, I, I3, l, g", sym_sys_lagrange_top_quaternion, EXAMPLE(4, qtop_ex, qtop_q0, qtop_p0)},
    {"pendulum_chain",
     "Planar chain of n point masses on massless rods, absolute angles from "
     "the downward vertical; O(n^2) per evaluation.",
     "m (n values), l (n values), g", sym_sys_pendulum_chain,
     EXAMPLE(3, chain_ex, chain_q0, chain_p0)},
    {"pendulum_cartesian",
     "Planar pendulum in Cartesian coordinates q = (x, y), y up, with the holonomic "
     "constraint g = (x^2 + y^2 - l^2)/2 (rod tension lambda l).",
     "m, l, g", sym_sys_pendulum_cartesian, EXAMPLE(2, cpend_ex, cpend_q0, cpend_p0)},
    {"spherical_pendulum_cartesian",
     "Spherical pendulum in Cartesian coordinates q = (x, y, z), z up, with the "
     "holonomic constraint g = (|q|^2 - l^2)/2 (rod tension lambda l).",
     "m, l, g", sym_sys_spherical_pendulum_cartesian,
     EXAMPLE(3, cpend_ex, spend_q0, spend_p0)},
    {"four_bar",
     "Planar four-bar linkage of uniform rods (crank, coupler, rocker) between "
     "ground pivots (0, 0) and (d, 0), q = their absolute angles, with the two "
     "loop-closure constraints (one degree of freedom).",
     "m1, m2, m3, l1, l2, l3, d, g", sym_sys_four_bar,
     EXAMPLE(3, fourbar_ex, fourbar_q0, fourbar_p0)},
    {"tree",
     "Tree of rigid bodies on revolute and prismatic joints (a URDF's movable joints): "
     "T = 1/2 sum_j (m_j |v_cj|^2 + w_j^T I_j w_j), V = -sum_j m_j g_w . x_cj, optional "
     "mimic constraints q_j = a q_k + b; O(n depth) per evaluation.",
     "g_w (3); per joint j: parent (< j, -1 root), type (0 revolute, 1 prismatic), axis (3, "
     "joint frame), R (9, joint frame in the parent body frame, row-major), p (3), m, "
     "com (3, body frame), Ixx, Ixy, Ixz, Iyy, Iyz, Izz (about the com, body frame); m_c; "
     "per mimic constraint: j, k, a, b", sym_sys_tree,
     EXAMPLE(4, tree_ex, tree_q0, tree_p0)},
};

/* sym_builtin_count, sym_builtin_at, sym_builtin_find */
SYM_ROW_ACCESS(sym_builtin, builtins, sym_builtin)

int sym_builtin_make(const char *name, int n, const double *par, size_t npar,
                     sym_system *out)
{
    const sym_builtin *b = sym_builtin_find(name);
    if (!out) return SYM_EINVAL;
    memset(out, 0, sizeof(*out));
    if (!b) return SYM_ESYSTEM;
    if (npar && !par) return SYM_EINVAL;
    return b->make(n, par, npar, out);
}

void sym_builtin_free(sym_system *sys)
{
    if (!sys) return;
    free(sys->params);
    sys->params = NULL;
}

