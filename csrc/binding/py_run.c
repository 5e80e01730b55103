/*
 * py_run.c -- the run entry point step of symplectic._core, and the
 * prologue and epilogue shared by all run entry points (py_run.h; integrate's
 * entry point is in py_integrate.c, Work's in py_work.c).
 *
 * Each parses its arguments and passes them through one prologue
 * (py_run_begin: the system, the method, h, the state (q, p), the options and
 * the call's py_call record) and one epilogue (py_run_end).  Systems without
 * Python in the loop run with the GIL released; integrate checks for Ctrl-C
 * (and an optional cancellation event) every few hundred steps, and an
 * exception raised during it carries the steps done so far and a note
 * saying where it happened (py_integrate.c).  A force (force=, py_forces.c)
 * is parsed with the other arguments and attached to the workspace; a
 * Python callable in it keeps the GIL.
 */
#include "py_run.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* The prologue shared by the entry points                              */
/* ------------------------------------------------------------------ */
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
 * (sym_work_invalid, sym_run.report.invalid), and py_raise_invalid says so.  -1 with
 * an exception; py_run_end follows either way.  The call starts last, so a
 * failed check never runs a callback. */
int py_run_begin(PyObject *module, run *r, const char *qname, const char *pname)
{
    memset(&r->call, 0, sizeof(r->call));
    r->module = module;
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
    /* chord: the value of a Newton mode, branch: of a branch-check mode (their names:
     * _core.NEWTON_MODES, BRANCH_MODES, the core's tables; checked by the core) */
    r->opt.newton = r->chord;
    r->opt.branch = r->branch;
    r->opt.solver = r->solver;   /* _core.SOLVER_MODES' value; checked by the core */
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
int py_run_work(run *r)
{
    int st = SYM_OK;
    if (r->linear_in && r->linear_in != Py_None) {
        if (!(r->w = linear_work(r, &st)) && PyErr_Occurred()) return -1;
    } else {
        r->w = sym_work_new(&r->call.sys, r->m, &r->opt, &st);
    }
    if (!r->w) {
        py_raise_work_status(st, r->S->sys.n, r->m);
        return -1;
    }
    if (py_force_attach(&r->force, r->w) < 0) return -1;
    if (r->solver == SYM_SOLVER_TREE && sym_work_solver(r->w) != SYM_SOLVER_TREE) {
        PyErr_SetString(PyExc_ValueError,
                        "linear_solver='tree' needs the built-in pendulum_chain (a force, "
                        "if any, of held values and a tridiagonal damping) or a multibody "
                        "tree without constraints (held values and a diagonal damping), "
                        "no force callbacks; 'auto' takes it where it applies");
        return -1;
    }
    return 0;
}

/* The ValueError of a refused argument: "<what>: invalid argument (<name>)"
 * when the core named it (sym_work_invalid), else the status's text.
 * Returns NULL. */
PyObject *py_raise_invalid(const run *r, int st, const char *what)
{
    const char *name = st == SYM_EINVAL ? sym_work_invalid(r->w) : NULL;
    if (name)
        PyErr_Format(PyExc_ValueError, "%s: invalid argument (%s)", what, name);
    else
        py_raise_status(st, &r->call, NULL, NULL);
    return NULL;
}

void py_run_end(run *r)
{
    if (r->w) sym_work_free(r->w);
    r->w = NULL;
    py_call_end(&r->call);
    py_force_end(&r->force);
    Py_CLEAR(r->q);
    Py_CLEAR(r->p);
}

/* ------------------------------------------------------------------ */
/* step (and step_tangent, which takes the same arguments)              */
/* ------------------------------------------------------------------ */
/* Parse (system, q, p, h, method='simpson', rtol=0, max_iter=0, force=None,
 * t=0, branch=0), run the prologue and make the workspace.  -1 with an
 * exception; py_run_end follows either way. */
int py_one_step_begin(PyObject *module, PyObject *args, PyObject *kw, run *r)
{
    static char *kwlist[] = {"system", "q", "p", "h", "method", "rtol", "max_iter", "force",
                             "t", "branch", "chord", "solver", NULL};
    r->force_in = Py_None;
    r->force_steps = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOd|sdiOdiii", kwlist, &r->system, &r->q_in,
                                     &r->p_in, &r->h, &r->method, &r->rtol, &r->max_iter,
                                     &r->force_in, &r->t0, &r->branch, &r->chord, &r->solver))
        return -1;
    return py_run_begin(module, r, "q", "p") < 0 || py_run_work(r) < 0 ? -1 : 0;
}

/* Step k of a run at time t from (q, p) on the prepared run r: (q1, p1, q_mid,
 * status, iterations, residual, residual_rel, update, reason), q_mid None
 * without internal nodes.  A failed step is a status in the result
 * (symplectic.step raises ConvergenceError); a callback's failure is an
 * exception. */
PyObject *py_run_one_step(run *r, PyArrayObject *q, PyArrayObject *p, double h, double t,
                              long k)
{
    const npy_intp n = r->S->sys.n, nm = r->m->n_mid, d3[2] = {nm, n};
    PyObject *out[3] = {NULL}, *ret = NULL;   /* q1, p1, q_mid */
    if (!(out[0] = py_new_array(1, &n, 0)) || !(out[1] = py_new_array(1, &n, 0)) ||
        !(out[2] = py_new_array(nm ? 2 : -1, d3, 0)))
        goto done;
    sym_step_info info = {0};
    PyThreadState *ts = run_nogil(r) ? PyEval_SaveThread() : NULL;
    const int st = sym_step_at(r->w, t, k, PyArray_DATA(q), PyArray_DATA(p), h,
                               py_data_of(out[0]), py_data_of(out[1]), py_data_of(out[2]), &info);
    if (ts) PyEval_RestoreThread(ts);
    if (st == SYM_ECALLBACK) py_force_raise_recorded(&r->force);
    if (st == SYM_ECALLBACK || (st && PyErr_Occurred())) {
        py_raise_status(st, &r->call, NULL, NULL);
        goto done;
    }
    if (st == SYM_EINVAL) {   /* an argument the core refused: h, t, k, hold */
        py_raise_invalid(r, st, "step");
        goto done;
    }
    ret = Py_BuildValue("(OOOiiddds)", out[0], out[1], out[2], st, info.iterations,
                        info.residual, info.residual_rel, info.update,
                        st ? sym_strerror(st) : "");
done:
    for (int j = 0; j < 3; j++) Py_XDECREF(out[j]);
    return ret;
}

/* step(system, q, p, h, method, rtol, max_iter, force, t, branch, chord) -> (q1, p1,
 * q_mid, status, iterations, residual, residual_rel, update, reason) */
PyObject *mod_step(PyObject *module, PyObject *args, PyObject *kw)
{
    run r = {.method = "simpson", .predictor = 1, .force_in = Py_None};
    PyObject *ret = NULL;
    if (py_one_step_begin(module, args, kw, &r) == 0)
        ret = py_run_one_step(&r, r.q, r.p, r.h, r.t0, 0);
    py_run_end(&r);
    return ret;
}
