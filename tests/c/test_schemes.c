/*
 * test_schemes.c -- a plain-C test of the schemes, driven by the registries
 * (compiled and run by tests/c_core/test_c_core.py with csrc/core/sym_*.c and without
 * the Python binding).  Every method of sym_method_at() and every built-in
 * of sym_builtin_at() is exercised, so a new row is picked up without a
 * change here.  The program prints one line per result; the pytest side
 * checks them.
 *
 *   method NAME ORDER SYMPLECTIC S N_MID UNKNOWNS(n=1)
 *   builtin NAME N M              (M: holonomic constraints, 0 for none)
 *   order KIND METHOD SYSTEM REGISTERED FITTED POINTS
 *       KIND pendulum:   the state after one exact period of the pendulum
 *                        (T = 4 K(sin(theta0/2)) / omega, K by the AGM);
 *            energy:     max |H - H0| over that period, H written out here;
 *            linear:     the state of the linear oscillator at t = 5 against
 *                        its modal solution (a 2 x 2 generalised eigenproblem
 *                        solved here);
 *            self:       max_k |y_N(t_k) - y_2N(t_k)| over [0, 2] for each
 *                        built-in's example (N and 2N steps);
 *       FITTED: least-squares slope of log(error) against log(h) over the
 *       four smallest step sizes h = T/N, N = N0 2^(k/2), whose error lies
 *       in [100 N eps, 1e-5] with N <= 20000 where that gives four (POINTS
 *       of them: fewer when fewer qualify).
 *   refused METHOD SYSTEM STATUS  a method without constraint support (rk4)
 *       on a constrained built-in: the status sym_integrate returned (instead
 *       of an order line)
 *   energy_fn SYSTEM MAXDIFF      sym_energy against H written out here
 *   error closed_form ...         only if the linear closed form's workspace
 *       (sym_work_new_linear) disagrees with Newton or accepts what it refuses
 *   alloc METHOD N NEWTON WORK STEPS NSTEPS ITERATIONS   (NEWTON: every mode)
 *       allocator calls (malloc, calloc, realloc, free) inside sym_work_new
 *       (WORK) and inside the sym_step calls (STEPS) of NSTEPS steps of the
 *       n-link chain, which took ITERATIONS Newton iterations in all (-1 for
 *       WORK and STEPS when the linker cannot count: no --wrap); n = 1 ... 300
 *       and, where 300 does not give it, the smallest n with a Newton system
 *       of more than 512 unknowns;
 *   done
 *
 * Compiled with -DSYM_COUNT_ALLOC and linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free, every
 * allocator call made by the core goes through the __wrap_ functions below.
 */
#include "symplectic.h"
#include "sym_builtins.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Allocation counting                                                  */
/* ------------------------------------------------------------------ */
static long alloc_calls = 0;
static int verbose = 0;   /* SYM_TEST_VERBOSE set: print every error */

#ifdef SYM_COUNT_ALLOC
void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);

void *__wrap_malloc(size_t size)
{
    alloc_calls++;
    return __real_malloc(size);
}

void *__wrap_calloc(size_t count, size_t size)
{
    alloc_calls++;
    return __real_calloc(count, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    alloc_calls++;
    return __real_realloc(p, size);
}

void __wrap_free(void *p)
{
    alloc_calls++;
    __real_free(p);
}
#define COUNTING 1
#else
#define COUNTING 0
#endif

/* ------------------------------------------------------------------ */
/* Running a method                                                     */
/* ------------------------------------------------------------------ */
typedef struct trajectory {
    int n;
    long steps;
    double *t, *q, *p;   /* (steps + 1) rows */
} trajectory;

/* N steps of size h from (q0, p0); SYM_OK or the failure status. */
static int run(const sym_system *sys, const sym_method *m, const double *q0, const double *p0,
               double h, long N, trajectory *tr)
{
    const size_t rows = (size_t)N + 1, n = (size_t)sys->n;
    tr->n = sys->n;
    tr->steps = N;
    tr->t = malloc(sizeof(double) * rows);
    tr->q = malloc(sizeof(double) * rows * n);
    tr->p = malloc(sizeof(double) * rows * n);
    if (!tr->t || !tr->q || !tr->p) return SYM_ENOMEM;
    int st = SYM_OK;
    sym_work *w = sym_work_new(sys, m, NULL, &st);
    if (!w) return st;
    sym_run R = {.q0 = q0, .p0 = p0, .h = h, .n_steps = N,
                 .out = {.t = tr->t, .q = tr->q, .p = tr->p}};
    st = sym_integrate(w, &R);
    sym_work_free(w);
    return st;
}

static void release(trajectory *tr)
{
    free(tr->t);
    free(tr->q);
    free(tr->p);
}

static double max_abs_diff(int n, const double *a, const double *b)
{
    double e = 0.0;
    for (int k = 0; k < n; k++)
        if (fabs(a[k] - b[k]) > e) e = fabs(a[k] - b[k]);
    return e;
}

/* ------------------------------------------------------------------ */
/* Problems with known answers                                          */
/* ------------------------------------------------------------------ */
typedef struct problem {
    const char *kind, *system;
    sym_system sys;
    const double *q0, *p0;
    double T;          /* time span of one run                          */
    long N0;           /* fewest steps tried                            */
    double ref[8];     /* problem data (exact values)                   */
} problem;

#define HALF_PI 1.57079632679489661923

/* Complete elliptic integral of the first kind, K(k) = pi / (2 AGM(1, k')). */
static double ellip_k(double k)
{
    double a = 1.0, b = sqrt(1.0 - k * k);
    for (int i = 0; i < 40 && fabs(a - b) > 1e-16 * a; i++) {
        const double an = 0.5 * (a + b);
        b = sqrt(a * b);
        a = an;
    }
    return HALF_PI / a;
}

/* The pendulum L = 1/2 m qdot^2 - m w^2 (1 - cos q): ref = {m, w, H0}. */
static double pendulum_H(const problem *pb, double q, double p)
{
    const double m = pb->ref[0], w = pb->ref[1];
    return p * p / (2.0 * m) + m * w * w * (1.0 - cos(q));
}

/* Errors of one run with N steps (status in *st). */
static double err_pendulum(const problem *pb, const sym_method *m, long N, int *st)
{
    trajectory tr;
    *st = run(&pb->sys, m, pb->q0, pb->p0, pb->T / (double)N, N, &tr);
    double e = 0.0;
    if (!*st) {
        const double dq = fabs(tr.q[N] - pb->q0[0]), dp = fabs(tr.p[N] - pb->p0[0]);
        e = dq > dp ? dq : dp;   /* one period: back at (q0, p0) */
    }
    release(&tr);
    return e;
}

static double err_energy(const problem *pb, const sym_method *m, long N, int *st)
{
    trajectory tr;
    *st = run(&pb->sys, m, pb->q0, pb->p0, pb->T / (double)N, N, &tr);
    double e = 0.0;
    for (long k = 0; !*st && k <= N; k++) {
        const double d = fabs(pendulum_H(pb, tr.q[k], tr.p[k]) - pb->ref[2]);
        if (d > e) e = d;
    }
    release(&tr);
    return e;
}

/*
 * The linear oscillator M qdd + K q = 0 (2 x 2): with K v = lambda M v,
 * v^T M v = 1, the modes q(t) = sum_j v_j (a_j cos w_j t + b_j sin w_j t / w_j),
 * a_j = v_j^T M q0, b_j = v_j^T p0, w_j = sqrt(lambda_j); p = M qdot.
 */
static void linear_exact(const double *M, const double *K, const double *q0, const double *p0,
                         double t, double *q, double *p)
{
    /* det(K - lambda M) = 0: A lambda^2 + B lambda + C = 0 */
    const double A = M[0] * M[3] - M[1] * M[2];
    const double B = -(K[0] * M[3] + K[3] * M[0] - K[1] * M[2] - K[2] * M[1]);
    const double C = K[0] * K[3] - K[1] * K[2];
    const double disc = sqrt(B * B - 4.0 * A * C);
    const double lam[2] = {(-B - disc) / (2.0 * A), (-B + disc) / (2.0 * A)};
    double qd[2] = {0.0, 0.0};
    q[0] = q[1] = 0.0;
    for (int j = 0; j < 2; j++) {
        /* (K - lambda M) v = 0 from its first row */
        double v[2] = {-(K[1] - lam[j] * M[1]), K[0] - lam[j] * M[0]};
        const double nrm = sqrt(v[0] * (M[0] * v[0] + M[1] * v[1]) + v[1] * (M[2] * v[0] + M[3] * v[1]));
        v[0] /= nrm;
        v[1] /= nrm;
        const double a = v[0] * (M[0] * q0[0] + M[1] * q0[1]) + v[1] * (M[2] * q0[0] + M[3] * q0[1]);
        const double b = v[0] * p0[0] + v[1] * p0[1], w = sqrt(lam[j]);
        const double c = a * cos(w * t) + b * sin(w * t) / w;
        const double cd = -a * w * sin(w * t) + b * cos(w * t);
        for (int k = 0; k < 2; k++) { q[k] += v[k] * c; qd[k] += v[k] * cd; }
    }
    p[0] = M[0] * qd[0] + M[1] * qd[1];
    p[1] = M[2] * qd[0] + M[3] * qd[1];
}

static double err_linear(const problem *pb, const sym_method *m, long N, int *st)
{
    trajectory tr;
    *st = run(&pb->sys, m, pb->q0, pb->p0, pb->T / (double)N, N, &tr);
    double e = 0.0;
    if (!*st) {
        double q[2], p[2];
        linear_exact(pb->ref, pb->ref + 4, pb->q0, pb->p0, pb->T, q, p);
        const double eq = max_abs_diff(2, tr.q + 2 * N, q), ep = max_abs_diff(2, tr.p + 2 * N, p);
        e = eq > ep ? eq : ep;
    }
    release(&tr);
    return e;
}

/* Self-convergence: max_k |y_N(t_k) - y_2N(t_k)| over the coarse run's
 * times (the same order as the error; the maximum over the run does not
 * hinge on one time where the error's leading term happens to be small). */
static double err_self(const problem *pb, const sym_method *m, long N, int *st)
{
    trajectory a, b;
    const int n = pb->sys.n;
    *st = run(&pb->sys, m, pb->q0, pb->p0, pb->T / (double)N, N, &a);
    int st2 = run(&pb->sys, m, pb->q0, pb->p0, pb->T / (double)(2 * N), 2 * N, &b);
    if (!*st) *st = st2;
    double e = 0.0;
    for (long k = 0; !*st && k <= N; k++) {
        const double eq = max_abs_diff(n, a.q + (size_t)k * n, b.q + (size_t)2 * k * n);
        const double ep = max_abs_diff(n, a.p + (size_t)k * n, b.p + (size_t)2 * k * n);
        if (eq > e) e = eq;
        if (ep > e) e = ep;
    }
    release(&a);
    release(&b);
    return e;
}

typedef double (*error_fn)(const problem *pb, const sym_method *m, long N, int *st);

/* The asymptotic range: errors below ERR_HI and above rounding, which
 * grows with the number of steps (ERR_FLOOR N eps); beyond ENOUGH_STEPS
 * (low orders) the points already in it suffice. */
#define ERR_HI 1e-5
#define ERR_FLOOR 100.0
#define ENOUGH_STEPS 20000L
#define FIT_POINTS 4
#define MAX_STEPS 200000L

/* The fitted order over the FIT_POINTS smallest step sizes whose error
 * lies in the asymptotic range, and the number of points it rests on. */
static double fit_order(const problem *pb, const sym_method *m, error_fn err, int *points)
{
    double x[FIT_POINTS], y[FIT_POINTS];
    int k = 0;
    for (int j = 0;; j++) {
        const long N = lround((double)pb->N0 * pow(2.0, 0.5 * j));
        if (N > MAX_STEPS) break;
        int st;
        const double e = err(pb, m, N, &st);
        if (verbose) printf("# %s %s %s N=%ld st=%d e=%.3e\n", pb->kind, m->name, pb->system, N, st, e);
        if (st) continue;   /* no convergence at this large h: try smaller */
        if (e < ERR_FLOOR * (double)N * DBL_EPSILON) break;
        if (e <= ERR_HI) {
            x[k % FIT_POINTS] = log(pb->T / (double)N);
            y[k % FIT_POINTS] = log(e);
            k++;
        }
        if (k >= FIT_POINTS && N > ENOUGH_STEPS) break;
    }
    *points = k < FIT_POINTS ? k : FIT_POINTS;
    const int np = *points;
    if (np < 2) return NAN;
    double mx = 0.0, my = 0.0, sxy = 0.0, sxx = 0.0;
    for (int i = 0; i < np; i++) { mx += x[i] / np; my += y[i] / np; }
    for (int i = 0; i < np; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
    }
    return sxy / sxx;
}

static void report_order(const problem *pb, const sym_method *m, error_fn err)
{
    int points;
    const double p = fit_order(pb, m, err, &points);
    printf("order %s %s %s %d %.4f %d\n", pb->kind, m->name, pb->system, m->order, p, points);
}

/* ------------------------------------------------------------------ */
/* The tests                                                            */
/* ------------------------------------------------------------------ */
static int make(const char *name, int n, const double *par, size_t npar, sym_system *sys)
{
    const int st = sym_builtin_make(name, n, par, npar, sys);
    if (st) printf("error make %s %s\n", name, sym_strerror(st));
    return st;
}

static void pendulum_orders(void)
{
    /* from the bottom with amplitude theta0 = 2: p0 = 2 m w sin(theta0 / 2) */
    static const double par[2] = {1.0, 1.0}, q0[1] = {0.0}, p0[1] = {1.682941969615793};
    problem pb = {"pendulum", "pendulum", {0}, q0, p0, 0.0, 2, {0}};
    if (make("pendulum", 1, par, 2, &pb.sys)) return;
    pb.T = 4.0 * ellip_k(sin(1.0)) / par[1];
    pb.ref[0] = par[0];
    pb.ref[1] = par[1];
    pb.ref[2] = pendulum_H(&pb, q0[0], p0[0]);
    /* sym_energy against H written out here, at a few states */
    double *scratch = malloc(sizeof(double) * sym_energy_scratch_size(&pb.sys)), dmax = 0.0;
    for (int k = 0; k < 5; k++) {
        const double q = -2.0 + 1.1 * k, p = 0.7 - 0.4 * k;
        double H;
        if (sym_energy(&pb.sys, &q, &p, &H, scratch)) dmax = INFINITY;
        else if (fabs(H - pendulum_H(&pb, q, p)) > dmax) dmax = fabs(H - pendulum_H(&pb, q, p));
    }
    free(scratch);
    printf("energy_fn pendulum %.3e\n", dmax);
    for (int i = 0; i < sym_method_count(); i++) {
        pb.kind = "pendulum";
        report_order(&pb, sym_method_at(i), err_pendulum);
        pb.kind = "energy";
        report_order(&pb, sym_method_at(i), err_energy);
    }
    sym_builtin_free(&pb.sys);
}

static void linear_orders(void)
{
    static const double par[8] = {2.0, 0.5, 0.5, 1.0, 3.0, -1.0, -1.0, 2.0};
    static const double q0[2] = {0.4, -0.2}, p0[2] = {0.1, 0.3};
    problem pb = {"linear", "linear", {0}, q0, p0, 5.0, 2, {0}};
    if (make("linear", 2, par, 8, &pb.sys)) return;
    memcpy(pb.ref, par, sizeof(par));
    for (int i = 0; i < sym_method_count(); i++) report_order(&pb, sym_method_at(i), err_linear);
    sym_builtin_free(&pb.sys);
}

static void self_orders(void)
{
    for (int b = 0; b < sym_builtin_count(); b++) {
        const sym_builtin *B = sym_builtin_at(b);
        problem pb = {"self", B->name, {0}, B->ex_q0, B->ex_p0, 2.0, 2, {0}};
        if (make(B->name, B->ex_n, B->ex_par, B->ex_npar, &pb.sys)) continue;
        printf("builtin %s %d %d\n", B->name, B->ex_n, pb.sys.m);
        for (int i = 0; i < sym_method_count(); i++) {
            const sym_method *m = sym_method_at(i);
            if (pb.sys.m > 0 && !sym_method_constrained(m)) {
                trajectory tr;
                const int st = run(&pb.sys, m, pb.q0, pb.p0, 0.01, 10, &tr);
                release(&tr);
                printf("refused %s %s %d\n", m->name, B->name, st);
                continue;
            }
            report_order(&pb, m, err_self);
        }
        sym_builtin_free(&pb.sys);
    }
}

/* Allocator calls inside sym_work_new and inside `steps` sym_step calls. */
/* The closed form's workspace (sym_work_new_linear) on the scalar oscillator
 * L = 1/2 m qdot^2 - 1/2 k q^2 with the implicit midpoint rule, whose one-step
 * map on z = (q, p) is Phi = (I - h F/2)^{-1} (I + h F/2), F = [[0, 1/m],
 * [-k, 0]] (formed here): its steps against the Newton steps of the same
 * method on the linear built-in (agreement to rounding over 200 steps), a
 * step of another size refused and named, a force refused (that a Newton
 * workspace accepts).  Prints only
 * "error closed_form ..." lines. */
static void closed_form(void)
{
    const double m = 2.0, k = 3.0, h = 0.1;
    const double par[2] = {m, k}, q0[1] = {0.4}, p0[1] = {-0.3};
    const double a = h / (2.0 * m), b = h * k / 2.0, det = 1.0 + a * b;
    /* (I - hF/2)^{-1} = [[1, a], [-b, 1]] / det; times (I + hF/2) = [[1, a], [-b, 1]] */
    const double Phi[4] = {(1.0 - a * b) / det, 2.0 * a / det, -2.0 * b / det,
                           (1.0 - a * b) / det};
    const double D[4] = {Phi[0] - 1.0, Phi[1], Phi[2], Phi[3] - 1.0};
    const sym_method *mp = sym_method_find("midpoint");
    sym_system sys;
    if (!mp || make("linear", 1, par, 2, &sys)) {
        printf("error closed_form setup\n");
        return;
    }
    int st;
    sym_work *w = sym_work_new_linear(&sys, mp, h, D, NULL, &st);
    sym_work *sw = sym_work_new(&sys, mp, NULL, &st);   /* takes the force refused by w */
    trajectory ref = {0};
    if (!w || !sw) {
        printf("error closed_form sym_work_new(_linear) %s\n", sym_strerror(st));
    } else if ((st = run(&sys, mp, q0, p0, h, 200, &ref)) != SYM_OK) {
        printf("error closed_form newton %s\n", sym_strerror(st));
    } else {
        double t[201], q[201], p[201];
        sym_run R = {.q0 = q0, .p0 = p0, .h = h, .n_steps = 200, .out = {.t = t, .q = q, .p = p}};
        st = sym_integrate(w, &R);
        const double dq = max_abs_diff(201, q, ref.q), dp = max_abs_diff(201, p, ref.p);
        if (st || R.report.rows != 201 || !(dq < 1e-13) || !(dp < 1e-13))
            printf("error closed_form run %s rows %ld dq %.3g dp %.3g\n", sym_strerror(st),
                   R.report.rows, dq, dp);
        double q1, p1;
        st = sym_step(w, q0, p0, 2.0 * h, &q1, &p1, NULL, NULL);
        const char *bad = sym_work_invalid(w);
        if (st != SYM_EINVAL || !bad || strcmp(bad, "h") != 0)
            printf("error closed_form another h: %s\n", sym_strerror(st));
        static const double damping[1] = {0.5};
        const sym_force f = {.damping = damping};
        if (sym_work_set_force(w, &f) != SYM_EINVAL || sym_work_set_force(sw, &f) != SYM_OK)
            printf("error closed_form a force was accepted\n");
    }
    release(&ref);
    sym_work_free(w);
    sym_work_free(sw);
    sym_builtin_free(&sys);
}

static void alloc_counts(const sym_method *m, int n, int newton, int steps)
{
    double *par = malloc(sizeof(double) * (2 * (size_t)n + 1));
    double *q = malloc(sizeof(double) * 2 * (size_t)n), *p = malloc(sizeof(double) * 2 * (size_t)n);
    double *qmid = malloc(sizeof(double) * (size_t)(m->n_mid + 1) * (size_t)n);
    for (int i = 0; i < n; i++) {
        par[i] = 1.0;
        par[n + i] = 1.0;
        q[i] = 0.5 * sin(1.3 * i);
        p[i] = 0.0;
    }
    par[2 * n] = 9.81;
    sym_system sys;
    if (make("pendulum_chain", n, par, 2 * (size_t)n + 1, &sys)) return;
    sym_options opt;
    sym_options_default(&opt);
    opt.newton = newton;
    int st;
    long before = alloc_calls;
    sym_work *w = sym_work_new(&sys, m, &opt, &st);
    const long in_work = alloc_calls - before;
    long in_steps = 0, iters = 0;
    sym_step_info info;
    for (int k = 0; w && !st && k < steps; k++) {
        double *q0 = q + (size_t)(k % 2) * n, *p0 = p + (size_t)(k % 2) * n;
        double *q1 = q + (size_t)((k + 1) % 2) * n, *p1 = p + (size_t)((k + 1) % 2) * n;
        before = alloc_calls;
        st = sym_step(w, q0, p0, 0.01, q1, p1, qmid, &info);
        in_steps += alloc_calls - before;
        iters += info.iterations;
    }
    if (st) printf("error step %s n=%d %s\n", m->name, n, sym_strerror(st));
    static const char *const modes[] = {"full", "chord", "step", "decoupled", "auto"};
    printf("alloc %s %d %s %ld %ld %d %ld\n", m->name, n, modes[newton],
           COUNTING ? in_work : -1L, COUNTING ? in_steps : -1L, steps, iters);
    sym_work_free(w);
    sym_builtin_free(&sys);
    free(par);
    free(q);
    free(p);
    free(qmid);
}

/* A force held at each force point (hold_points = P): the core refuses a
 * count other than the method's and jacobians whose u columns do not match;
 * equal values at every point are the zero-order hold, bitwise, and the P
 * blocks of d(q1, p1)/du_i sum to the held force's column (the step is
 * linear in u at the root: sum_i B_i = B). */
static void held_points(void)
{
    enum { N = 4 };
    const double par[2] = {1.0, 6.283185307179586}, q0[1] = {0.9}, p0[1] = {0.2}, h = 0.05;
    sym_system sys;
    if (make("pendulum", 1, par, 2, &sys)) return;
    for (int i = 0; i < sym_method_count(); i++) {
        const sym_method *m = sym_method_at(i);
        const int P = sym_method_force_points(m);
        double u1[N], uP[N * 8], t1[N + 1], q1[N + 1], p1[N + 1], tP[N + 1], qP[N + 1], pP[N + 1];
        double j1[N * 2 * 3], jP[N * 2 * 10], x[8], b[8];
        for (int k = 0; k < N; k++) {
            u1[k] = 0.3 * k - 0.5;
            for (int a = 0; a < P; a++) uP[k * P + a] = u1[k];
        }
        int st;
        sym_work *w = sym_work_new(&sys, m, NULL, &st);
        if (!w) {
            printf("error held_points %s sym_work_new %s\n", m->name, sym_strerror(st));
            continue;
        }
        const sym_force bad = {.hold = uP, .hold_rows = N, .hold_points = P + 1};
        const sym_force f1 = {.hold = u1, .hold_rows = N};
        const sym_force fP = {.hold = uP, .hold_rows = N, .hold_points = P};
        if (sym_method_force_quadrature(m, x, b) != P || !(b[0] > 0.0) || x[P - 1] > 1.0)
            printf("error held_points %s quadrature\n", m->name);
        if (sym_work_set_force(w, &bad) != SYM_EINVAL)
            printf("error held_points %s accepted %d points\n", m->name, P + 1);
        sym_run R1 = {.q0 = q0, .p0 = p0, .h = h, .n_steps = N, .out = {.t = t1, .q = q1, .p = p1},
                      .deriv = {.jacobians = j1, .jac_u = 1}};
        sym_run RP = {.q0 = q0, .p0 = p0, .h = h, .n_steps = N, .out = {.t = tP, .q = qP, .p = pP},
                      .deriv = {.jacobians = jP, .jac_u = 1}};
        int s1 = sym_work_set_force(w, &f1), sP = SYM_OK;
        if (!s1) s1 = sym_integrate(w, &R1);
        if (!s1) s1 = sym_work_set_force(w, &fP);
        const int refused = s1 ? SYM_OK : sym_integrate(w, &RP);   /* jac_u 1 with P values */
        if (!s1 && P > 1 && (refused != SYM_EINVAL || !RP.report.invalid ||
                           strcmp(RP.report.invalid, "jac_u")))
            printf("error held_points %s jac_u = 1 accepted with %d values\n", m->name, P);
        RP.deriv.jac_u = P;
        if (!s1) sP = sym_integrate(w, &RP);
        double dq = max_abs_diff(N + 1, q1, qP), dp = max_abs_diff(N + 1, p1, pP), du = 0.0;
        for (int k = 0; !s1 && !sP && k < N; k++)
            for (int r = 0; r < 2; r++) {
                double sum = 0.0;
                for (int a = 0; a < P; a++) sum += jP[(k * 2 + r) * (2 + P) + 2 + a];
                const double d = fabs(sum - j1[(k * 2 + r) * 3 + 2]);
                if (d > du) du = d;
            }
        /* each block against central differences of one step in its point's value */
        double dfd = 0.0;
        for (int a = 0; !s1 && !sP && a < P; a++) {
            const double e = 1e-5, u0 = uP[a];
            double tt[2], qq[2], pp[2], yp[2] = {0.0, 0.0};
            for (int sgn = 1; sgn >= -1; sgn -= 2) {
                uP[a] = u0 + sgn * e;   /* the force reads uP itself */
                sym_run R = {.q0 = q0, .p0 = p0, .h = h, .n_steps = 1,
                             .out = {.t = tt, .q = qq, .p = pp}};
                if ((sP = sym_integrate(w, &R))) break;
                yp[0] += sgn * qq[1] / (2.0 * e);
                yp[1] += sgn * pp[1] / (2.0 * e);
            }
            uP[a] = u0;
            for (int r = 0; r < 2; r++) {
                const double d = fabs(yp[r] - jP[r * (2 + P) + 2 + a]);
                if (d > dfd) dfd = d;
            }
        }
        if (s1 || sP || dq != 0.0 || dp != 0.0 || !(du < 1e-13) || !(dfd < 1e-9))
            printf("error held_points %s %s %s dq %.3g dp %.3g du %.3g fd %.3g\n", m->name,
                   sym_strerror(s1), sym_strerror(sP), dq, dp, du, dfd);
        sym_work_free(w);
    }
    sym_builtin_free(&sys);
}

int main(void)
{
    verbose = getenv("SYM_TEST_VERBOSE") != NULL;
    static const int sizes[] = {1, 2, 3, 4, 5, 8, 17, 64, 300};
    for (int i = 0; i < sym_method_count(); i++) {
        const sym_method *m = sym_method_at(i);
        double c[SYM_MAX_NODES];
        printf("method %s %d %d %d %d %d\n", m->name, m->order, m->symplectic,
               sym_method_nodes(m, c), m->n_mid, sym_method_unknowns(m, 1));
    }
    pendulum_orders();
    linear_orders();
    closed_form();
    held_points();
    self_orders();
    for (int i = 0; i < sym_method_count(); i++) {
        const sym_method *m = sym_method_at(i);
        /* and the smallest n whose Newton system exceeds 512 unknowns */
        const int u = sym_method_unknowns(m, 1), big = u ? 512 / u + 1 : 0;
        for (size_t j = 0; j <= sizeof(sizes) / sizeof(sizes[0]); j++) {
            const int n = j < sizeof(sizes) / sizeof(sizes[0]) ? sizes[j] : big;
            if (n < 1 || (j == sizeof(sizes) / sizeof(sizes[0]) && big <= 300)) continue;
            for (int newton = SYM_NEWTON_FULL; newton <= SYM_NEWTON_AUTO; newton++)
                alloc_counts(m, n, newton, n > 100 ? 2 : 6);
        }
    }
    printf("done\n");
    return 0;
}
