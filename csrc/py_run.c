/*
 * py_run.c -- the run entry points of symplectic._core: step, integrate,
 * newton_system and step_tangent.
 *
 * Each parses its arguments and passes them through one prologue
 * (run_begin: the system, the method, h, the state (q, p), the options and
 * the call's py_call record) and one epilogue (run_end).  Systems without
 * Python in the loop run with the GIL released; integrate checks for Ctrl-C
 * (and an optional cancellation event) every few hundred steps, and an
 * exception raised during it carries the steps done so far and a note
 * saying where it happened.
 */
#include "py_core.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The prologue shared by the entry points                              */
/* ------------------------------------------------------------------ */
typedef struct run run;

struct run {
    /* in: the parsed arguments (defaults set by the entry point) */
    PyObject *system, *q_in, *p_in;
    double h, rtol, t0;
    const char *method;
    int max_iter, predictor, chord;
    long n_steps;
    int (*check)(const run *r);   /* NULL, or the entry point's own checks */
    /* out: checked and converted (released by run_end) */
    SystemObject *S;
    const sym_method *m;
    PyArrayObject *q, *p;
    sym_options opt;
    py_call call;
    sym_work *w;                  /* run_work */
};

static SystemObject *get_system(PyObject *module, PyObject *o)
{
    module_state *ms = PyModule_GetState(module);
    if (!PyObject_TypeCheck(o, ms->System_type)) {
        PyErr_Format(PyExc_TypeError, "system must be a symplectic.System, got %S",
                     (PyObject *)Py_TYPE(o));
        return NULL;
    }
    return (SystemObject *)o;
}

static const sym_method *get_method(const char *name)
{
    const sym_method *m = sym_method_find(name);
    if (!m) {
        PyObject *names = PyList_New(0);
        for (int i = 0; names && i < sym_method_count(); i++) {
            PyObject *s = PyUnicode_FromString(sym_method_at(i)->name);
            if (!s || PyList_Append(names, s) < 0) { Py_XDECREF(s); Py_CLEAR(names); break; }
            Py_DECREF(s);
        }
        if (names) {
            PyErr_Format(PyExc_ValueError, "unknown method '%s'; available: %S", name, names);
            Py_DECREF(names);
        }
    }
    return m;
}

/* Check and convert r's inputs in the order the errors are reported: the
 * system, the method, h, the entry point's own checks, q and p (named qname,
 * pname); then start the call.  -1 with an exception; run_end follows
 * either way.  The call starts last, so a failed check never runs a
 * callback. */
static int run_begin(PyObject *module, run *r, const char *qname, const char *pname)
{
    memset(&r->call, 0, sizeof(r->call));
    if (!(r->S = get_system(module, r->system)) || py_system_ready(r->S) < 0) return -1;
    if (!(r->m = get_method(r->method))) return -1;
    if (!isfinite(r->h) || r->h == 0.0) {
        PyObject *ho = PyFloat_FromDouble(r->h);
        if (ho) PyErr_Format(PyExc_ValueError, "h must be finite and nonzero, got %R", ho);
        Py_XDECREF(ho);
        return -1;
    }
    if (r->check && r->check(r) < 0) return -1;
    const int n = r->S->sys.n;
    if (!(r->q = py_as_vector(r->q_in, n, qname))) return -1;
    if (!(r->p = py_as_vector(r->p_in, n, pname))) return -1;
    /* the number of constraints of Python callables, from g(q) */
    if (py_constraint_resolve(r->S, PyArray_DATA(r->q)) < 0) return -1;
    sym_options_default(&r->opt);
    r->opt.rtol = r->rtol;
    r->opt.max_iter = r->max_iter;
    r->opt.predictor = r->predictor;
    /* chord: 0 full, 1 chord, 2 per step (the enum's values; checked by the core) */
    r->opt.newton = r->chord;
    return py_call_begin(r->S, &r->call);
}

/* The workspace of one step (step, step_tangent, newton_system). */
static int run_work(run *r)
{
    int st = SYM_OK;
    r->w = sym_work_new(&r->call.sys, r->m, &r->opt, &st);
    if (r->w) return 0;
    py_raise_work_status(st, r->S->sys.n, r->m);
    return -1;
}

static void run_end(run *r)
{
    if (r->w) sym_work_free(r->w);
    r->w = NULL;
    py_call_end(&r->call);
    Py_CLEAR(r->q);
    Py_CLEAR(r->p);
}

/* A new float64 array of nd dimensions (zeroed if zero), or None for nd < 0
 * (an output the method does not have). */
static PyObject *new_array(int nd, const npy_intp *dims, int zero)
{
    if (nd < 0) Py_RETURN_NONE;
    return zero ? PyArray_ZEROS(nd, (npy_intp *)dims, NPY_DOUBLE, 0)
                : PyArray_SimpleNew(nd, (npy_intp *)dims, NPY_DOUBLE);
}

static double *data_of(PyObject *a)
{
    return a == Py_None ? NULL : PyArray_DATA((PyArrayObject *)a);
}

/* ------------------------------------------------------------------ */
/* step (and step_tangent, which takes the same arguments)              */
/* ------------------------------------------------------------------ */
/* Parse (system, q, p, h, method='simpson', rtol=0, max_iter=0), run the
 * prologue, make the workspace and the outputs q1, p1 and a third one:
 * the tangent map D (2n, 2n), or q_mid (n_mid, n) (None without internal
 * nodes).  -1 with an exception; one_step_end follows either way. */
static int one_step_begin(PyObject *module, PyObject *args, PyObject *kw, run *r,
                          PyObject *out[3], int tangent)
{
    static char *kwlist[] = {"system", "q", "p", "h", "method", "rtol", "max_iter", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOd|sdi", kwlist, &r->system, &r->q_in,
                                     &r->p_in, &r->h, &r->method, &r->rtol, &r->max_iter))
        return -1;
    if (run_begin(module, r, "q", "p") < 0 || run_work(r) < 0) return -1;
    const npy_intp n = r->S->sys.n, nm = r->m->n_mid;
    const npy_intp d3[2] = {tangent ? 2 * n : nm, tangent ? 2 * n : n};
    if (!(out[0] = new_array(1, &n, 0)) || !(out[1] = new_array(1, &n, 0)) ||
        !(out[2] = new_array(tangent || nm ? 2 : -1, d3, 0)))
        return -1;
    return 0;
}

static void one_step_end(run *r, PyObject *out[3])
{
    run_end(r);
    for (int k = 0; k < 3; k++) Py_XDECREF(out[k]);
}

/* step(system, q, p, h, method, rtol, max_iter) -> (q1, p1, q_mid, status,
 * iterations, residual, residual_rel, update, reason) */
PyObject *mod_step(PyObject *module, PyObject *args, PyObject *kw)
{
    run r = {.method = "simpson", .predictor = 1};
    PyObject *out[3] = {NULL}, *ret = NULL;   /* q1, p1, q_mid */
    if (one_step_begin(module, args, kw, &r, out, 0) < 0) goto done;
    sym_step_info info = {0};
    PyThreadState *ts = r.S->nogil ? PyEval_SaveThread() : NULL;
    const int st = sym_step(r.w, PyArray_DATA(r.q), PyArray_DATA(r.p), r.h, data_of(out[0]),
                            data_of(out[1]), data_of(out[2]), &info);
    if (ts) PyEval_RestoreThread(ts);
    /* a failed step is a status in the result (symplectic.step raises
     * ConvergenceError); a callback's failure is an exception */
    if (st == SYM_ECALLBACK || (st && PyErr_Occurred())) {
        py_raise_status(st, &r.call, NULL, NULL);
        goto done;
    }
    ret = Py_BuildValue("(OOOiiddds)", out[0], out[1], out[2], st, info.iterations,
                        info.residual, info.residual_rel, info.update,
                        st ? sym_strerror(st) : "");
done:
    one_step_end(&r, out);
    return ret;
}

/* ------------------------------------------------------------------ */
/* integrate                                                            */
/* ------------------------------------------------------------------ */
typedef struct {
    PyThreadState *ts;   /* non-NULL while the GIL is released */
    PyObject *cancel;    /* object with is_set(), or NULL       */
} progress_ctx;

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

static int progress_cb(void *vctx, long done)
{
    progress_ctx *ctx = vctx;
    (void)done;
    if (ctx->ts) PyEval_RestoreThread(ctx->ts);
    const int r = progress_check(ctx);
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
static void attach_partial(PyObject *const out[5], long done)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value) {
        PyObject *part = Py_BuildValue("(OOOOOl)", out[0], out[1], out[2], out[3], out[4], done);
        if (!part || PyObject_SetAttrString(value, "_symplectic_partial", part) < 0)
            PyErr_Clear();
        Py_XDECREF(part);
    }
    PyErr_Restore(type, value, tb);
}

/* The optional output of each step's multipliers (a constrained system): a
 * writeable C-contiguous float64 array (n_steps, s, m), filled in place. */
static int multipliers_out(run *r, PyObject *o)
{
    double c[SYM_MAX_NODES];
    const int s = sym_method_nodes(r->m, c), m = r->S->sys.m;
    PyArrayObject *a = (PyArrayObject *)o;
    int ok = m > 0 && PyArray_Check(o) && PyArray_TYPE(a) == NPY_DOUBLE &&
             PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a) && PyArray_NDIM(a) == 3;
    ok = ok && PyArray_DIM(a, 0) == r->n_steps && PyArray_DIM(a, 1) == s && PyArray_DIM(a, 2) == m;
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "multipliers must be a writeable C-contiguous float64 "
                     "array of shape (n_steps, s, m) = (%ld, %d, %d) for a constrained system",
                     r->n_steps, s, m);
        return -1;
    }
    r->opt.multipliers = PyArray_DATA(a);
    return 0;
}

static int integrate_check(const run *r)
{
    if (!isfinite(r->t0)) {
        PyErr_SetString(PyExc_ValueError, "t0 must be finite");
        return -1;
    }
    if (r->n_steps < 0) {
        PyErr_Format(PyExc_ValueError, "n_steps must be >= 0, got %ld", r->n_steps);
        return -1;
    }
    const int n = r->S->sys.n;
    const double rows = (double)r->n_steps + 1.0;
    if (rows * (double)n * (2.0 + (double)r->m->n_mid) * 8.0 > (double)NPY_MAX_INTP / 2) {
        PyErr_Format(PyExc_MemoryError,
                     "n_steps = %ld with n = %d needs more memory than can be addressed",
                     r->n_steps, n);
        return -1;
    }
    return 0;
}

/* The result of sym_integrate's status st: (t, q, p, q_mid, iterations,
 * n_done, failure) with failure None or (status, reason, step, t, iterations,
 * residual, residual_rel); or the exception, with the partial trajectory and
 * a note when a callback raised or the run was interrupted. */
static PyObject *integrate_result(const run *r, int st, PyObject *const out[5],
                                  const sym_failure *fail, long done)
{
    if (st == SYM_ECALLBACK || st == SYM_EINTERRUPT || PyErr_Occurred()) {
        py_raise_status(st, &r->call, NULL, NULL);
        const long at = st == SYM_EINTERRUPT ? done : fail->step;
        add_note_where(r->m->name, at, r->t0 + (double)at * r->h, r->n_steps, done);
        attach_partial(out, done);
        return NULL;
    }
    if (st == SYM_ENOMEM || st == SYM_EINVAL || st == SYM_EMETHOD)
        return py_raise_work_status(st, r->S->sys.n, r->m);
    if (!st)
        return Py_BuildValue("(OOOOOlO)", out[0], out[1], out[2], out[3], out[4], done, Py_None);
    return Py_BuildValue("(OOOOOl(isldidd))", out[0], out[1], out[2], out[3], out[4], done, st,
                         sym_strerror(st), fail->step, fail->t, fail->iterations,
                         fail->residual, fail->residual_rel);
}

PyObject *mod_integrate(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"system", "q0", "p0", "h", "n_steps", "method", "t0",
                             "rtol", "max_iter", "predictor", "chord", "cancel", "multipliers",
                             NULL};
    run r = {.method = "simpson", .predictor = 1, .check = integrate_check};
    PyObject *cancel = Py_None, *lam = Py_None, *out[5] = {NULL}, *ret = NULL;
    /* out: t, q, p, q_mid, iters */
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOdl|sddipiOO", kwlist, &r.system, &r.q_in,
                                     &r.p_in, &r.h, &r.n_steps, &r.method, &r.t0, &r.rtol,
                                     &r.max_iter, &r.predictor, &r.chord, &cancel, &lam))
        return NULL;
    if (run_begin(module, &r, "q0", "p0") < 0) goto done;
    if (lam != Py_None && multipliers_out(&r, lam) < 0) goto done;
    const npy_intp N = r.n_steps, n = r.S->sys.n;
    const npy_intp dt = N + 1, dq[2] = {N + 1, n}, dm[3] = {N, r.m->n_mid, n};
    if (!(out[0] = new_array(1, &dt, 0)) || !(out[1] = new_array(2, dq, 0)) ||
        !(out[2] = new_array(2, dq, 0)) || !(out[3] = new_array(r.m->n_mid ? 3 : -1, dm, 1)) ||
        !(out[4] = PyArray_ZEROS(1, (npy_intp *)&N, NPY_INT, 0)))
        goto done;
    sym_failure fail;
    long done_steps = 0;
    progress_ctx ctx = {NULL, cancel == Py_None ? NULL : cancel};
    if (r.S->nogil) ctx.ts = PyEval_SaveThread();
    const int st = sym_integrate(&r.call.sys, r.m, &r.opt, PyArray_DATA(r.q), PyArray_DATA(r.p),
                                 r.t0, r.h, r.n_steps, data_of(out[0]), data_of(out[1]),
                                 data_of(out[2]), data_of(out[3]),
                                 PyArray_DATA((PyArrayObject *)out[4]), progress_cb, &ctx,
                                 progress_every(&r), &fail, &done_steps);
    if (ctx.ts) PyEval_RestoreThread(ctx.ts);
    ret = integrate_result(&r, st, out, &fail, done_steps);
done:
    run_end(&r);
    for (int k = 0; k < 5; k++) Py_XDECREF(out[k]);
    return ret;
}

/* ------------------------------------------------------------------ */
/* newton_system, step_tangent: diagnostics                             */
/* ------------------------------------------------------------------ */
static int has_newton_system(const run *r)
{
    if (sym_method_unknowns(r->m, r->S->sys.n) > 0) return 0;
    PyErr_Format(PyExc_ValueError, "method '%s' has no Newton system", r->m->name);
    return -1;
}

/* newton_system(system, q, p, h, X, method) -> (R, J): diagnostics for tests */
PyObject *mod_newton_system(PyObject *module, PyObject *args)
{
    run r = {.predictor = 1, .check = has_newton_system};
    PyObject *xo, *R = NULL, *J = NULL, *ret = NULL;
    PyArrayObject *x = NULL;
    if (!PyArg_ParseTuple(args, "OOOdOs", &r.system, &r.q_in, &r.p_in, &r.h, &xo, &r.method))
        return NULL;
    if (run_begin(module, &r, "q", "p") < 0 || run_work(&r) < 0) goto done;
    const int nu = sym_newton_size(r.w);
    if (!(x = py_as_vector(xo, nu, "X"))) goto done;
    const npy_intp d1 = nu, d2[2] = {nu, nu};
    if (!(R = new_array(1, &d1, 0)) || !(J = new_array(2, d2, 0))) goto done;
    const int st = sym_newton_system(r.w, PyArray_DATA(r.q), PyArray_DATA(r.p), r.h,
                                     PyArray_DATA(x), data_of(R), data_of(J));
    if (st)
        py_raise_status(st, &r.call, NULL, NULL);
    else
        ret = PyTuple_Pack(2, R, J);
done:
    run_end(&r);
    Py_XDECREF(x);
    Py_XDECREF(R);
    Py_XDECREF(J);
    return ret;
}

/* step_tangent(system, q, p, h, method, rtol, max_iter) -> (q1, p1, D) */
PyObject *mod_step_tangent(PyObject *module, PyObject *args, PyObject *kw)
{
    run r = {.method = "simpson", .predictor = 1};
    PyObject *out[3] = {NULL}, *ret = NULL;   /* q1, p1, D */
    if (one_step_begin(module, args, kw, &r, out, 1) < 0) goto done;
    sym_step_info info = {0};
    const int st = sym_step_tangent(r.w, PyArray_DATA(r.q), PyArray_DATA(r.p), r.h,
                                    data_of(out[0]), data_of(out[1]), data_of(out[2]), &info);
    if (st) {
        char after[48];
        snprintf(after, sizeof after, " (residual %.3g)", info.residual);
        py_raise_status(st, &r.call, "step_tangent failed: ", after);
    } else {
        ret = PyTuple_Pack(3, out[0], out[1], out[2]);
    }
done:
    one_step_end(&r, out);
    return ret;
}
