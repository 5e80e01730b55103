/*
 * py_integrate.c -- one integrate call on a prepared run (py_run_begin and
 * py_run_work done): its outputs, its observers (Ctrl-C, a cancellation event,
 * the progress report, the per-step hook, the multipliers), sym_integrate
 * with the GIL released when nothing in the loop is Python, and the result
 * -- or the exception, with the steps done so far and a note saying where
 * it happened.  Used by integrate (its entry point, at the end of this file)
 * and Work.integrate (py_work.c).
 */
#include "py_run.h"

#include <string.h>

typedef struct {
    PyThreadState *ts;   /* non-NULL while the GIL is released */
    PyObject *cancel;    /* object with is_set(), or NULL       */
    PyObject *report;    /* report(steps_done) (progress=True), or NULL */
    long checks;         /* progress checks so far (the report runs at every REPORT_EVERY-th) */
} progress_ctx;

/* The report rides every 16th Ctrl-C check: the checks come every ~0.1 ms of
 * work on the cheapest systems, the bar redraws at most every 0.2 s, and the
 * C-to-Python call per report is then well below 1 % of the run
 * (benchmarks/RESULTS.md section 15).  The caller reports the final count. */
#define REPORT_EVERY 16

/* Signals (Ctrl-C, in the main thread) and an optional cancellation event
 * (for worker threads, which never see signals). */
static int progress_check(progress_ctx *ctx)
{
    if (PyErr_CheckSignals()) return 1;
    if (ctx->cancel) {
        PyObject *r = PyObject_CallMethod(ctx->cancel, "is_set", NULL);
        if (!r) return 1;
        const int set = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (set < 0) return 1;
        if (set) {
            PyErr_SetString(PyExc_KeyboardInterrupt, "integration cancelled");
            return 1;
        }
    }
    return 0;
}

/* The progress report (progress=True): report(done); an exception stops. */
static int progress_report(progress_ctx *ctx, long done)
{
    if (!ctx->report || ++ctx->checks % REPORT_EVERY != 0) return 0;
    PyObject *r = PyObject_CallFunction(ctx->report, "l", done);
    Py_XDECREF(r);
    return r ? 0 : 1;
}

static int progress_cb(void *vctx, long done)
{
    progress_ctx *ctx = vctx;
    if (ctx->ts) PyEval_RestoreThread(ctx->ts);
    const int r = progress_check(ctx) || progress_report(ctx, done);
    if (ctx->ts) ctx->ts = PyEval_SaveThread();
    return r;
}

/* Steps between progress checks: every ~0.1 ms..10 ms of work; the step cost
 * grows with the square of the Newton size (s-1) n (cube for the LU). */
static long progress_every(const run *r)
{
    const int n = r->S->sys.n, nu = sym_method_unknowns(r->m, n);
    const long size = nu > 0 ? (long)nu : (long)n;
    long every = 20000 / (size * size);
    if (every > 512) every = 512;
    if (every < 1) every = 1;
    if (!r->S->nogil && every > 64) every = 64;
    return every;
}

/* Attach "where it happened" to the pending exception as a PEP 678 note,
 * leaving its type and message unchanged. */
static void add_note_where(const char *method, long step, double t, long n_steps, long done)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    char buf[64];
    snprintf(buf, sizeof buf, " (t = %.17g)", t);   /* no %g in PyUnicode_FromFormat */
    PyObject *note = value ? PyUnicode_FromFormat(
        "raised during symplectic.integrate (%s) at step %ld of %ld; %ld steps done%s",
        method, step, n_steps, done, buf) : NULL;
    if (note) {
        PyObject *r = PyObject_CallMethod(value, "add_note", "O", note);
        if (!r) {
            /* Python 3.10 has no add_note: keep a __notes__ list. */
            PyErr_Clear();
            PyObject *lst = PyList_New(1);
            if (lst) {
                Py_INCREF(note);
                PyList_SET_ITEM(lst, 0, note);
                if (PyObject_SetAttrString(value, "__notes__", lst) < 0) PyErr_Clear();
                Py_DECREF(lst);
            }
        }
        Py_XDECREF(r);
        Py_DECREF(note);
    }
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
}

/* Keep the work done before an exception (a callback's, or KeyboardInterrupt):
 * the arrays and the number of completed steps go on the pending exception
 * as `_symplectic_partial`; symplectic.integrate turns them into
 * `exc.trajectory`. */
static void attach_partial(PyObject *const out[5], long done, PyObject *extras)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && extras) {
        PyObject *part = Py_BuildValue("(OOOOOlO)", out[0], out[1], out[2], out[3], out[4],
                                       done, extras);
        if (!part || PyObject_SetAttrString(value, "_symplectic_partial", part) < 0)
            PyErr_Clear();
        Py_XDECREF(part);
    }
    Py_XDECREF(extras);
    PyErr_Restore(type, value, tb);
}

/* The optional output of the multipliers (a constrained system): a writeable
 * C-contiguous float64 array (rows - 1, s, m), filled in place -- row k - 1
 * the multipliers of the step that ends at stored row k (every step's with
 * store_every = 1). */
static double *multipliers_out(const run *r, PyObject *o, npy_intp nrows)
{
    double c[SYM_MAX_NODES];
    const int s = sym_method_nodes(r->m, c), m = r->S->sys.m;
    PyArrayObject *a = (PyArrayObject *)o;
    int ok = m > 0 && PyArray_Check(o) && PyArray_TYPE(a) == NPY_DOUBLE &&
             PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a) && PyArray_NDIM(a) == 3;
    ok = ok && PyArray_DIM(a, 0) == nrows && PyArray_DIM(a, 1) == s && PyArray_DIM(a, 2) == m;
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "multipliers must be a writeable C-contiguous float64 "
                     "array of shape (stored rows - 1, s, m) = (%ld, %d, %d) for a "
                     "constrained system", (long)nrows, s, m);
        return NULL;
    }
    return PyArray_DATA(a);
}

/* The tangent's arrays (sym_run.deriv.tangent): out a writeable C-contiguous
 * float64 array (rows, 2n, k), filled in place; at0 None (the identity,
 * k = 2n) or a C-contiguous float64 array (2n, k). */
static int tangent_args(const run *r, const run_call *c, sym_run_derivs *D, npy_intp nrows)
{
    if (c->tangent == Py_None) return 0;
    const npy_intp m = 2 * (npy_intp)r->S->sys.n;
    PyArrayObject *a = (PyArrayObject *)c->tangent, *a0 = (PyArrayObject *)c->tangent0;
    int ok = PyArray_Check(c->tangent) && PyArray_TYPE(a) == NPY_DOUBLE &&
             PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a) && PyArray_NDIM(a) == 3 &&
             PyArray_DIM(a, 0) == nrows && PyArray_DIM(a, 1) == m && PyArray_DIM(a, 2) >= 1 &&
             PyArray_DIM(a, 2) <= INT_MAX / m;
    const npy_intp k = ok ? PyArray_DIM(a, 2) : 0;
    if (ok && c->tangent0 == Py_None)
        ok = k == m;
    else if (ok)
        ok = PyArray_Check(c->tangent0) && PyArray_TYPE(a0) == NPY_DOUBLE &&
             PyArray_IS_C_CONTIGUOUS(a0) && PyArray_NDIM(a0) == 2 &&
             PyArray_DIM(a0, 0) == m && PyArray_DIM(a0, 1) == k;
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "tangent must be a writeable C-contiguous float64 array "
                     "of shape (stored rows, 2n, k) = (%ld, %ld, k), k = 2n unless tangent0 "
                     "(2n, k), C-contiguous float64, is given", (long)nrows, (long)m);
        return -1;
    }
    D->tangent = PyArray_DATA(a);
    D->tangent0 = c->tangent0 == Py_None ? NULL : PyArray_DATA(a0);
    D->tangent_cols = (int)k;
    return 0;
}

/* Each step's derivative (sym_run.deriv.jacobians): a writeable C-contiguous
 * float64 array (n_steps, 2n, 2n), or (n_steps, 2n, (2 + P) n) with the
 * columns of the force held over each step (a run with a force: P = 1, or
 * its hold_points; the core checks which). */
static int jacobians_arg(const run *r, const run_call *c, sym_run_derivs *D)
{
    if (c->jacobians == Py_None) return 0;
    const npy_intp n = r->S->sys.n, N = c->n_steps < 0 ? 0 : c->n_steps;
    PyArrayObject *a = (PyArrayObject *)c->jacobians;
    const int ok = PyArray_Check(c->jacobians) && PyArray_TYPE(a) == NPY_DOUBLE &&
                   PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a) && PyArray_NDIM(a) == 3 &&
                   PyArray_DIM(a, 0) == N && PyArray_DIM(a, 1) == 2 * n &&
                   PyArray_DIM(a, 2) >= 2 * n && PyArray_DIM(a, 2) % n == 0 &&
                   PyArray_DIM(a, 2) / n - 2 <= 64;
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "jacobians must be a writeable C-contiguous float64 array "
                     "of shape (n_steps, 2n, 2n) or (n_steps, 2n, (2 + P) n) = (%ld, %ld, %ld "
                     "or %ld + P %ld)", (long)N, (long)(2 * n), (long)(2 * n), (long)(2 * n),
                     (long)n);
        return -1;
    }
    D->jacobians = PyArray_DATA(a);
    D->jac_u = (int)(PyArray_DIM(a, 2) / n - 2);
    return 0;
}

/* Each step's derivative with respect to its size and start time
 * (sym_run.deriv.h_jacobians): a writeable C-contiguous float64 array
 * (n_steps, 2, 2n), or None. */
static int h_jacobians_arg(const run *r, const run_call *c, sym_run_derivs *D)
{
    if (c->h_jacobians == NULL || c->h_jacobians == Py_None) return 0;
    const npy_intp n = r->S->sys.n, N = c->n_steps < 0 ? 0 : c->n_steps;
    PyArrayObject *a = (PyArrayObject *)c->h_jacobians;
    if (!(PyArray_Check(c->h_jacobians) && PyArray_TYPE(a) == NPY_DOUBLE &&
          PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a) && PyArray_NDIM(a) == 3 &&
          PyArray_DIM(a, 0) == N && PyArray_DIM(a, 1) == 2 && PyArray_DIM(a, 2) == 2 * n)) {
        PyErr_Format(PyExc_ValueError, "h_jacobians must be a writeable C-contiguous float64 "
                     "array of shape (n_steps, 2, 2n) = (%ld, 2, %ld)", (long)N, (long)(2 * n));
        return -1;
    }
    D->h_jacobians = PyArray_DATA(a);
    return 0;
}

/* The states at the force points and their derivatives (sym_run.deriv.points): a
 * writeable C-contiguous float64 array (n_steps, r, 2n, 1 + c [+ 2]) with
 * c the columns of jacobians (after jacobians_arg) and 2 more with
 * h_jacobians, or None. */
static int points_arg(const run *r, const run_call *c, sym_run_derivs *D)
{
    if (c->points == NULL || c->points == Py_None) return 0;
    const npy_intp n = r->S->sys.n, N = c->n_steps < 0 ? 0 : c->n_steps;
    const npy_intp np = sym_method_force_points(r->m);
    const npy_intp ld = 1 + 2 * n + (npy_intp)D->jac_u * n + (D->h_jacobians ? 2 : 0);
    PyArrayObject *a = (PyArrayObject *)c->points;
    if (!(PyArray_Check(c->points) && PyArray_TYPE(a) == NPY_DOUBLE &&
          PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a) && PyArray_NDIM(a) == 4 &&
          PyArray_DIM(a, 0) == N && PyArray_DIM(a, 1) == np && PyArray_DIM(a, 2) == 2 * n &&
          PyArray_DIM(a, 3) == ld)) {
        PyErr_Format(PyExc_ValueError, "points must be a writeable C-contiguous float64 array "
                     "of shape (n_steps, r, 2n, 1 + c) = (%ld, %ld, %ld, %ld) (c: the columns "
                     "of jacobians, + 2 with h_jacobians)", (long)N, (long)np, (long)(2 * n),
                     (long)ld);
        return -1;
    }
    D->points = PyArray_DATA(a);
    return 0;
}

/* Each step's derivatives (jacobians, h_jacobians, points: their checks
 * above) into the run's derivatives D; -1 with an exception. */
int py_step_outputs(const run *r, const run_call *c, sym_run_derivs *D)
{
    return jacobians_arg(r, c, D) < 0 || h_jacobians_arg(r, c, D) < 0 ||
                   points_arg(r, c, D) < 0 ? -1 : 0;
}

/* What a run reports besides the arrays: (rows, stopped, (steps,
 * evaluations, iterations, factorizations, branch_checks, branch_fixes)). */
static PyObject *extras_tuple(const sym_run *R)
{
    const sym_counts *c = &R->report.counts;
    return Py_BuildValue("(li(llllll))", R->report.rows, R->report.stopped, c->steps, c->evaluations,
                         c->iterations, c->factorizations, c->branch_checks, c->branch_fixes);
}

/* The output arrays of n_steps steps: a MemoryError before allocating when
 * they cannot be addressed (their size: sym_run_output_bytes). */
int py_rows_fit(long n_steps, int n, int n_mid)
{
    if (sym_run_output_bytes(n_steps, 1, n, n_mid, 0, 0) > (double)NPY_MAX_INTP / 2) {
        PyErr_Format(PyExc_MemoryError,
                     "n_steps = %ld with n = %d needs more memory than can be addressed",
                     n_steps, n);
        return -1;
    }
    return 0;
}

/* The result of sym_integrate's status st: (t, q, p, q_mid, iterations,
 * n_done, failure) with failure None or (status, reason, step, t, iterations,
 * residual, residual_rel); or the exception, with the partial trajectory and
 * a note when a callback raised or the run was interrupted. */
static PyObject *integrate_result(const run *r, int st, PyObject *const out[5],
                                  const sym_run *R)
{
    const sym_run_report *rep = &R->report;
    const sym_failure *fail = &rep->failure;
    if (st == SYM_ECALLBACK || st == SYM_EINTERRUPT || PyErr_Occurred()) {
        if (st == SYM_ECALLBACK) py_force_raise_recorded(&r->force);
        py_raise_status(st, &r->call, NULL, NULL);
        add_note_where(r->m->name, fail->step, fail->t, R->n_steps, rep->done);
        PyObject *type, *value, *tb;      /* extras_tuple needs no exception pending */
        PyErr_Fetch(&type, &value, &tb);
        PyObject *ex = extras_tuple(R);
        if (!ex) PyErr_Clear();
        PyErr_Restore(type, value, tb);
        attach_partial(out, rep->done, ex);
        return NULL;
    }
    if (st == SYM_EINVAL && rep->invalid) {
        PyErr_Format(PyExc_ValueError, "integrate: invalid run argument (%s)", rep->invalid);
        return NULL;
    }
    if (st == SYM_ENOMEM || st == SYM_EINVAL || st == SYM_EMETHOD)
        return py_raise_work_status(st, r->S->sys.n, r->m);
    PyObject *ex = extras_tuple(R);
    if (!ex) return NULL;
    PyObject *ret;
    if (!st)
        ret = Py_BuildValue("(OOOOOlOO)", out[0], out[1], out[2], out[3], out[4], rep->done,
                            Py_None, ex);
    else
        ret = Py_BuildValue("(OOOOOl(isldidd)O)", out[0], out[1], out[2], out[3], out[4],
                            rep->done, st, sym_strerror(st), fail->step, fail->t,
                            fail->iterations, fail->residual, fail->residual_rel, ex);
    Py_DECREF(ex);
    return ret;
}

/* The per-step hook of integrate (events, output times): the step's data
 * are copied into the caller's buffer buf (rows q_k, the n_mid internal
 * nodes, q_{k+1}, p_k, p_{k+1}; n columns), then hook(k) is called with the
 * GIL held; a true result stops the run after this step. */
typedef struct {
    PyObject *fn;
    double *buf;
    int n, n_mid;
    progress_ctx *pc;   /* holds the released thread state */
} hook_ctx;

static int step_hook(void *vctx, long k, const double *q, const double *p, const double *qmid,
                     const double *q1, const double *p1)
{
    hook_ctx *hc = vctx;
    const size_t n = (size_t)hc->n, nm = (size_t)hc->n_mid;
    double *b = hc->buf;
    memcpy(b, q, sizeof(double) * n);
    if (nm) memcpy(b + n, qmid, sizeof(double) * nm * n);
    memcpy(b + (nm + 1) * n, q1, sizeof(double) * n);
    memcpy(b + (nm + 2) * n, p, sizeof(double) * n);
    memcpy(b + (nm + 3) * n, p1, sizeof(double) * n);
    if (hc->pc->ts) PyEval_RestoreThread(hc->pc->ts);
    PyObject *r = PyObject_CallFunction(hc->fn, "l", k);
    int ret = -1;
    if (r) {
        ret = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (ret > 0) ret = 1;
    }
    if (hc->pc->ts) hc->pc->ts = PyEval_SaveThread();
    return ret;
}

/* buf as a writable C-contiguous float64 array of `size` values, or NULL
 * with a ValueError naming it. */
double *py_hook_buffer(PyObject *buf, npy_intp size, const char *name)
{
    PyArrayObject *b = (PyArrayObject *)buf;
    if (!PyArray_Check(buf) || PyArray_TYPE(b) != NPY_DOUBLE || !PyArray_IS_C_CONTIGUOUS(b) ||
        !PyArray_ISWRITEABLE(b) || PyArray_SIZE(b) != size) {
        PyErr_Format(PyExc_ValueError, "%s must be a writable C-contiguous float64 array "
                     "of %zd values", name, (Py_ssize_t)size);
        return NULL;
    }
    return PyArray_DATA(b);
}

/* The observers of a call: hook a callable or None with
 * its buffer (float64, C-contiguous, writable, (n_mid + 4) n values), its
 * steps (None, or C longs increasing) and, for a run with a force, the
 * buffer of the step's work (None, or sym_run.obs.hook_force's 2 + 2n + m (3 + n)
 * values). */
static int observer_args(const run *r, const run_call *c, sym_run_observers *ob,
                         hook_ctx *hc)
{
    const int n = r->S->sys.n, nm = r->m->n_mid;
    if (c->hook == Py_None) return 0;
    if (!PyCallable_Check(c->hook)) {
        PyErr_SetString(PyExc_TypeError, "hook must be callable");
        return -1;
    }
    double *bd = py_hook_buffer(c->hook_buf, (npy_intp)(nm + 4) * n, "hook_buf");
    if (!bd) return -1;
    if (c->hook_force != Py_None) {
        const npy_intp m = sym_method_force_points(r->m);
        if (!(ob->hook_force = py_hook_buffer(c->hook_force, 2 + 2 * (npy_intp)n + m * (3 + n),
                                          "hook_force")))
            return -1;
    }
    if (c->hook_steps != Py_None) {
        PyArrayObject *sa = (PyArrayObject *)c->hook_steps;
        if (!PyArray_Check(c->hook_steps) || PyArray_TYPE(sa) != NPY_LONG ||
            PyArray_NDIM(sa) != 1 || !PyArray_IS_C_CONTIGUOUS(sa)) {
            PyErr_SetString(PyExc_ValueError, "hook_steps must be a 1-d C-contiguous array "
                            "of C longs");
            return -1;
        }
        const long *v = PyArray_DATA(sa);
        const npy_intp m = PyArray_SIZE(sa);
        for (npy_intp i = 1; i < m; i++)
            if (v[i] <= v[i - 1]) {
                PyErr_SetString(PyExc_ValueError, "hook_steps must be increasing");
                return -1;
            }
        ob->hook_steps = v;
        ob->n_hook_steps = (long)m;
    }
    hc->fn = c->hook;
    hc->buf = bd;
    hc->n = n;
    hc->n_mid = nm;
    ob->hook = step_hook;
    ob->hook_ctx = hc;
    return 0;
}

/* The run of one call c on the prepared run r (py_run_begin and py_run_work
 * done, py_rows_fit checked by the caller): the outputs, the GIL released when
 * nothing in the loop is Python, the result (integrate_result). */
PyObject *py_run_integrate(run *r, const run_call *c)
{
    PyObject *out[5] = {NULL}, *ret = NULL;   /* t, q, p, q_mid, iters */
    PyArrayObject *imp0 = NULL;
    progress_ctx ctx = {NULL, c->cancel == Py_None ? NULL : c->cancel,
                        c->report == Py_None ? NULL : c->report, 0};
    hook_ctx hc = {NULL, NULL, 0, 0, &ctx};
    py_params pp = {0};
    sym_run R = {.q0 = PyArray_DATA(c->q0), .p0 = PyArray_DATA(c->p0), .t0 = c->t0,
                 .h = c->h, .k0 = c->k0, .n_steps = c->n_steps,
                 .out = {.store_every = c->store_every, .work0 = c->work0}};
    sym_run_outputs *O = &R.out;
    if (observer_args(r, c, &R.obs, &hc) < 0) goto done;
    const int thin = c->store_every > 1;
    const npy_intp N = c->n_steps < 0 ? 0 : c->n_steps, n = r->S->sys.n;
    const npy_intp rows = sym_stored_rows(N, c->store_every);
    if (c->lam != Py_None && !(O->multipliers = multipliers_out(r, c->lam, rows - 1))) goto done;
    if (tangent_args(r, c, &R.deriv, rows) < 0 || py_step_outputs(r, c, &R.deriv) < 0)
        goto done;
    if (py_params_begin(r->module, r, c, rows, &pp) < 0)
        goto done;
    R.deriv.par = pp.active ? pp.par : NULL;
    if (c->impulse0 != Py_None) {
        if (!(imp0 = py_as_vector(c->impulse0, (int)n, "impulse0"))) goto done;
        O->impulse0 = PyArray_DATA(imp0);
    }
    const npy_intp dt = rows, dq[2] = {rows, n}, dm[3] = {N, r->m->n_mid, n}, di = rows - 1;
    if (!(out[0] = py_new_array(1, &dt, 0)) || !(out[1] = py_new_array(2, dq, 0)) ||
        !(out[2] = py_new_array(2, dq, 0)) ||
        !(out[3] = py_new_array(r->m->n_mid && !thin ? 3 : -1, dm, 1)) ||
        !(out[4] = PyArray_ZEROS(1, (npy_intp *)&di, NPY_INT, 0)))
        goto done;
    O->t = py_data_of(out[0]);
    O->q = py_data_of(out[1]);
    O->p = py_data_of(out[2]);
    O->qmid = py_data_of(out[3]);
    O->iters = PyArray_DATA((PyArrayObject *)out[4]);
    O->work = c->work ? PyArray_DATA(c->work) : NULL;
    O->impulse = c->impulse ? PyArray_DATA(c->impulse) : NULL;
    R.obs.progress = progress_cb;
    R.obs.progress_ctx = &ctx;
    R.obs.progress_every = progress_every(r);
    if (run_nogil(r) && (!pp.active || (pp.call.S->nogil && !pp.force.python)))
        ctx.ts = PyEval_SaveThread();
    const int st = sym_integrate(r->w, &R);
    if (ctx.ts) PyEval_RestoreThread(ctx.ts);
    if (st == SYM_ECALLBACK && pp.force.active) py_force_raise_recorded(&pp.force);
    ret = integrate_result(r, st, out, &R);
done:
    py_params_end(&pp);
    Py_XDECREF(imp0);
    for (int k = 0; k < 5; k++) Py_XDECREF(out[k]);
    return ret;
}

/* ------------------------------------------------------------------ */
/* integrate                                                            */
/* ------------------------------------------------------------------ */
/* integrate(system, q0, p0, h, n_steps, method, t0, rtol, max_iter, predictor,
 * chord, cancel, store_every=1, hook=None, hook_buf=None, hook_steps=None,
 * report=None, force=None, multipliers=None, hook_force=None, branch=0, tangent=None,
 * tangent0=None, jacobians=None, params=None, h_jacobians=None, points=None) -> (t, q, p,
 * q_mid, iters,
 * n_done, failure, (rows, stopped, counts)).  With store_every > 1 the arrays have
 * sym_stored_rows rows and q_mid is None (and so do a force's work and
 * impulse outputs); multipliers (a constrained system) is filled in place,
 * one row per stored row after the first, and so are tangent, one per stored
 * row (tangent_args), and jacobians, one per step (jacobians_arg); params: the
 * parameter sensitivities (py_params.c). */
PyObject *mod_integrate(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"system", "q0", "p0", "h", "n_steps", "method", "t0",
                             "rtol", "max_iter", "predictor", "chord", "cancel",
                             "store_every", "hook", "hook_buf", "hook_steps", "report", "force",
                             "multipliers", "hook_force", "branch", "tangent", "tangent0",
                             "jacobians", "params", "h_jacobians", "points", "solver", NULL};
    run r = {.method = "simpson", .predictor = 1, .force_in = Py_None};
    run_call c = {.store_every = 1, .cancel = Py_None, .hook = Py_None, .hook_buf = Py_None,
                  .hook_steps = Py_None, .report = Py_None, .lam = Py_None,
                  .hook_force = Py_None, .impulse0 = Py_None, .tangent = Py_None,
                  .tangent0 = Py_None, .jacobians = Py_None, .params = Py_None,
                  .h_jacobians = Py_None, .points = Py_None};
    PyObject *ret = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOdl|sddipiOlOOOOOOOiOOOOOOi", kwlist, &r.system,
                                     &r.q_in, &r.p_in, &r.h, &r.n_steps, &r.method, &r.t0,
                                     &r.rtol, &r.max_iter, &r.predictor, &r.chord, &c.cancel,
                                     &c.store_every, &c.hook, &c.hook_buf, &c.hook_steps,
                                     &c.report, &r.force_in, &c.lam, &c.hook_force, &r.branch,
                                     &c.tangent, &c.tangent0, &c.jacobians, &c.params,
                                     &c.h_jacobians, &c.points, &r.solver))
        return NULL;
    r.force_steps = r.n_steps < 0 ? 0 : r.n_steps;
    r.force_rows = sym_stored_rows(r.force_steps, c.store_every);
    /* memory before the workspace: a run whose arrays cannot be addressed allocates nothing */
    if (py_run_begin(module, &r, "q0", "p0") < 0 ||
        py_rows_fit(r.n_steps, r.S->sys.n, r.m->n_mid) < 0 || py_run_work(&r) < 0)
        goto done;
    c.q0 = r.q;
    c.p0 = r.p;
    c.h = r.h;
    c.t0 = r.t0;
    c.n_steps = r.n_steps;
    c.work = r.force.work;
    c.impulse = r.force.impulse;
    ret = py_run_integrate(&r, &c);
done:
    py_run_end(&r);
    return ret;
}
