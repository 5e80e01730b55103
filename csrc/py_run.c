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
 * saying where it happened.  A force (force=, py_forces.c) is parsed with
 * the other arguments and attached to the workspace; a Python callable in
 * it keeps the GIL.
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
    int max_iter, predictor, chord, branch;
    long n_steps;
    PyObject *force_in;           /* force=: None or a description (py_forces.c) */
    long force_steps;             /* steps of an integration, -1 for one step */
    long force_rows;              /* rows of its work and impulse outputs      */
    int (*check)(const run *r);   /* NULL, or the entry point's own checks */
    /* out: checked and converted (released by run_end) */
    SystemObject *S;
    const sym_method *m;
    PyArrayObject *q, *p;
    sym_options opt;
    py_call call;
    sym_work *w;                  /* run_work */
    py_force force;
};

/* No Python in the loop: the system's and the force's callbacks are C. */
static int run_nogil(const run *r)
{
    return r->S->nogil && !r->force.python;
}

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
    /* branch: 0 auto, 1 always, 2 never (sym_branch_mode; checked by the core) */
    r->opt.branch = r->branch;
    if (py_force_begin(r->force_in, n, r->force_steps, r->force_rows, &r->force) < 0)
        return -1;
    return py_call_begin(r->S, &r->call);
}

/* The workspace of one step (step, step_tangent, newton_system). */
static int run_work(run *r)
{
    int st = SYM_OK;
    r->w = sym_work_new(&r->call.sys, r->m, &r->opt, &st);
    if (r->w) return py_force_attach(&r->force, r->w);
    py_raise_work_status(st, r->S->sys.n, r->m);
    return -1;
}

static void run_end(run *r)
{
    if (r->w) sym_work_free(r->w);
    r->w = NULL;
    py_call_end(&r->call);
    py_force_end(&r->force);
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
/* Parse (system, q, p, h, method='simpson', rtol=0, max_iter=0; step also
 * force=None, t=0, branch=0), run the prologue, make the workspace and the outputs
 * q1, p1 and a third one: the tangent map D (2n, 2n), or q_mid (n_mid, n)
 * (None without internal nodes).  -1 with an exception; one_step_end
 * follows either way. */
static int one_step_begin(PyObject *module, PyObject *args, PyObject *kw, run *r,
                          PyObject *out[3], int tangent)
{
    static char *kwlist[] = {"system", "q", "p", "h", "method", "rtol", "max_iter", "force",
                             "t", "branch", NULL};
    r->force_in = Py_None;
    r->force_steps = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOd|sdiOdi", kwlist, &r->system, &r->q_in,
                                     &r->p_in, &r->h, &r->method, &r->rtol, &r->max_iter,
                                     &r->force_in, &r->t0, &r->branch))
        return -1;
    if (!isfinite(r->t0)) {
        PyErr_SetString(PyExc_ValueError, "t must be finite");
        return -1;
    }
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

/* step(system, q, p, h, method, rtol, max_iter, force, t) -> (q1, p1, q_mid,
 * status, iterations, residual, residual_rel, update, reason) */
PyObject *mod_step(PyObject *module, PyObject *args, PyObject *kw)
{
    run r = {.method = "simpson", .predictor = 1, .force_in = Py_None};
    PyObject *out[3] = {NULL}, *ret = NULL;   /* q1, p1, q_mid */
    if (one_step_begin(module, args, kw, &r, out, 0) < 0) goto done;
    sym_step_info info = {0};
    PyThreadState *ts = run_nogil(&r) ? PyEval_SaveThread() : NULL;
    const int st = sym_step_at(r.w, r.t0, 0, PyArray_DATA(r.q), PyArray_DATA(r.p), r.h,
                               data_of(out[0]), data_of(out[1]), data_of(out[2]), &info);
    if (ts) PyEval_RestoreThread(ts);
    if (st == SYM_ECALLBACK) py_force_raise_recorded(&r.force);
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
    PyObject *report;    /* report(steps_done) (progress=True), or NULL */
    long checks;         /* progress checks so far (the report runs at every REPORT_EVERY-th) */
} progress_ctx;

/* The report rides every 16th Ctrl-C check: the checks come every ~0.1 ms of
 * work on the cheapest systems, the bar redraws at most every 0.2 s, and the
 * C-to-Python call per report is then well below 1 % of the run
 * (benchmarks/RESULTS_progress.md).  The caller reports the final count. */
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
static int multipliers_out(run *r, PyObject *o, npy_intp nrows)
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
        return -1;
    }
    r->opt.multipliers = PyArray_DATA(a);
    return 0;
}

/* What sym_integrate_ex reports besides the arrays: (rows, stopped, (steps,
 * evaluations, iterations, factorizations, branch_checks, branch_fixes)). */
static PyObject *extras_tuple(const sym_run_extras *x)
{
    const sym_counts *c = &x->counts;
    return Py_BuildValue("(li(llllll))", x->rows, x->stopped, c->steps, c->evaluations,
                         c->iterations, c->factorizations, c->branch_checks, c->branch_fixes);
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
                                  const sym_failure *fail, long done, const sym_run_extras *x)
{
    if (st == SYM_ECALLBACK || st == SYM_EINTERRUPT || PyErr_Occurred()) {
        if (st == SYM_ECALLBACK) py_force_raise_recorded(&r->force);
        py_raise_status(st, &r->call, NULL, NULL);
        const long at = st == SYM_EINTERRUPT ? done : fail->step;
        add_note_where(r->m->name, at, r->t0 + (double)at * r->h, r->n_steps, done);
        PyObject *type, *value, *tb;      /* extras_tuple needs no exception pending */
        PyErr_Fetch(&type, &value, &tb);
        PyObject *ex = extras_tuple(x);
        if (!ex) PyErr_Clear();
        PyErr_Restore(type, value, tb);
        attach_partial(out, done, ex);
        return NULL;
    }
    if (st == SYM_ENOMEM || st == SYM_EINVAL || st == SYM_EMETHOD)
        return py_raise_work_status(st, r->S->sys.n, r->m);
    PyObject *ex = extras_tuple(x);
    if (!ex) return NULL;
    PyObject *ret;
    if (!st)
        ret = Py_BuildValue("(OOOOOlOO)", out[0], out[1], out[2], out[3], out[4], done, Py_None,
                            ex);
    else
        ret = Py_BuildValue("(OOOOOl(isldidd)O)", out[0], out[1], out[2], out[3], out[4], done,
                            st, sym_strerror(st), fail->step, fail->t, fail->iterations,
                            fail->residual, fail->residual_rel, ex);
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
static double *hook_buffer(PyObject *buf, npy_intp size, const char *name)
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

/* The optional arguments of integrate's extras: store_every >= 1, hook a
 * callable or None with its buffer (float64, C-contiguous, writable,
 * (n_mid + 4) n values), its steps (None, or int64 increasing) and, for a
 * run with a force, the buffer of the step's work (None, or
 * sym_run_extras.hook_force's 2 + 2n + m (3 + n) values). */
static int extras_args(const run *r, long store_every, PyObject *hook, PyObject *buf,
                       PyObject *steps, PyObject *fbuf, sym_run_extras *x, hook_ctx *hc)
{
    const int n = r->S->sys.n, nm = r->m->n_mid;
    if (store_every < 1) {
        PyErr_Format(PyExc_ValueError, "store_every must be >= 1, got %ld", store_every);
        return -1;
    }
    x->store_every = store_every;
    if (hook == Py_None) return 0;
    if (!PyCallable_Check(hook)) {
        PyErr_SetString(PyExc_TypeError, "hook must be callable");
        return -1;
    }
    double *bd = hook_buffer(buf, (npy_intp)(nm + 4) * n, "hook_buf");
    if (!bd) return -1;
    if (fbuf != Py_None) {
        const npy_intp m = sym_method_force_points(r->m);
        if (!(x->hook_force = hook_buffer(fbuf, 2 + 2 * (npy_intp)n + m * (3 + n),
                                          "hook_force")))
            return -1;
    }
    if (steps != Py_None) {
        PyArrayObject *sa = (PyArrayObject *)steps;
        if (!PyArray_Check(steps) || PyArray_TYPE(sa) != NPY_LONG || PyArray_NDIM(sa) != 1 ||
            !PyArray_IS_C_CONTIGUOUS(sa)) {
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
        x->hook_steps = v;
        x->n_hook_steps = (long)m;
    }
    hc->fn = hook;
    hc->buf = bd;
    hc->n = n;
    hc->n_mid = nm;
    x->hook = step_hook;
    x->hook_ctx = hc;
    return 0;
}

/* integrate(system, q0, p0, h, n_steps, method, t0, rtol, max_iter, predictor,
 * chord, cancel, store_every=1, hook=None, hook_buf=None, hook_steps=None,
 * report=None, force=None, multipliers=None, hook_force=None, branch=0) -> (t, q, p, q_mid, iters,
 * n_done, failure, (rows, stopped, counts)).  With store_every > 1 the arrays have
 * sym_stored_rows rows and q_mid is None (and so do a force's work and
 * impulse outputs); multipliers (a constrained system) is filled in place,
 * one row per stored row after the first. */
PyObject *mod_integrate(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"system", "q0", "p0", "h", "n_steps", "method", "t0",
                             "rtol", "max_iter", "predictor", "chord", "cancel",
                             "store_every", "hook", "hook_buf", "hook_steps", "report", "force",
                             "multipliers", "hook_force", "branch", NULL};
    run r = {.method = "simpson", .predictor = 1, .check = integrate_check, .force_in = Py_None};
    PyObject *cancel = Py_None, *out[5] = {NULL}, *ret = NULL;   /* t, q, p, q_mid, iters */
    PyObject *hook = Py_None, *hook_buf = Py_None, *hook_steps = Py_None, *report = Py_None;
    PyObject *lam = Py_None, *hook_force = Py_None;
    long store_every = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOdl|sddipiOlOOOOOOOi", kwlist, &r.system,
                                     &r.q_in, &r.p_in, &r.h, &r.n_steps, &r.method, &r.t0,
                                     &r.rtol, &r.max_iter, &r.predictor, &r.chord, &cancel,
                                     &store_every, &hook, &hook_buf, &hook_steps, &report,
                                     &r.force_in, &lam, &hook_force, &r.branch))
        return NULL;
    r.force_steps = r.n_steps < 0 ? 0 : r.n_steps;
    r.force_rows = sym_stored_rows(r.force_steps, store_every);
    sym_run_extras x = {0};
    progress_ctx ctx = {NULL, cancel == Py_None ? NULL : cancel,
                        report == Py_None ? NULL : report, 0};
    hook_ctx hc = {NULL, NULL, 0, 0, &ctx};
    if (run_begin(module, &r, "q0", "p0") < 0 ||
        extras_args(&r, store_every, hook, hook_buf, hook_steps, hook_force, &x, &hc) < 0)
        goto done;
    const int thin = store_every > 1;
    const npy_intp N = r.n_steps, n = r.S->sys.n, rows = sym_stored_rows(N, store_every);
    if (lam != Py_None && multipliers_out(&r, lam, rows - 1) < 0) goto done;
    const npy_intp dt = rows, dq[2] = {rows, n}, dm[3] = {N, r.m->n_mid, n}, di = rows - 1;
    if (!(out[0] = new_array(1, &dt, 0)) || !(out[1] = new_array(2, dq, 0)) ||
        !(out[2] = new_array(2, dq, 0)) ||
        !(out[3] = new_array(r.m->n_mid && !thin ? 3 : -1, dm, 1)) ||
        !(out[4] = PyArray_ZEROS(1, (npy_intp *)&di, NPY_INT, 0)))
        goto done;
    sym_failure fail;
    long done_steps = 0;
    int st;
    if (r.force.active) {
        /* a forced run: on a workspace that carries the force */
        if (run_work(&r) < 0) goto done;
        if (run_nogil(&r)) ctx.ts = PyEval_SaveThread();
        st = sym_integrate_work(r.w, PyArray_DATA(r.q), PyArray_DATA(r.p), r.t0, r.h, r.n_steps,
                                data_of(out[0]), data_of(out[1]), data_of(out[2]),
                                data_of(out[3]), PyArray_DATA((PyArrayObject *)out[4]),
                                r.force.work ? PyArray_DATA(r.force.work) : NULL,
                                r.force.impulse ? PyArray_DATA(r.force.impulse) : NULL,
                                progress_cb, &ctx, progress_every(&r), &x, &fail, &done_steps);
    } else {
        if (r.S->nogil) ctx.ts = PyEval_SaveThread();
        st = sym_integrate_ex(&r.call.sys, r.m, &r.opt, PyArray_DATA(r.q), PyArray_DATA(r.p),
                              r.t0, r.h, r.n_steps, data_of(out[0]), data_of(out[1]),
                              data_of(out[2]), data_of(out[3]),
                              PyArray_DATA((PyArrayObject *)out[4]), progress_cb, &ctx,
                              progress_every(&r), &x, &fail, &done_steps);
    }
    if (ctx.ts) PyEval_RestoreThread(ctx.ts);
    ret = integrate_result(&r, st, out, &fail, done_steps, &x);
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

/* newton_system(system, q, p, h, X, method, force=None, t=0) -> (R, J):
 * diagnostics for tests (with a force: at time t, step 0) */
PyObject *mod_newton_system(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"system", "q", "p", "h", "X", "method", "force", "t", NULL};
    run r = {.predictor = 1, .check = has_newton_system, .force_in = Py_None, .force_steps = -1};
    PyObject *xo, *R = NULL, *J = NULL, *ret = NULL;
    PyArrayObject *x = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOdOs|Od", kwlist, &r.system, &r.q_in, &r.p_in,
                                     &r.h, &xo, &r.method, &r.force_in, &r.t0))
        return NULL;
    if (run_begin(module, &r, "q", "p") < 0 || run_work(&r) < 0) goto done;
    const int nu = sym_newton_size(r.w);
    if (!(x = py_as_vector(xo, nu, "X"))) goto done;
    const npy_intp d1 = nu, d2[2] = {nu, nu};
    if (!(R = new_array(1, &d1, 0)) || !(J = new_array(2, d2, 0))) goto done;
    int st = sym_work_set_time(r.w, r.t0, 0);   /* a force's time */
    if (!st) st = sym_newton_system(r.w, PyArray_DATA(r.q), PyArray_DATA(r.p), r.h,
                                     PyArray_DATA(x), data_of(R), data_of(J));
    if (st == SYM_ECALLBACK) py_force_raise_recorded(&r.force);
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

/* step_tangent(system, q, p, h, method, rtol, max_iter, force, t) -> (q1, p1, D) */
PyObject *mod_step_tangent(PyObject *module, PyObject *args, PyObject *kw)
{
    run r = {.method = "simpson", .predictor = 1, .force_in = Py_None};
    PyObject *out[3] = {NULL}, *ret = NULL;   /* q1, p1, D */
    if (one_step_begin(module, args, kw, &r, out, 1) < 0) goto done;
    sym_step_info info = {0};
    int st = sym_work_set_time(r.w, r.t0, 0);
    if (!st)
        st = sym_step_tangent(r.w, PyArray_DATA(r.q), PyArray_DATA(r.p), r.h, data_of(out[0]),
                              data_of(out[1]), data_of(out[2]), &info);
    if (st == SYM_ECALLBACK) py_force_raise_recorded(&r.force);
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
