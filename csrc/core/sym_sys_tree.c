/*
 * sym_sys_tree.c -- a tree of rigid bodies joined by revolute and prismatic
 * joints (built-in system "tree", defined through sym_sysdef.h): the C side
 * of the URDF reader (issue 49; the flat parameters' layout is the contract
 * in the params_doc of its registry row, sym_systems.c).
 *
 * The model.  Body j (j = 0..n-1) hangs from body parent(j) < j (-1: the
 * fixed root, whose frame is the world frame) by joint j, the coordinate q_j:
 *   T_j = T_parent(j) [R0_j | p0_j] Joint_j(q_j),
 * Joint_j a rotation by q_j about the unit axis k_j (revolute) or a
 * translation by q_j along it (prismatic), k_j given in the joint frame;
 *   L = T - V,  T = 1/2 sum_j (m_j |v_cj|^2 + w_j^T I_j^w w_j),
 *   V = -sum_j m_j g_w . x_cj.
 * Optionally m_c mimic constraints g_k(q) = q_j - a q_k' - b (constant G,
 * S = 0).
 *
 * The algebra: spatial vectors in world coordinates (Featherstone, Rigid Body
 * Dynamics Algorithms, 2008, ch. 2), all taken at the world origin O.  A
 * motion vector (twist) is s = (w, v): w the angular velocity, v the velocity
 * of the body-fixed point passing through O; a force vector (wrench) is
 * f = (n, f): n the moment about O.  Cross products
 *   s1 x s2  = (w1 x w2, w1 x v2 + v1 x w2)        (motion on motion)
 *   s x* f   = (w x n + v x f, w x f)              (motion on force),
 * with s x* = -(s x)^T, so that  (s x a) . f = -a . (s x* f).   (I)
 * The spatial inertia of a body of mass m, centre of mass x and inertia
 * Ic (about x, world axes) is kept as (m, mx = m x, Ib), Ib = Ic - m [x]^2
 * its rotational inertia about O; it maps a twist to the momentum
 *   I s = (Ib w + mx x v, m v - mx x w)
 * (angular momentum about O, linear momentum m (v + w x x)); 1/2 s^T I s is
 * the body's kinetic energy.  Spatial inertias add, so a subtree's
 * (composite) inertia is the sum of its bodies'.
 *
 * Per joint j, in the world frame at q: its axis S_j = (w_j, v_j), revolute
 * (k, o x k) with k the world axis and o the joint frame's origin (on the
 * axis), prismatic (0, k).  Then, with a <= b meaning "a is b or an ancestor
 * of b" (the ancestors of a body are the joints that move it):
 *   V_i = sum_{k <= i} S_k g_k          the body's twist at velocity g,
 *   I_i                                  its spatial inertia,
 *   Ic_j = sum_{i >= j} I_i              the subtree's composite inertia,
 *   h_j = sum_{i >= j} I_i V_i           the subtree's momentum.
 * Moving q_c moves every body i >= c (and every joint axis attached to one)
 * rigidly by the twist S_c, so a motion vector attached to them changes by
 * S_c x, an inertia by the congruence S_c x* I - I S_c x:
 *   dS_j/dq_c = S_c x S_j          (c <= j; 0 for c = j: S_j x S_j = 0),
 *   dI_i/dq_c = S_c x* I_i - I_i S_c x            (c <= i),
 *   dV_i/dq_c = sum_{c <= k <= i} S_c x S_k g_k = S_c x (V_i - V_c)   (c <= i)
 * (the k = c term is zero: the sum over c < k <= i is V_i - V_c).
 * The closed forms then follow, each by differentiating the one before:
 *   T = 1/2 sum_i V_i^T I_i V_i = 1/2 sum_j g_j S_j^T h_j, and T is
 *     quadratic in g with dT/dg_j = sum_{i >= j} S_j^T I_i V_i, so
 *   (M g)_j = S_j^T h_j,   M_jk = S_j^T Ic_j S_k  (k <= j; symmetric; 0 for
 *     unrelated j, k): the deeper one's composite inertia.
 *   d(I_i V_i)/dq_c = (S_c x* I_i - I_i S_c x) V_i + I_i S_c x (V_i - V_c)
 *                   = S_c x* (I_i V_i) - I_i a_c,     a_c = S_c x V_c  (c <= i)
 *     (= S_c x V_parent(c), as S_c x S_c = 0: so it is formed, exactly 0 at
 *     a root joint),
 *     summed over the subtree: dh_j/dq_c = S_c x* h_j - Ic_j a_c (c <= j),
 *     = F_c := S_c x* h_c - Ic_c a_c (j < c: only the bodies >= c move).
 *   A_jc = d(S_j^T h_j)/dq_c:
 *     c <= j:  (S_c x S_j)^T h_j + S_j^T (S_c x* h_j - Ic_j a_c)
 *              = -Y_j . a_c,   Y_j = Ic_j S_j   (the first two cancel by (I)),
 *     j < c:   S_j . F_c     (S_j does not move with q_c),
 *     else 0.
 *   dT/dq_c = sum_{i >= c} [(I_i V_i)^T S_c x (V_i - V_c)
 *                            + 1/2 V_i^T (S_c x* I_i - I_i S_c x) V_i]
 *           = sum_{i >= c} [(I_i V_i)^T S_c x (V_i - V_c) - (I_i V_i)^T S_c x V_i]
 *           = -h_c . a_c                      (the second term by (I)).
 *   H_cd = d(-h_c . a_c)/dq_d:
 *     d <= c:  da_c/dq_d = (S_d x S_c) x V_c + S_c x (S_d x (V_c - V_d))
 *                        = S_d x a_c - S_c x a_d  (Jacobi's identity), so
 *              H_cd = -(S_d x a_c) . h_c - a_c . (S_d x* h_c)    [= 0 by (I)]
 *                     + (S_c x a_d) . h_c + a_c . Ic_c a_d
 *                   = a_d . (Ic_c a_c - S_c x* h_c) = -a_d . F_c   (by (I)),
 *     c < d:   H_cd = -a_c . F_d  (only h_c moves), so H is symmetric:
 *              H_cd = -a_s . F_t with s the shallower, t the deeper of c, d
 *              (s <= t), 0 for unrelated c, d.
 *   The potential: a point x fixed in a body >= c moves with dx/dq_c =
 *   v_c + w_c x x, so with the subtree's mass m^c_c and first moment mx^c_c,
 *   u_c := d(sum_{i >= c} m_i x_ci)/dq_c = m^c_c v_c + w_c x mx^c_c and
 *     V = -g_w . sum_i m_i x_ci,   dV/dq_c = -g_w . u_c,
 *     d2V_st = d(-g_w . u_s)/dq_t = -g_w . (w_s x u_t)  (s <= t: w_s, v_s
 *     stand still and the subtree of s moves only through the part >= t;
 *     for t = s: du_s/dq_s = w_s x u_s, the same), symmetric, 0 unrelated.
 * Cost: two passes over the bodies for the kinematics and composites
 * (O(n): 3 x 3 products per body), then the pairs (t, s) with s <= t, which
 * a walk up from t visits: O(n depth) <= O(n^2) six-term dot products for
 * M, A, H and three-term ones for d2V, and the O(n^2) zero fill of the
 * unrelated pairs; V and dV take the O(n) passes only.
 */
#include "sym_sysdef.h"
#include "sym_sincos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the largest n (the flat parameters' count, 4 + 27 n + 4 m_c, and the
 * scratch stay small) */
#define TREE_N_MAX 4096
/* the values per joint in the flat parameters, and where the joints start */
#define TREE_STRIDE 27
#define TREE_HEAD 3
/* |axis| = 1 and R0 orthonormal to this (the contract) */
#define TREE_TOL 1e-9

typedef struct {
    int parent;     /* -1: the root */
    int prismatic;  /* 0: revolute, 1: prismatic */
    double k[3];    /* the unit axis in the joint frame */
    double R0[9];   /* joint frame at q = 0 in the parent body frame, row-major */
    double p0[3];   /* its origin there */
    double m;       /* body mass */
    double c[3];    /* centre of mass, body frame */
    double Ic[6];   /* inertia about c, body frame: xx, xy, xz, yy, yz, zz */
} tree_joint;

typedef struct { int j, k; double a, b; } tree_mimic;

typedef struct {
    int n, mc;
    double g[3];
    tree_joint *J;
    tree_mimic *C;
} tree_par;

/* ------------------------------------------------------------------ */
/* Small vector algebra                                                 */
/* ------------------------------------------------------------------ */
static inline void cross3(const double *a, const double *b, double *out)
{
    const double x = a[1] * b[2] - a[2] * b[1];
    const double y = a[2] * b[0] - a[0] * b[2];
    const double z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static inline double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* C = A B (3 x 3, row-major; C apart from A and B) */
static inline void mat3_mul(const double *restrict A, const double *restrict B,
                            double *restrict C)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

/* y = A x (3 x 3; y apart from A and x) */
static inline void mat3_vec(const double *restrict A, const double *restrict x,
                            double *restrict y)
{
    const double y0 = A[0] * x[0] + A[1] * x[1] + A[2] * x[2];
    const double y1 = A[3] * x[0] + A[4] * x[1] + A[5] * x[2];
    const double y2 = A[6] * x[0] + A[7] * x[1] + A[8] * x[2];
    y[0] = y0;
    y[1] = y1;
    y[2] = y2;
}

/* motion on motion: s x t = (ws x wt, ws x vt + vs x wt) */
static inline void mcross(const double *s, const double *t, double *out)
{
    double a[3], b[3];
    cross3(s, t + 3, a);
    cross3(s + 3, t, b);
    cross3(s, t, out);
    out[3] = a[0] + b[0];
    out[4] = a[1] + b[1];
    out[5] = a[2] + b[2];
}

/* motion on force: s x* f = (w x n + v x f, w x f) */
static inline void fcross(const double *s, const double *f, double *out)
{
    double a[3], b[3];
    cross3(s, f, a);
    cross3(s + 3, f + 3, b);
    cross3(s, f + 3, out + 3);
    out[0] = a[0] + b[0];
    out[1] = a[1] + b[1];
    out[2] = a[2] + b[2];
}

/* A spatial inertia in TREE_INERTIA doubles: m, mx (3), Ib (6, symmetric
 * xx, xy, xz, yy, yz, zz).  I s = (Ib w + mx x v, m v - mx x w). */
enum { IN_M = 0, IN_MX = 1, IN_IB = 4, TREE_INERTIA = 10 };

static inline void inertia_apply(const double *I, const double *s, double *out)
{
    const double *Ib = I + IN_IB, *w = s, *v = s + 3;
    double a[3], b[3];
    cross3(I + IN_MX, v, a);
    cross3(I + IN_MX, w, b);
    out[0] = Ib[0] * w[0] + Ib[1] * w[1] + Ib[2] * w[2] + a[0];
    out[1] = Ib[1] * w[0] + Ib[3] * w[1] + Ib[4] * w[2] + a[1];
    out[2] = Ib[2] * w[0] + Ib[4] * w[1] + Ib[5] * w[2] + a[2];
    out[3] = I[IN_M] * v[0] - b[0];
    out[4] = I[IN_M] * v[1] - b[1];
    out[5] = I[IN_M] * v[2] - b[2];
}

/* ------------------------------------------------------------------ */
/* Evaluation                                                           */
/* ------------------------------------------------------------------ */
/* Per body in the scratch: the world pose (R, p), the axis S, the body's
 * own and the subtree's spatial inertia, the twist V, the subtree
 * momentum h, a = S x V, F = S x* h - Ic a, Y = Ic S, u (the subtree's
 * first moment rate) and z = u x g_w; then sin and cos of every q. */
enum {
    B_R = 0, B_P = 9, B_S = 12, B_I = 18, B_IC = B_I + TREE_INERTIA, B_V = B_IC + TREE_INERTIA,
    B_H = B_V + 6, B_A = B_H + 6, B_F = B_A + 6, B_Y = B_F + 6, B_U = B_Y + 6, B_Z = B_U + 3,
    TREE_BODY = B_Z + 3
};

#define TREE_SCRATCH(n) ((TREE_BODY + 2) * (size_t)(n))

/* The passes over the bodies (O(n)) into the scratch: poses, axes, the
 * bodies' inertias (m, mx always, Ib with kin), twists (vel), composites and
 * the per-joint vectors Y (kin), a, F (vel), u, z (dV). */
static void tree_bodies(const tree_par *P, const double *q, const double *g, unsigned need,
                        double *scratch)
{
    const int n = P->n;
    const unsigned kin = need & (SYM_NEED_M | SYM_NEED_A | SYM_NEED_H);
    const int vel = (need & (SYM_NEED_A | SYM_NEED_H)) != 0;
    const double *gw = P->g;
    double *sn = scratch + (size_t)TREE_BODY * (size_t)n, *cs = sn + n;
#define BODY(i) (scratch + (size_t)(i) * TREE_BODY)
    sym_sincos_n(n, q, sn, cs);

    /* forward: poses, axes, inertias, twists */
    for (int i = 0; i < n; i++) {
        const tree_joint *J = &P->J[i];
        double *b = BODY(i), *R = b + B_R, *p = b + B_P, *S = b + B_S, *I = b + B_I;
        static const double eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, zero3[3] = {0, 0, 0};
        const double *Rp = J->parent >= 0 ? BODY(J->parent) + B_R : eye;
        const double *pp = J->parent >= 0 ? BODY(J->parent) + B_P : zero3;
        /* the joint frame: RJ = Rp R0, pJ = pp + Rp p0; its axis k_w = RJ k */
        double RJ[9], pJ[3], kw[3];
        mat3_mul(Rp, J->R0, RJ);
        mat3_vec(Rp, J->p0, pJ);
        for (int e = 0; e < 3; e++) pJ[e] += pp[e];
        mat3_vec(RJ, J->k, kw);
        if (J->prismatic) {
            /* R = RJ, p = pJ + q k_w;  S = (0, k_w) */
            memcpy(R, RJ, sizeof RJ);
            for (int e = 0; e < 3; e++) {
                p[e] = pJ[e] + q[i] * kw[e];
                S[e] = 0.0;
                S[3 + e] = kw[e];
            }
        } else {
            /* R = RJ Rot(k, q), Rot(k, q) = cos 1 + sin [k]x + (1 - cos) k k^T
             * (Rodrigues); p = pJ;  S = (k_w, pJ x k_w): the velocity at O of a
             * rotation about the line through pJ is w x (O - pJ) */
            const double s = sn[i], c = cs[i], d = 1.0 - c, *k = J->k;
            const double Rot[9] = {
                c + d * k[0] * k[0], d * k[0] * k[1] - s * k[2], d * k[0] * k[2] + s * k[1],
                d * k[1] * k[0] + s * k[2], c + d * k[1] * k[1], d * k[1] * k[2] - s * k[0],
                d * k[2] * k[0] - s * k[1], d * k[2] * k[1] + s * k[0], c + d * k[2] * k[2]};
            mat3_mul(RJ, Rot, R);
            memcpy(p, pJ, sizeof pJ);
            memcpy(S, kw, sizeof kw);
            cross3(pJ, kw, S + 3);
        }
        /* the body's centre of mass x = p + R c: m and mx = m x */
        double x[3];
        mat3_vec(R, J->c, x);
        I[IN_M] = J->m;
        for (int e = 0; e < 3; e++) {
            x[e] += p[e];
            I[IN_MX + e] = J->m * x[e];
        }
        if (kin) {
            /* Ib = R Ic R^T + m (|x|^2 1 - x x^T)  (parallel axes to O) */
            const double *Ic = J->Ic;
            const double Ifull[9] = {Ic[0], Ic[1], Ic[2], Ic[1], Ic[3], Ic[4], Ic[2], Ic[4], Ic[5]};
            double T[9], *Ib = I + IN_IB;
            const double *mx = I + IN_MX, mxx = dot3(mx, x);
            mat3_mul(R, Ifull, T);
            /* (T R^T)_ab = sum_e T_ae R_be */
            static const int ia[6] = {0, 0, 0, 1, 1, 2}, ib[6] = {0, 1, 2, 1, 2, 2};
            for (int e = 0; e < 6; e++) {
                const int a = ia[e], bb = ib[e];
                Ib[e] = T[3 * a] * R[3 * bb] + T[3 * a + 1] * R[3 * bb + 1] +
                        T[3 * a + 2] * R[3 * bb + 2] - mx[a] * x[bb] + (a == bb ? mxx : 0.0);
            }
        }
        if (vel) {
            /* V_i = V_parent + S_i g_i */
            double *V = b + B_V;
            const double *Vp = J->parent >= 0 ? BODY(J->parent) + B_V : NULL;
            for (int e = 0; e < 6; e++) V[e] = (Vp ? Vp[e] : 0.0) + S[e] * g[i];
        }
    }

    /* backward: composite inertias Ic_j = sum_{i >= j} I_i (only m, mx for
     * the potential's derivatives), subtree momenta h_j = sum_{i >= j} I_i V_i;
     * the children (indices > j) are added before j is passed up */
    const size_t ncomp = kin ? TREE_INERTIA : (need & (SYM_NEED_DV | SYM_NEED_D2V)) ? 4 : 0;
    for (int i = 0; i < n && ncomp; i++) {
        double *b = BODY(i);
        memcpy(b + B_IC, b + B_I, sizeof(double) * ncomp);
        if (vel) inertia_apply(b + B_I, b + B_V, b + B_H);
    }
    for (int i = n - 1; i >= 0 && ncomp; i--) {
        const int par = P->J[i].parent;
        if (par < 0) continue;
        const double *b = BODY(i);
        double *bp = BODY(par);
        for (size_t e = 0; e < ncomp; e++) bp[B_IC + e] += b[B_IC + e];
        if (vel)
            for (int e = 0; e < 6; e++) bp[B_H + e] += b[B_H + e];
    }

    /* per joint: Y = Ic S; a = S x V = S x V_parent (no cancellation of
     * S x S g, and exactly 0 at a root joint), F = S x* h - Ic a;
     * u = m^c v + w x mx^c, z = u x g_w */
    for (int i = 0; i < n; i++) {
        double *b = BODY(i);
        const double *S = b + B_S, *Ic = b + B_IC;
        if (kin) inertia_apply(Ic, S, b + B_Y);
        if (vel) {
            double Ia[6];
            const int par = P->J[i].parent;
            if (par >= 0)
                mcross(S, BODY(par) + B_V, b + B_A);
            else
                sym_zero(b + B_A, 6);
            fcross(S, b + B_H, b + B_F);
            inertia_apply(Ic, b + B_A, Ia);
            for (int e = 0; e < 6; e++) b[B_F + e] -= Ia[e];
        }
        if (need & (SYM_NEED_DV | SYM_NEED_D2V)) {
            double *u = b + B_U;
            cross3(S, Ic + IN_MX, u);
            for (int e = 0; e < 3; e++) u[e] += Ic[IN_M] * S[3 + e];
            cross3(u, gw, b + B_Z);
        }
    }

#undef BODY
}

static int tree_eval(const double *q, const double *g, unsigned need, const sym_eval_out *o,
                     void *params, double *scratch)
{
    const tree_par *P = params;
    const int n = P->n;
    const size_t nn = (size_t)n * (size_t)n;
    const double *gw = P->g;
#define BODY(i) (scratch + (size_t)(i) * TREE_BODY)
    tree_bodies(P, q, g, need, scratch);
    /* the potential: V = -g_w . sum_i m_i x_i (the bodies' own first moments) */
    if (need & SYM_NEED_V) {
        double v = 0.0;
        for (int i = 0; i < n; i++) v -= dot3(gw, BODY(i) + B_I + IN_MX);
        o->V[0] = v;
    }

    /* dV_c = -g_w . u_c */
    if (need & SYM_NEED_DV)
        for (int i = 0; i < n; i++) o->dV[i] = -dot3(gw, BODY(i) + B_U);

    /* the pairs (t, s), s <= t, by a walk from t up to the root:
     *   M_ts = M_st = Y_t . S_s,
     *   A_ts = -Y_t . a_s,  A_st = S_s . F_t (s != t),
     *   H_ts = H_st = -a_s . F_t,
     *   d2V_ts = d2V_st = -g_w . (w_s x u_t) = -w_s . (u_t x g_w) = -w_s . z_t;
     * every other entry is zero */
    if (need & SYM_NEED_M) sym_zero(o->M, nn);
    if (need & SYM_NEED_A) sym_zero(o->A, nn);
    if (need & SYM_NEED_H) sym_zero(o->H, nn);
    if (need & SYM_NEED_D2V) sym_zero(o->d2V, nn);
    if (need & (SYM_NEED_M | SYM_NEED_A | SYM_NEED_H | SYM_NEED_D2V)) {
        for (int t = 0; t < n; t++) {
            const double *bt = BODY(t);
            const size_t rt = (size_t)t * (size_t)n;
            for (int s = t; s >= 0; s = P->J[s].parent) {
                const double *bs = BODY(s);
                const size_t rs = (size_t)s * (size_t)n;
                if (need & SYM_NEED_M) o->M[rt + s] = o->M[rs + t] = dot6(bt + B_Y, bs + B_S);
                if (need & SYM_NEED_A) {
                    o->A[rt + s] = -dot6(bt + B_Y, bs + B_A);
                    if (s != t) o->A[rs + t] = dot6(bs + B_S, bt + B_F);
                }
                if (need & SYM_NEED_H) o->H[rt + s] = o->H[rs + t] = -dot6(bs + B_A, bt + B_F);
                if (need & SYM_NEED_D2V)
                    o->d2V[rt + s] = o->d2V[rs + t] = -dot3(bs + B_S, bt + B_Z);
            }
        }
    }
#undef BODY
    return 0;
}

/* ------------------------------------------------------------------ */
/* The O(n) view (sym_galerkin_stree.c)                                 */
/* ------------------------------------------------------------------ */
int sym_tree_view(const sym_system *sys, const double **gw)
{
    if (sys->eval != tree_eval || sys->eval_batch || !sys->params) return 1;
    const tree_par *P = sys->params;
    if (P->mc > 0) return 1;
    *gw = P->g;
    return 0;
}

void sym_tree_parents(const sym_system *sys, int *parent)
{
    const tree_par *P = sys->params;
    for (int j = 0; j < P->n; j++) parent[j] = P->J[j].parent;
}

size_t sym_tree_scratch(int n)
{
    return TREE_SCRATCH(n);
}

/* One point (q, g) by the two passes: per body the record of sym_sysdef.h
 * (S, I, V, h, a and the subtree's m, mx), and
 *   P_j = (M g)_j = S_j . h_j,  dV_j = -g_w . u_j,  f_j = -h_j . a_j - dV_j
 * (the header's closed forms, no n x n matrix). */
void sym_tree_point(const sym_system *sys, const double *q, const double *g, double *scratch,
                    double *rec, double *P, double *f, double *dV)
{
    const tree_par *T = sys->params;
    const int n = T->n;
    tree_bodies(T, q, g, SYM_NEED_A | SYM_NEED_DV, scratch);
    for (int j = 0; j < n; j++) {
        const double *b = scratch + (size_t)j * TREE_BODY;
        double *o = rec + (size_t)j * SYM_TR_SIZE;
        memcpy(o + SYM_TR_S, b + B_S, 6 * sizeof(double));
        memcpy(o + SYM_TR_I, b + B_I, TREE_INERTIA * sizeof(double));
        memcpy(o + SYM_TR_V, b + B_V, 6 * sizeof(double));
        memcpy(o + SYM_TR_H, b + B_H, 6 * sizeof(double));
        memcpy(o + SYM_TR_A, b + B_A, 6 * sizeof(double));
        memcpy(o + SYM_TR_C, b + B_IC, 4 * sizeof(double));
        P[j] = dot6(b + B_S, b + B_H);
        dV[j] = -dot3(T->g, b + B_U);
        f[j] = -dot6(b + B_H, b + B_A) - dV[j];
    }
}

/* T = 1/2 p^T M(q)^{-1} p in O(n): M v = p solved by the articulated-body
 * recursion (Featherstone 2008, ch. 7, with no velocity and no gravity, the
 * joint forces p), in world coordinates at O:
 *   leaf to root: IA_j = I_j + sum_c (IA_c - U_c U_c^T / D_c),
 *     pA_j = sum_c (pA_c + U_c u_c / D_c),  U_j = IA_j S_j,  D_j = S_j . U_j,
 *     u_j = p_j - S_j . pA_j;
 *   root to leaf: v_j = (u_j - U_j . a_parent) / D_j,  a_j = a_parent + S_j v_j
 *     (a = 0 above a root joint);  T = 1/2 sum_j v_j p_j.
 * work: 50 n doubles.  NaN where a D_j <= 0 (M singular). */
double sym_tree_kinetic(const sym_system *sys, const double *q, const double *p,
                        double *scratch, double *work)
{
    const tree_par *T = sys->params;
    const int n = T->n;
    enum { K_IA = 0, K_PA = 36, K_U = 42, K_D = 48, K_V = 49, K_STRIDE = 50 };
    tree_bodies(T, q, NULL, SYM_NEED_M, scratch);
    for (int j = 0; j < n; j++) {   /* IA_j = I_j (6 x 6), pA_j = 0 */
        const double *I = scratch + (size_t)j * TREE_BODY + B_I, *Ib = I + IN_IB, *mx = I + IN_MX;
        double *K = work + (size_t)j * K_STRIDE, *A = K + K_IA;
        const double top[9] = {Ib[0], Ib[1], Ib[2], Ib[1], Ib[3], Ib[4], Ib[2], Ib[4], Ib[5]};
        /* [[Ib, [mx]x], [-[mx]x, m 1]] */
        const double X[9] = {0.0, -mx[2], mx[1], mx[2], 0.0, -mx[0], -mx[1], mx[0], 0.0};
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                A[6 * a + b] = top[3 * a + b];
                A[6 * a + 3 + b] = X[3 * a + b];
                A[6 * (3 + a) + b] = -X[3 * a + b];
                A[6 * (3 + a) + 3 + b] = a == b ? I[IN_M] : 0.0;
            }
        sym_zero(K + K_PA, 6);
    }
    for (int j = n - 1; j >= 0; j--) {
        double *K = work + (size_t)j * K_STRIDE, *A = K + K_IA, *U = K + K_U;
        const double *S = scratch + (size_t)j * TREE_BODY + B_S;
        for (int a = 0; a < 6; a++) U[a] = dot6(A + 6 * a, S);
        const double D = dot6(S, U), u = p[j] - dot6(S, K + K_PA);
        K[K_D] = D;
        K[K_V] = u;
        const int par = T->J[j].parent;
        if (par < 0) continue;
        double *Kp = work + (size_t)par * K_STRIDE;
        for (int a = 0; a < 6; a++) {
            for (int b = 0; b < 6; b++) Kp[K_IA + 6 * a + b] += A[6 * a + b] - U[a] * U[b] / D;
            Kp[K_PA + a] += K[K_PA + a] + U[a] * u / D;
        }
    }
    double Tk = 0.0;
    for (int j = 0; j < n; j++) {   /* a_j kept in pA_j's place */
        double *K = work + (size_t)j * K_STRIDE;
        const double *S = scratch + (size_t)j * TREE_BODY + B_S;
        const int par = T->J[j].parent;
        const double *ap = par >= 0 ? work + (size_t)par * K_STRIDE + K_PA : NULL;
        if (!(K[K_D] > 0.0)) return NAN;
        const double v = (K[K_V] - (ap ? dot6(K + K_U, ap) : 0.0)) / K[K_D];
        for (int a = 0; a < 6; a++) K[K_PA + a] = (ap ? ap[a] : 0.0) + S[a] * v;
        Tk += v * p[j];
    }
    return 0.5 * Tk;
}

/* ------------------------------------------------------------------ */
/* Mimic constraints g_k = q_j - a q_k' - b:  G_k = e_j - a e_k', S = 0  */
/* ------------------------------------------------------------------ */
static int tree_constraint(const double *q, const double *mu, unsigned need,
                           const sym_constraint_out *o, void *params)
{
    const tree_par *P = params;
    const int n = P->n;
    (void)mu;
    if (need & SYM_CNEED_G)
        for (int r = 0; r < P->mc; r++) {
            const tree_mimic *C = &P->C[r];
            o->g[r] = q[C->j] - C->a * q[C->k] - C->b;
        }
    if (need & SYM_CNEED_JAC) {
        sym_zero(o->G, (size_t)P->mc * (size_t)n);
        for (int r = 0; r < P->mc; r++) {
            const tree_mimic *C = &P->C[r];
            double *Gr = o->G + (size_t)r * (size_t)n;
            Gr[C->j] = 1.0;
            Gr[C->k] = -C->a;
        }
    }
    if (need & SYM_CNEED_HESS) sym_zero(o->S, (size_t)n * (size_t)n);
    return 0;
}

/* ------------------------------------------------------------------ */
/* The flat parameters                                                  */
/* ------------------------------------------------------------------ */
/* x a whole number in [lo, hi) (false for NaN) */
static int whole_in(double x, double lo, double hi)
{
    return x >= lo && x < hi && x == floor(x);
}

/* m_c from the flat parameters, read only when they reach it (n in range
 * and npar > 3 + 27 n: sym_builtin_new compares npar with the spec's only
 * after the spec is built), and only if it is a whole number in [0, n) (a
 * constrained system needs m < n); -1 otherwise */
static int tree_mc(int n, const double *par, size_t npar)
{
    if (n < 1 || n > TREE_N_MAX || !par) return -1;
    const size_t k = TREE_HEAD + TREE_STRIDE * (size_t)n;
    if (npar <= k || !whole_in(par[k], 0.0, (double)n)) return -1;
    return (int)par[k];
}

/* the npar the parameters must have, 4 + 27 n + 4 m_c; SIZE_MAX (no npar)
 * when m_c cannot be read or is refused */
static size_t tree_npar(int n, const double *par, size_t npar)
{
    const int mc = tree_mc(n, par, npar);
    return mc < 0 ? (size_t)-1
                  : TREE_HEAD + 1 + TREE_STRIDE * (size_t)n + 4 * (size_t)mc;
}

static int tree_mc0(int n, const double *par, size_t npar)
{
    const int mc = tree_mc(n, par, npar);
    return mc < 0 ? 0 : mc;
}

/* What C can check (the contract; the Python side validates physically and
 * names the element): parents whole numbers in [-1, j), types 0 or 1,
 * |axis| = 1 and R0 a rotation (R R^T = 1 to 1e-9, det > 0), m >= 0; the
 * mimic pairs' indices whole numbers in [0, n), j != k.  n, npar, m_c and
 * finiteness are checked by then. */
static int tree_check(int n, const double *par)
{
    for (int j = 0; j < n; j++) {
        const double *x = par + TREE_HEAD + TREE_STRIDE * (size_t)j;
        const double *k = x + 2, *R = x + 5;
        if (!whole_in(x[0], -1.0, (double)j) || !(x[1] == 0.0 || x[1] == 1.0))
            return SYM_ESYSTEM;
        if (!(fabs(sqrt(dot3(k, k)) - 1.0) <= TREE_TOL)) return SYM_ESYSTEM;
        for (int a = 0; a < 3; a++)
            for (int b = a; b < 3; b++)
                if (!(fabs(dot3(R + 3 * a, R + 3 * b) - (a == b)) <= TREE_TOL)) return SYM_ESYSTEM;
        double c[3];
        cross3(R, R + 3, c);
        if (!(dot3(c, R + 6) > 0.0)) return SYM_ESYSTEM;
        if (!(x[17] >= 0.0)) return SYM_ESYSTEM;
    }
    const double *y = par + TREE_HEAD + TREE_STRIDE * (size_t)n;
    const int mc = (int)y[0];
    for (int r = 0; r < mc; r++) {
        const double *c = y + 1 + 4 * r;
        if (!whole_in(c[0], 0.0, (double)n) || !whole_in(c[1], 0.0, (double)n) || c[0] == c[1])
            return SYM_ESYSTEM;
    }
    return SYM_OK;
}

static int tree_fill(int n, const double *par, void *params)
{
    tree_par *P = params;
    const double *y = par + TREE_HEAD + TREE_STRIDE * (size_t)n;
    P->n = n;
    P->mc = (int)y[0];
    memcpy(P->g, par, sizeof P->g);
    P->J = (tree_joint *)(P + 1);
    P->C = (tree_mimic *)(P->J + n);
    for (int j = 0; j < n; j++) {
        const double *x = par + TREE_HEAD + TREE_STRIDE * (size_t)j;
        tree_joint *J = &P->J[j];
        const double norm = sqrt(dot3(x + 2, x + 2));   /* 1 to 1e-9: made exact */
        J->parent = (int)x[0];
        J->prismatic = x[1] == 1.0;
        for (int e = 0; e < 3; e++) J->k[e] = x[2 + e] / norm;
        memcpy(J->R0, x + 5, sizeof J->R0);
        memcpy(J->p0, x + 14, sizeof J->p0);
        J->m = x[17];
        memcpy(J->c, x + 18, sizeof J->c);
        memcpy(J->Ic, x + 21, sizeof J->Ic);
    }
    for (int r = 0; r < P->mc; r++) {
        const double *c = y + 1 + 4 * r;
        P->C[r] = (tree_mimic){(int)c[0], (int)c[1], c[2], c[3]};
    }
    return SYM_OK;
}

/* 1 <= n <= 4096; npar = 4 + 27 n + 4 m_c with 0 <= m_c < n, each read
 * only once it is known to be there (tree_mc); m = m_c constraints with
 * their S (zero) when m_c > 0.  The block holds the joints and the mimic
 * pairs; the scratch TREE_BODY + 2 doubles per body. */
SYM_BUILTIN_MAKE(sym_sys_tree,
                 .n_min = 1, .n_max = TREE_N_MAX, .npar = tree_npar(n, par, npar),
                 .check = tree_check,
                 .bytes = sizeof(tree_par) + (size_t)n * sizeof(tree_joint) +
                          (size_t)tree_mc0(n, par, npar) * sizeof(tree_mimic),
                 .fill = tree_fill, .eval = tree_eval, .scratch_size = TREE_SCRATCH(n),
                 .m = tree_mc0(n, par, npar),
                 .constraint = tree_mc0(n, par, npar) > 0 ? tree_constraint : NULL,
                 .flags = SYM_SYS_COSTLY_EVAL |
                          (tree_mc0(n, par, npar) > 0 ? SYM_SYS_CONSTRAINT_HESS : 0u))
