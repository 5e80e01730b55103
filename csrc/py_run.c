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
    PyObject *linear_in;          /* linear=: NULL/None, or the closed form (h, D, A) */
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
 * system, the method, the entry point's own checks, q and p (named qname,
 * pname); then start the call.  The run's numbers (h, t, k, n_steps,
 * store_every) are the core's to check: it names the one it refuses
 * (sym_work_invalid, sym_run.invalid), and raise_invalid says so.  -1 with
 * an exception; run_end follows either way.  The call starts last, so a
 * failed check never runs a callback. */
static int run_begin(PyObject *module, run *r, const char *qname, const char *pname)
{
    memset(&r->call, 0, sizeof(r->call));
    if (!(r->S = get_system(module, r->system)) || py_system_ready(r->S) < 0) return -1;
    if (!(r->m = get_method(r->method))) return -1;
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

/* A float64 C-contiguous copy of o of shape (rows, cols), or NULL with an
 * exception naming it. */
static PyArrayObject *as_matrix(PyObject *o, npy_intp rows, npy_intp cols, const char *name)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) return NULL;
    if (PyArray_NDIM(a) != 2 || PyArray_DIM(a, 0) != rows || PyArray_DIM(a, 1) != cols) {
        PyErr_Format(PyExc_ValueError, "%s must have shape (%zd, %zd)", name, (Py_ssize_t)rows,
                     (Py_ssize_t)cols);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* The closed form's workspace (linear=(h, D, A), sym_work_new_linear): D the
 * (2n, 2n) increment matrix in (q, p) order, A the (n, n) midpoint matrix or
 * None for a method without an internal node. */
static sym_work *linear_work(run *r, int *st)
{
    PyObject *ho, *Do, *Ao;
    const npy_intp n = r->S->sys.n;
    if (!PyTuple_Check(r->linear_in) || PyTuple_GET_SIZE(r->linear_in) != 3) {
        PyErr_SetString(PyExc_TypeError, "linear must be a tuple (h, D, A)");
        return NULL;
    }
    ho = PyTuple_GET_ITEM(r->linear_in, 0);
    Do = PyTuple_GET_ITEM(r->linear_in, 1);
    Ao = PyTuple_GET_ITEM(r->linear_in, 2);
    const double h = PyFloat_AsDouble(ho);
    if (h == -1.0 && PyErr_Occurred()) return NULL;
    PyArrayObject *D = as_matrix(Do, 2 * n, 2 * n, "linear D"), *A = NULL;
    if (D && Ao != Py_None) A = as_matrix(Ao, n, n, "linear A");
    sym_work *w = NULL;
    if (D && (A || Ao == Py_None))
        w = sym_work_new_linear(&r->call.sys, r->m, h, PyArray_DATA(D),
                                A ? PyArray_DATA(A) : NULL, st);
    Py_XDECREF(D);
    Py_XDECREF(A);
    if (!w && !PyErr_Occurred() && (*st == SYM_EINVAL || *st == SYM_ENONFINITE))
        PyErr_Format(PyExc_ValueError, "linear=(h, D, A) for method '%s': h must be finite and "
                     "nonzero, D and A finite, and A given exactly when the method has one "
                     "internal node", r->m->name);
    if (!w && !PyErr_Occurred() && *st == SYM_EMETHOD)
        PyErr_Format(PyExc_ValueError, "method '%s' has no closed form here (it has more than "
                     "one internal node)", r->m->name);
    return w;
}

/* The workspace of the run: the method's, or the closed form's. */
static int run_work(run *r)
{
    int st = SYM_OK;
    if (r->linear_in && r->linear_in != Py_None) {
        if (!(r->w = linear_work(r, &st)) && PyErr_Occurred()) return -1;
    } else {
        r->w = sym_work_new(&r->call.sys, r->m, &r->opt, &st);
    }
    if (r->w) return py_force_attach(&r->force, r->w);
    py_raise_work_status(st, r->S->sys.n, r->m);
    return -1;
}

/* The ValueError of a refused argument: "<what>: invalid argument (<name>)"
 * when the core named it (sym_work_invalid), else the status's text.
 * Returns NULL. */
static PyObject *raise_invalid(const run *r, int st, const char *what)
{
    const char *name = st == SYM_EINVAL ? sym_work_invalid(r->w) : NULL;
    if (name)
        PyErr_Format(PyExc_ValueError, "%s: invalid argument (%s)", what, name);
    else
        py_raise_status(st, &r->call, NULL, NULL);
    return NULL;
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
/* Parse (system, q, p, h, method='simpson', rtol=0, max_iter=0, force=None,
 * t=0, branch=0), run the prologue and make the workspace.  -1 with an
 * exception; run_end follows either way. */
static int one_step_begin(PyObject *module, PyObject *args, PyObject *kw, run *r)
{
    static char *kwlist[] = {"system", "q", "p", "h", "method", "rtol", "max_iter", "force",
                             "t", "branch", NULL};
    r->force_in = Py_None;
    r->force_steps = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOd|sdiOdi", kwlist, &r->system, &r->q_in,
                                     &r->p_in, &r->h, &r->method, &r->rtol, &r->max_iter,
                                     &r->force_in, &r->t0, &r->branch))
        return -1;
    return run_begin(module, r, "q", "p") < 0 || run_work(r) < 0 ? -1 : 0;
}

/* Step k of a run at time t from (q, p) on the prepared run r: (q1, p1, q_mid,
 * status, iterations, residual, residual_rel, update, reason), q_mid None
 * without internal nodes.  A failed step is a status in the result
 * (symplectic.step raises ConvergenceError); a callback's failure is an
 * exception. */
static PyObject *run_one_step(run *r, PyArrayObject *q, PyArrayObject *p, double h, double t,
                              long k)
{
    const npy_intp n = r->S->sys.n, nm = r->m->n_mid, d3[2] = {nm, n};
    PyObject *out[3] = {NULL}, *ret = NULL;   /* q1, p1, q_mid */
    if (!(out[0] = new_array(1, &n, 0)) || !(out[1] = new_array(1, &n, 0)) ||
        !(out[2] = new_array(nm ? 2 : -1, d3, 0)))
        goto done;
    sym_step_info info = {0};
    PyThreadState *ts = run_nogil(r) ? PyEval_SaveThread() : NULL;
    const int st = sym_step_at(r->w, t, k, PyArray_DATA(q), PyArray_DATA(p), h,
                               data_of(out[0]), data_of(out[1]), data_of(out[2]), &info);
    if (ts) PyEval_RestoreThread(ts);
    if (st == SYM_ECALLBACK) py_force_raise_recorded(&r->force);
    if (st == SYM_ECALLBACK || (st && PyErr_Occurred())) {
        py_raise_status(st, &r->call, NULL, NULL);
        goto done;
    }
    if (st == SYM_EINVAL) {   /* an argument the core refused: h, t, k, hold */
        raise_invalid(r, st, "step");
        goto done;
    }
    ret = Py_BuildValue("(OOOiiddds)", out[0], out[1], out[2], st, info.iterations,
                        info.residual, info.residual_rel, info.update,
                        st ? sym_strerror(st) : "");
done:
    for (int j = 0; j < 3; j++) Py_XDECREF(out[j]);
    return ret;
}

/* step(system, q, p, h, method, rtol, max_iter, force, t, branch) -> (q1, p1,
 * q_mid, status, iterations, residual, residual_rel, update, reason) */
PyObject *mod_step(PyObject *module, PyObject *args, PyObject *kw)
{
    run r = {.method = "simpson", .predictor = 1, .force_in = Py_None};
    PyObject *ret = NULL;
    if (one_step_begin(module, args, kw, &r) == 0)
        ret = run_one_step(&r, r.q, r.p, r.h, r.t0, 0);
    run_end(&r);
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

/* What a run reports besides the arrays: (rows, stopped, (steps,
 * evaluations, iterations, factorizations, branch_checks, branch_fixes)). */
static PyObject *extras_tuple(const sym_run *R)
{
    const sym_counts *c = &R->counts;
    return Py_BuildValue("(li(llllll))", R->rows, R->stopped, c->steps, c->evaluations,
                         c->iterations, c->factorizations, c->branch_checks, c->branch_fixes);
}

/* The output arrays of n_steps steps: a MemoryError before allocating when
 * they cannot be addressed (their size: sym_run_output_bytes). */
static int rows_fit(long n_steps, int n, int n_mid)
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
    const sym_failure *fail = &R->failure;
    if (st == SYM_ECALLBACK || st == SYM_EINTERRUPT || PyErr_Occurred()) {
        if (st == SYM_ECALLBACK) py_force_raise_recorded(&r->force);
        py_raise_status(st, &r->call, NULL, NULL);
        add_note_where(r->m->name, fail->step, fail->t, R->n_steps, R->done);
        PyObject *type, *value, *tb;      /* extras_tuple needs no exception pending */
        PyErr_Fetch(&type, &value, &tb);
        PyObject *ex = extras_tuple(R);
        if (!ex) PyErr_Clear();
        PyErr_Restore(type, value, tb);
        attach_partial(out, R->done, ex);
        return NULL;
    }
    if (st == SYM_EINVAL && R->invalid) {
        PyErr_Format(PyExc_ValueError, "integrate: invalid run argument (%s)", R->invalid);
        return NULL;
    }
    if (st == SYM_ENOMEM || st == SYM_EINVAL || st == SYM_EMETHOD)
        return py_raise_work_status(st, r->S->sys.n, r->m);
    PyObject *ex = extras_tuple(R);
    if (!ex) return NULL;
    PyObject *ret;
    if (!st)
        ret = Py_BuildValue("(OOOOOlOO)", out[0], out[1], out[2], out[3], out[4], R->done,
                            Py_None, ex);
    else
        ret = Py_BuildValue("(OOOOOl(isldidd)O)", out[0], out[1], out[2], out[3], out[4],
                            R->done, st, sym_strerror(st), fail->step, fail->t,
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

/* One integrate call's own arguments (the run r holds the system, method,
 * options, force and workspace): parsed, borrowed references. */
typedef struct {
    PyArrayObject *q0, *p0;   /* converted state (owned by the caller)      */
    double h, t0, work0;
    long k0, n_steps, store_every;
    PyObject *cancel, *hook, *hook_buf, *hook_steps, *report, *lam, *hook_force;
    PyArrayObject *work, *impulse;   /* a forced run's outputs, or NULL      */
    PyObject *impulse0;              /* None, or the impulse at node 0 (n)   */
} run_call;

/* The observers of a call: store_every, hook a callable or None with
 * its buffer (float64, C-contiguous, writable, (n_mid + 4) n values), its
 * steps (None, or C longs increasing) and, for a run with a force, the
 * buffer of the step's work (None, or sym_run.hook_force's 2 + 2n + m (3 + n)
 * values). */
static int observer_args(const run *r, const run_call *c, sym_run *R, hook_ctx *hc)
{
    const int n = r->S->sys.n, nm = r->m->n_mid;
    R->store_every = c->store_every;
    if (c->hook == Py_None) return 0;
    if (!PyCallable_Check(c->hook)) {
        PyErr_SetString(PyExc_TypeError, "hook must be callable");
        return -1;
    }
    double *bd = hook_buffer(c->hook_buf, (npy_intp)(nm + 4) * n, "hook_buf");
    if (!bd) return -1;
    if (c->hook_force != Py_None) {
        const npy_intp m = sym_method_force_points(r->m);
        if (!(R->hook_force = hook_buffer(c->hook_force, 2 + 2 * (npy_intp)n + m * (3 + n),
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
        R->hook_steps = v;
        R->n_hook_steps = (long)m;
    }
    hc->fn = c->hook;
    hc->buf = bd;
    hc->n = n;
    hc->n_mid = nm;
    R->hook = step_hook;
    R->hook_ctx = hc;
    return 0;
}

/* The run of one call c on the prepared run r (run_begin and run_work
 * done, rows_fit checked by the caller): the outputs, the GIL released when
 * nothing in the loop is Python, the result (integrate_result). */
static PyObject *run_integrate(run *r, const run_call *c)
{
    PyObject *out[5] = {NULL}, *ret = NULL;   /* t, q, p, q_mid, iters */
    PyArrayObject *imp0 = NULL;
    progress_ctx ctx = {NULL, c->cancel == Py_None ? NULL : c->cancel,
                        c->report == Py_None ? NULL : c->report, 0};
    hook_ctx hc = {NULL, NULL, 0, 0, &ctx};
    sym_run R = {.q0 = PyArray_DATA(c->q0), .p0 = PyArray_DATA(c->p0), .t0 = c->t0,
                 .h = c->h, .k0 = c->k0, .n_steps = c->n_steps, .work0 = c->work0};
    if (observer_args(r, c, &R, &hc) < 0) goto done;
    const int thin = c->store_every > 1;
    const npy_intp N = c->n_steps < 0 ? 0 : c->n_steps, n = r->S->sys.n;
    const npy_intp rows = sym_stored_rows(N, c->store_every);
    if (c->lam != Py_None && !(R.multipliers = multipliers_out(r, c->lam, rows - 1))) goto done;
    if (c->impulse0 != Py_None) {
        if (!(imp0 = py_as_vector(c->impulse0, (int)n, "impulse0"))) goto done;
        R.impulse0 = PyArray_DATA(imp0);
    }
    const npy_intp dt = rows, dq[2] = {rows, n}, dm[3] = {N, r->m->n_mid, n}, di = rows - 1;
    if (!(out[0] = new_array(1, &dt, 0)) || !(out[1] = new_array(2, dq, 0)) ||
        !(out[2] = new_array(2, dq, 0)) ||
        !(out[3] = new_array(r->m->n_mid && !thin ? 3 : -1, dm, 1)) ||
        !(out[4] = PyArray_ZEROS(1, (npy_intp *)&di, NPY_INT, 0)))
        goto done;
    R.t = data_of(out[0]);
    R.q = data_of(out[1]);
    R.p = data_of(out[2]);
    R.qmid = data_of(out[3]);
    R.iters = PyArray_DATA((PyArrayObject *)out[4]);
    R.work = c->work ? PyArray_DATA(c->work) : NULL;
    R.impulse = c->impulse ? PyArray_DATA(c->impulse) : NULL;
    R.progress = progress_cb;
    R.progress_ctx = &ctx;
    R.progress_every = progress_every(r);
    if (run_nogil(r)) ctx.ts = PyEval_SaveThread();
    const int st = sym_integrate(r->w, &R);
    if (ctx.ts) PyEval_RestoreThread(ctx.ts);
    ret = integrate_result(r, st, out, &R);
done:
    Py_XDECREF(imp0);
    for (int k = 0; k < 5; k++) Py_XDECREF(out[k]);
    return ret;
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
    run r = {.method = "simpson", .predictor = 1, .force_in = Py_None};
    run_call c = {.store_every = 1, .cancel = Py_None, .hook = Py_None, .hook_buf = Py_None,
                  .hook_steps = Py_None, .report = Py_None, .lam = Py_None,
                  .hook_force = Py_None, .impulse0 = Py_None};
    PyObject *ret = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOdl|sddipiOlOOOOOOOi", kwlist, &r.system,
                                     &r.q_in, &r.p_in, &r.h, &r.n_steps, &r.method, &r.t0,
                                     &r.rtol, &r.max_iter, &r.predictor, &r.chord, &c.cancel,
                                     &c.store_every, &c.hook, &c.hook_buf, &c.hook_steps,
                                     &c.report, &r.force_in, &c.lam, &c.hook_force, &r.branch))
        return NULL;
    r.force_steps = r.n_steps < 0 ? 0 : r.n_steps;
    r.force_rows = sym_stored_rows(r.force_steps, c.store_every);
    /* memory before the workspace: a run whose arrays cannot be addressed allocates nothing */
    if (run_begin(module, &r, "q0", "p0") < 0 ||
        rows_fit(r.n_steps, r.S->sys.n, r.m->n_mid) < 0 || run_work(&r) < 0)
        goto done;
    c.q0 = r.q;
    c.p0 = r.p;
    c.h = r.h;
    c.t0 = r.t0;
    c.n_steps = r.n_steps;
    c.work = r.force.work;
    c.impulse = r.force.impulse;
    ret = run_integrate(&r, &c);
done:
    run_end(&r);
    return ret;
}

/* ------------------------------------------------------------------ */
/* Work: a prepared run that lives across calls (symplectic.Integrator) */
/* ------------------------------------------------------------------ */
/* The run of integrate and step, kept: the system, the method, the
 * options, the force and the workspace (its predictor history and counts)
 * stay from one call to the next, so that runs continued on it compute the
 * states of one long run bitwise (sym_run.k0).  One call at a time (a second
 * thread's call while one runs is a RuntimeError). */
typedef struct WorkObject {
    PyObject_HEAD
    run r;
    int ready;   /* prepared: r.w is a workspace */
    int busy;    /* a call is running            */
} WorkObject;

static int Work_traverse(WorkObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->r.system);
    Py_VISIT(self->r.force_in);
    return py_force_traverse(&self->r.force, visit, arg);
}

static int Work_clear(WorkObject *self)
{
    if (self->busy) return 0;   /* (a running call holds a reference: not reached) */
    if (self->ready) run_end(&self->r);
    self->ready = 0;
    Py_CLEAR(self->r.system);
    Py_CLEAR(self->r.force_in);
    return 0;
}

static void Work_dealloc(WorkObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Work_clear(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* Enter a call: -1 (with RuntimeError) when not prepared or busy; clears
 * the failure records of the last call. */
static int work_enter(WorkObject *self)
{
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "this Work was not prepared by symplectic._core.work");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this integrator is running in another thread "
                        "(one call at a time)");
        return -1;
    }
    self->busy = 1;
    self->r.call.failed = 0;
    py_force_clear_records(&self->r.force);
    return 0;
}

/* work(system, q, p, method='simpson', rtol=0, max_iter=0, predictor=True,
 * chord=0, branch=0, force=None, linear=None) -> Work: the prologue of
 * integrate once (q, p: a state of the system, for the number of
 * constraints of Python callables and the checks of the arguments); with
 * linear=(h, D, A) the closed form's workspace (linear_work), which steps
 * only with that h and takes no force. */
PyObject *mod_work(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"system", "q", "p", "method", "rtol", "max_iter", "predictor",
                             "chord", "branch", "force", "linear", NULL};
    module_state *ms = PyModule_GetState(module);
    WorkObject *self = (WorkObject *)ms->Work_type->tp_alloc(ms->Work_type, 0);
    if (!self) return NULL;
    run *r = &self->r;
    r->method = "simpson";
    r->predictor = 1;
    r->h = 1.0;
    r->force_in = Py_None;
    r->force_steps = -1;
    r->linear_in = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|sddpiiOO", kwlist, &r->system, &r->q_in,
                                     &r->p_in, &r->method, &r->rtol, &r->max_iter,
                                     &r->predictor, &r->chord, &r->branch, &r->force_in,
                                     &r->linear_in)) {
        r->system = r->force_in = NULL;
        Py_DECREF(self);
        return NULL;
    }
    Py_INCREF(r->system);
    Py_INCREF(r->force_in);
    self->ready = 1;   /* run_end releases what run_begin took, also on failure */
    const int bad = run_begin(module, r, "q", "p") < 0 || run_work(r) < 0;
    r->linear_in = NULL;   /* borrowed: for run_work only */
    if (bad) {
        Py_DECREF(self);
        return NULL;
    }
    Py_CLEAR(r->q);   /* the state was for the checks only */
    Py_CLEAR(r->p);
    r->q_in = r->p_in = NULL;
    return (PyObject *)self;
}

/* Work.integrate(q0, p0, h, n_steps, t0=0, k0=0, cancel=None, store_every=1,
 * hook=None, hook_buf=None, hook_steps=None, report=None, multipliers=None,
 * hook_force=None, work=None, impulse=None, work0=0, impulse0=None) -> as
 * integrate: the steps k0 .. k0 + n_steps - 1 of a run from t0 (sym_run),
 * on the kept workspace. */
static PyObject *Work_integrate(WorkObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"q0", "p0", "h", "n_steps", "t0", "k0", "cancel", "store_every",
                             "hook", "hook_buf", "hook_steps", "report", "multipliers",
                             "hook_force", "work", "impulse", "work0", "impulse0", NULL};
    run_call c = {.store_every = 1, .cancel = Py_None, .hook = Py_None, .hook_buf = Py_None,
                  .hook_steps = Py_None, .report = Py_None, .lam = Py_None,
                  .hook_force = Py_None, .impulse0 = Py_None};
    PyObject *q0, *p0, *wo = Py_None, *io = Py_None, *ret = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOdl|dlOlOOOOOOOOdO", kwlist, &q0, &p0, &c.h,
                                     &c.n_steps, &c.t0, &c.k0, &c.cancel, &c.store_every,
                                     &c.hook, &c.hook_buf, &c.hook_steps, &c.report, &c.lam,
                                     &c.hook_force, &wo, &io, &c.work0, &c.impulse0))
        return NULL;
    if (work_enter(self) < 0) return NULL;
    run *r = &self->r;
    const int n = r->S->sys.n;
    const npy_intp rows = sym_stored_rows(c.n_steps < 0 ? 0 : c.n_steps, c.store_every);
    if ((wo != Py_None || io != Py_None || c.impulse0 != Py_None) && !r->force.active) {
        PyErr_SetString(PyExc_ValueError, "work, impulse and impulse0 are the outputs of a "
                        "run with a force");
        goto done;
    }
    if (wo != Py_None) {
        if (!hook_buffer(wo, rows, "work")) goto done;
        c.work = (PyArrayObject *)wo;
    }
    if (io != Py_None) {
        if (!hook_buffer(io, rows * n, "impulse")) goto done;
        c.impulse = (PyArrayObject *)io;
    }
    if (rows_fit(c.n_steps, n, r->m->n_mid) < 0) goto done;
    if (!(c.q0 = py_as_vector(q0, n, "q0")) || !(c.p0 = py_as_vector(p0, n, "p0"))) goto done;
    ret = run_integrate(r, &c);
done:
    Py_XDECREF(c.q0);
    Py_XDECREF(c.p0);
    self->busy = 0;
    return ret;
}

/* Work.step(q, p, h, t=0, k=0) -> as step: step k of a run, at time t. */
static PyObject *Work_step(WorkObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"q", "p", "h", "t", "k", NULL};
    PyObject *qo, *po, *ret = NULL;
    double h, t = 0.0;
    long k = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOd|dl", kwlist, &qo, &po, &h, &t, &k))
        return NULL;
    if (work_enter(self) < 0) return NULL;
    run *r = &self->r;
    PyArrayObject *q = NULL, *p = NULL;
    const int n = r->S->sys.n;
    if ((q = py_as_vector(qo, n, "q")) && (p = py_as_vector(po, n, "p")))
        ret = run_one_step(r, q, p, h, t, k);
    Py_XDECREF(q);
    Py_XDECREF(p);
    self->busy = 0;
    return ret;
}

/* Work.counts() -> (steps, evaluations, iterations, factorizations,
 * branch_checks, branch_fixes) since the workspace was made */
static PyObject *Work_counts(WorkObject *self, PyObject *unused)
{
    (void)unused;
    sym_counts c;
    sym_work_counts(self->ready ? self->r.w : NULL, &c);
    return Py_BuildValue("(llllll)", c.steps, c.evaluations, c.iterations, c.factorizations,
                         c.branch_checks, c.branch_fixes);
}

/* Work.reset(): forget the predictor history (the next step starts from a
 * Taylor predictor); the counts stay. */
static PyObject *Work_reset(WorkObject *self, PyObject *unused)
{
    (void)unused;
    if (work_enter(self) < 0) return NULL;
    sym_work_reset(self->r.w);
    self->busy = 0;
    Py_RETURN_NONE;
}

static PyMethodDef Work_methods[] = {
    {"integrate", (PyCFunction)(void (*)(void))Work_integrate, METH_VARARGS | METH_KEYWORDS,
     "integrate(q0, p0, h, n_steps, t0=0, k0=0, ...) -> as _core.integrate, on the kept "
     "workspace: steps k0 .. k0 + n_steps - 1 of a run from t0"},
    {"step", (PyCFunction)(void (*)(void))Work_step, METH_VARARGS | METH_KEYWORDS,
     "step(q, p, h, t=0, k=0) -> as _core.step: step k at time t on the kept workspace"},
    {"counts", (PyCFunction)Work_counts, METH_NOARGS,
     "counts() -> (steps, evaluations, iterations, factorizations, branch_checks, "
     "branch_fixes) of the workspace so far"},
    {"reset", (PyCFunction)Work_reset, METH_NOARGS,
     "reset(): forget the predictor history"},
    {NULL, NULL, 0, NULL}};

static PyType_Slot Work_slots[] = {
    {Py_tp_dealloc, PY_SLOT_FN(Work_dealloc)},
    {Py_tp_traverse, PY_SLOT_FN(Work_traverse)},
    {Py_tp_clear, PY_SLOT_FN(Work_clear)},
    {Py_tp_methods, Work_methods},
    {Py_tp_doc, "A prepared run kept across calls (symplectic._core.work makes one)."},
    {0, NULL}};

PyType_Spec py_Work_spec = {
    "symplectic._core.Work", sizeof(WorkObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, Work_slots};

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
    if (st == SYM_EINVAL && !PyErr_Occurred())
        raise_invalid(&r, st, "newton_system");
    else if (st)
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
    if (one_step_begin(module, args, kw, &r) < 0) goto done;
    const npy_intp n = r.S->sys.n, d2[2] = {2 * n, 2 * n};
    if (!(out[0] = new_array(1, &n, 0)) || !(out[1] = new_array(1, &n, 0)) ||
        !(out[2] = new_array(2, d2, 0)))
        goto done;
    sym_step_info info = {0};
    int st = sym_work_set_time(r.w, r.t0, 0);
    if (!st)
        st = sym_step_tangent(r.w, PyArray_DATA(r.q), PyArray_DATA(r.p), r.h, data_of(out[0]),
                              data_of(out[1]), data_of(out[2]), &info);
    if (st == SYM_ECALLBACK) py_force_raise_recorded(&r.force);
    if (st == SYM_EINVAL && !PyErr_Occurred()) {
        raise_invalid(&r, st, "step_tangent");
    } else if (st) {
        char after[48];
        snprintf(after, sizeof after, " (residual %.3g)", info.residual);
        py_raise_status(st, &r.call, "step_tangent failed: ", after);
    } else {
        ret = PyTuple_Pack(3, out[0], out[1], out[2]);
    }
done:
    run_end(&r);
    for (int k = 0; k < 3; k++) Py_XDECREF(out[k]);
    return ret;
}
