/*
 * py_forces.c -- the force= argument of the run entry points (py_run.c):
 * a force description from symplectic/_forces.py turned into the core's
 * sym_force (sym_force_api.h), and the thunks of its callback forms.
 *
 * The description is a dict (symplectic._forces.Force.spec builds it; the
 * binding checks every entry again, for memory safety):
 *
 *   "damping"  None or an (n, n) real array D:   F += -D qdot
 *   "hold"     None or a (rows, P n) real array: F += hold[k] on step k
 *              (P = "hold_points", default 1), or its block i at the
 *              step's force point i (P = the method's force points)
 *   "terms"    a list of at most SYM_FORCE_MAX_TERMS tuples
 *                ("python", f, jac or None, flags)   f(t, q, qdot) -> (n,),
 *                                  jac(t, q, qdot) -> (dF/dq, dF/dqdot)
 *                ("cfunc", address, user_data address or None, provides, flags)
 *                                  a compiled sym_force_fn (no Python, GIL
 *                                  released)
 *                ("builtin", name, params array)   a row of the core's
 *                                  built-in force terms (sym_forces.c)
 *   "work", "impulse"  optional outputs of integrate: float64 arrays
 *                (n_steps + 1,) and (n_steps + 1, n), C-contiguous, writeable
 *
 * Python callables receive t (float) and fresh copies of q and qdot; their
 * results are converted and checked (shape, real, finite) with messages
 * that name the callable, the step and its time.  A compiled term's
 * nonzero return or non-finite output stops the run with a message saying
 * which, where and when.  Everything the description refers to is held
 * (new references) until py_force_end.
 */
#include "py_core.h"
#include "sym_builtins.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Python callables                                                     */
/* ------------------------------------------------------------------ */
/* "force(t, q, qdot) at step 4 (t = 0.04)" */
static void label(char *buf, size_t len, const char *what, double t, long k)
{
    snprintf(buf, len, "%s at step %ld (t = %.17g)", what, k, t);
}

/* fn(t, q, v) on fresh copies of q and v. */
static PyObject *call3(PyObject *fn, double t, const double *q, const double *v, int n)
{
    PyObject *to = PyFloat_FromDouble(t), *qa = py_vec_copy(q, n), *va = py_vec_copy(v, n);
    PyObject *res = NULL;
    if (to && qa && va) res = PyObject_CallFunctionObjArgs(fn, to, qa, va, NULL);
    Py_XDECREF(to);
    Py_XDECREF(qa);
    Py_XDECREF(va);
    return res;
}

/* o as a checked real array of nd dimensions n long, copied to out. */
static int take(PyObject *o, const char *name, int nd, int n, const double *q, double *out)
{
    const npy_intp dims[2] = {n, n};
    PyArrayObject *a = py_real_array(o, &py_msgs_returned, name, nd, dims, q, n);
    if (!a) return -1;
    memcpy(out, PyArray_DATA(a), sizeof(double) * (size_t)PyArray_SIZE(a));
    Py_DECREF(a);
    return 0;
}

static int python_term(double t, long k, const double *q, const double *v, unsigned need,
                       double *F, double *Fq, double *Fv, void *params)
{
    py_fterm *pt = params;
    const int n = pt->n;
    char name[160];
    if (need & SYM_FORCE_F) {
        PyObject *res = call3(pt->fn, t, q, v, n);
        if (!res) return -1;
        label(name, sizeof name, "force(t, q, qdot)", t, k);
        const int st = take(res, name, 1, n, q, F);
        Py_DECREF(res);
        if (st) return -1;
    }
    if (need & (SYM_FORCE_DQ | SYM_FORCE_DV)) {
        PyObject *res = call3(pt->jac, t, q, v, n);
        if (!res) return -1;
        label(name, sizeof name, "force_jac(t, q, qdot)", t, k);
        if (!PyTuple_Check(res) && !PyList_Check(res) && !PyArray_Check(res)) {
            PyErr_Format(PyExc_TypeError, "%s returned %S; expected a pair (dF/dq, dF/dqdot) of "
                         "(%d, %d) arrays", name, (PyObject *)Py_TYPE(res), n, n);
            Py_DECREF(res);
            return -1;
        }
        PyObject *seq = PySequence_Fast(res, "force_jac");
        Py_DECREF(res);
        if (!seq) return -1;
        int st = 0;
        if (PySequence_Fast_GET_SIZE(seq) != 2) {
            PyErr_Format(PyExc_ValueError, "%s returned %zd items; expected a pair (dF/dq, "
                         "dF/dqdot) of (%d, %d) arrays", name, PySequence_Fast_GET_SIZE(seq), n, n);
            st = -1;
        }
        char nq[200], nv[200];
        label(nq, sizeof nq, "force_jac(t, q, qdot)[0] (dF/dq)", t, k);
        label(nv, sizeof nv, "force_jac(t, q, qdot)[1] (dF/dqdot)", t, k);
        if (!st && (need & SYM_FORCE_DQ))
            st = take(PySequence_Fast_GET_ITEM(seq, 0), nq, 2, n, q, Fq);
        if (!st && (need & SYM_FORCE_DV))
            st = take(PySequence_Fast_GET_ITEM(seq, 1), nv, 2, n, q, Fv);
        Py_DECREF(seq);
        if (st) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Compiled callbacks                                                   */
/* ------------------------------------------------------------------ */
static int all_finite(const double *x, size_t m)
{
    for (size_t i = 0; i < m; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* The user's function, its nonzero return or non-finite output recorded
 * (the first one) for the message. */
static int cfunc_term(double t, long k, const double *q, const double *v, unsigned need,
                      double *F, double *Fq, double *Fv, void *params)
{
    py_fterm *pt = params;
    const size_t n = (size_t)pt->n;
    int rc = pt->cfn(t, k, q, v, need, F, Fq, Fv, pt->data);
    int bad = 0;
    if (!rc)
        bad = ((need & SYM_FORCE_F) && !all_finite(F, n)) ||
              ((need & SYM_FORCE_DQ) && !all_finite(Fq, n * n)) ||
              ((need & SYM_FORCE_DV) && !all_finite(Fv, n * n));
    if ((rc || bad) && !pt->failed) {
        pt->failed = 1;
        pt->rc = rc;
        pt->nonfinite = bad;
        pt->need = need;
        pt->t = t;
        pt->k = k;
    }
    return rc ? rc : bad;
}

/* ------------------------------------------------------------------ */
/* The description                                                      */
/* ------------------------------------------------------------------ */
/* An (rows, n) float64 array from o (rows < 0: any), C-contiguous. */
static PyArrayObject *matrix(PyObject *o, const char *what, npy_intp rows, int n)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) return NULL;
    if (PyArray_NDIM(a) != 2 || (rows >= 0 && PyArray_DIM(a, 0) != rows) ||
        PyArray_DIM(a, 1) != n) {
        char got[128];
        py_shape_str(got, sizeof got, PyArray_NDIM(a), PyArray_DIMS(a));
        PyErr_Format(PyExc_ValueError, "force: %s must have shape (%s, %d), got %s", what,
                     rows >= 0 ? "n" : "rows", n, got);
        Py_DECREF(a);
        return NULL;
    }
    if (py_first_nonfinite(PyArray_DATA(a), PyArray_SIZE(a)) >= 0) {
        PyErr_Format(PyExc_ValueError, "force: %s contains non-finite values", what);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* An output array: float64, C-contiguous, writeable, of the given shape. */
static PyArrayObject *output(PyObject *o, const char *what, int nd, const npy_intp *dims)
{
    if (o == NULL || o == Py_None) return NULL;
    int ok = PyArray_Check(o);
    PyArrayObject *a = (PyArrayObject *)o;
    ok = ok && PyArray_TYPE(a) == NPY_DOUBLE && PyArray_IS_C_CONTIGUOUS(a) &&
         PyArray_ISWRITEABLE(a) && PyArray_NDIM(a) == nd;
    for (int i = 0; ok && i < nd; i++) ok = PyArray_DIM(a, i) == dims[i];
    if (!ok) {
        char want[128];
        py_shape_str(want, sizeof want, nd, dims);
        PyErr_Format(PyExc_ValueError, "force: '%s' must be a writeable C-contiguous float64 "
                     "array of shape %s", what, want);
        return NULL;
    }
    Py_INCREF(o);
    return a;
}

static int term_flags(PyObject *o, unsigned *flags)
{
    const unsigned long v = PyLong_AsUnsignedLong(o);
    if (v == (unsigned long)-1 && PyErr_Occurred()) return -1;
    *flags = (unsigned)v & (SYM_FORCE_NO_Q | SYM_FORCE_NO_V | SYM_FORCE_DQ | SYM_FORCE_DV);
    return 0;
}

/* ("python", f, jac or None, flags) into pf->f.term[i] */
static int python_term_of(py_force *pf, int i, PyObject *t)
{
    sym_force_term *tm = &pf->f.term[i];
    py_fterm *pt = &pf->pt[i];
    PyObject *fn = PyTuple_GET_ITEM(t, 1), *jac = PyTuple_GET_ITEM(t, 2);
    if (py_check_callable(fn, "force", 1) < 0 || py_check_callable(jac, "force_jac", 0) < 0 ||
        term_flags(PyTuple_GET_ITEM(t, 3), &tm->flags) < 0)
        return -1;
    tm->flags &= SYM_FORCE_NO_Q | SYM_FORCE_NO_V;
    Py_INCREF(fn);
    pt->fn = fn;
    if (jac != Py_None) {
        Py_INCREF(jac);
        pt->jac = jac;
        tm->provides = SYM_FORCE_DQ | SYM_FORCE_DV;
    }
    tm->fn = python_term;
    tm->params = pt;
    pf->python = 1;
    return 0;
}

/* ("cfunc", address, user_data address or None, provides, flags) into
 * pf->f.term[i] */
static int cfunc_term_of(py_force *pf, int i, PyObject *t)
{
    sym_force_term *tm = &pf->f.term[i];
    py_fterm *pt = &pf->pt[i];
    void *fp = PyLong_AsVoidPtr(PyTuple_GET_ITEM(t, 1));
    if (!fp) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "force: a compiled term needs a nonzero "
                                              "function address");
        return -1;
    }
    void *data = NULL;
    if (PyTuple_GET_ITEM(t, 2) != Py_None) {
        data = PyLong_AsVoidPtr(PyTuple_GET_ITEM(t, 2));
        if (!data && PyErr_Occurred()) return -1;
    }
    unsigned provides, flags;
    if (term_flags(PyTuple_GET_ITEM(t, 3), &provides) < 0 ||
        term_flags(PyTuple_GET_ITEM(t, 4), &flags) < 0)
        return -1;
    /* converting a data pointer to a function pointer: as for System.from_cfunc */
    memcpy(&pt->cfn, &fp, sizeof fp);
    pt->data = data;
    tm->fn = cfunc_term;
    tm->params = pt;
    tm->provides = provides & (SYM_FORCE_DQ | SYM_FORCE_DV);
    tm->flags = flags & (SYM_FORCE_NO_Q | SYM_FORCE_NO_V);
    return 0;
}

/* ("builtin", name, params array) into pf->f.term[i] (its parameters held
 * in pf->pars[i]) */
static int builtin_term_of(py_force *pf, int i, PyObject *t, int n)
{
    sym_force_term *tm = &pf->f.term[i];
    const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 1));
    if (!name) return -1;
    const sym_force_builtin *b = sym_force_builtin_find(name);
    if (!b) {
        PyErr_Format(PyExc_ValueError, "force: unknown built-in force term '%s'", name);
        return -1;
    }
    if (b->n && b->n != n) {
        PyErr_Format(PyExc_ValueError, "force: the built-in term '%s' applies to n = %d, "
                     "not %d", name, b->n, n);
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(PyTuple_GET_ITEM(t, 2), NPY_DOUBLE,
                                                         NPY_ARRAY_IN_ARRAY);
    if (!a) return -1;
    pf->pars[i] = a;
    if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != b->npar || b->check(n, PyArray_DATA(a))) {
        PyErr_Format(PyExc_ValueError, "force: bad parameters for the built-in term '%s'",
                     name);
        return -1;
    }
    *tm = b->term;
    tm->params = PyArray_DATA(a);
    return 0;
}

/* One term tuple into pf->f.term[i], by its kind. */
static int parse_term(py_force *pf, int i, PyObject *t, int n)
{
    const char *kind;
    pf->pt[i].n = n;
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) < 1 ||
        !(kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 0)))) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "force: each term must be a tuple (kind, ...)");
        return -1;
    }
    const Py_ssize_t len = PyTuple_GET_SIZE(t);
    if (strcmp(kind, "python") == 0 && len == 4) return python_term_of(pf, i, t);
    if (strcmp(kind, "cfunc") == 0 && len == 5) return cfunc_term_of(pf, i, t);
    if (strcmp(kind, "builtin") == 0 && len == 3) return builtin_term_of(pf, i, t, n);
    PyErr_Format(PyExc_ValueError, "force: unknown term %R", t);
    return -1;
}

/* spec (a dict, or None: no force) for n degrees of freedom; steps >= 0 is
 * the number of steps of an integration (a held force needs that many rows)
 * whose work and impulse outputs have `rows` rows (the stored ones), -1 for
 * one step (no outputs).  -1 with an exception; py_force_end follows either
 * way. */
int py_force_begin(PyObject *spec, int n, long steps, long rows, py_force *pf)
{
    memset(pf, 0, sizeof(*pf));
    if (spec == NULL || spec == Py_None) return 0;
    if (!PyDict_Check(spec)) {
        PyErr_SetString(PyExc_TypeError, "force must be a dict made by symplectic._forces");
        return -1;
    }
    pf->active = 1;
    PyObject *o;
    if ((o = PyDict_GetItemString(spec, "damping")) && o != Py_None) {
        if (!(pf->damping = matrix(o, "the damping matrix", n, n))) return -1;
        pf->f.damping = PyArray_DATA(pf->damping);
    }
    if ((o = PyDict_GetItemString(spec, "hold")) && o != Py_None) {
        long hp = 1;   /* values a step: one, or one per force point ("hold_points") */
        PyObject *po = PyDict_GetItemString(spec, "hold_points");
        if (po && po != Py_None && ((hp = PyLong_AsLong(po)) < 1 || hp > 64)) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "force: hold_points must be 1 .. 64, got %ld", hp);
            return -1;
        }
        if (!(pf->hold = matrix(o, "the held force array", -1, (int)hp * n))) return -1;
        pf->f.hold_points = (int)hp;
        pf->f.hold = PyArray_DATA(pf->hold);
        pf->f.hold_rows = (long)PyArray_DIM(pf->hold, 0);
        const long need = steps < 0 ? 1 : steps;
        if (pf->f.hold_rows < need) {
            PyErr_Format(PyExc_ValueError, "force: the held force array has %ld rows, fewer "
                         "than the %ld steps", pf->f.hold_rows, need);
            return -1;
        }
    }
    if ((o = PyDict_GetItemString(spec, "terms")) && o != Py_None) {
        PyObject *seq = PySequence_Fast(o, "force: terms must be a sequence");
        if (!seq) return -1;
        const Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
        if (m > SYM_FORCE_MAX_TERMS) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "force: at most %d callback terms, got %zd",
                         SYM_FORCE_MAX_TERMS, m);
            return -1;
        }
        for (Py_ssize_t i = 0; i < m; i++) {
            pf->f.nterms = (int)i + 1;   /* released by py_force_end even if this one fails */
            if (parse_term(pf, (int)i, PySequence_Fast_GET_ITEM(seq, i), n) < 0) {
                Py_DECREF(seq);
                return -1;
            }
        }
        Py_DECREF(seq);
    }
    if (steps >= 0) {
        const npy_intp dw = rows, di[2] = {rows, n};
        if (!(pf->work = output(PyDict_GetItemString(spec, "work"), "work", 1, &dw)) &&
            PyErr_Occurred())
            return -1;
        if (!(pf->impulse = output(PyDict_GetItemString(spec, "impulse"), "impulse", 2, di)) &&
            PyErr_Occurred())
            return -1;
    }
    return 0;
}

void py_force_end(py_force *pf)
{
    Py_CLEAR(pf->damping);
    Py_CLEAR(pf->hold);
    Py_CLEAR(pf->work);
    Py_CLEAR(pf->impulse);
    for (int i = 0; i < SYM_FORCE_MAX_TERMS; i++) {
        Py_CLEAR(pf->pt[i].fn);
        Py_CLEAR(pf->pt[i].jac);
        Py_CLEAR(pf->pars[i]);
    }
    pf->active = 0;
}

/* Attach the force to a workspace: -1 with an exception. */
int py_force_attach(py_force *pf, sym_work *w)
{
    if (!pf->active) return 0;
    const int st = sym_work_set_force(w, &pf->f);
    if (!st) return 0;
    py_raise_status(st, NULL, "cannot attach the force: ", NULL);
    return -1;
}

/* A kept run's force replaced by spec (None: none) on its workspace w (the
 * predictor history starts again: sym_work_set_force).  The old force is
 * detached and released first (its terms' records are parsed in place:
 * the core keeps pointers to them), so that on an error -- which the
 * Python caller's own checks of spec make unlikely -- the run is left with
 * no force.  -1 with an exception. */
int py_force_replace(py_force *pf, PyObject *spec, int n, sym_work *w)
{
    sym_work_set_force(w, NULL);
    py_force_end(pf);
    if (py_force_begin(spec, n, -1, 0, pf) < 0 || py_force_attach(pf, w) < 0) {
        sym_work_set_force(w, NULL);
        py_force_end(pf);
        return -1;
    }
    return 0;
}

/* The held values of a kept run's attached force pointed at o (None:
 * removed), row 0 held during step k0 (sym_work_set_hold): a (rows, P n)
 * real array, P the force's hold_points (n for one value a step), used in
 * place when it is float64 and C-contiguous.  -1 with an exception. */
int py_force_set_hold(py_force *pf, sym_work *w, PyObject *o, long k0, int n)
{
    if (!pf->active) {
        PyErr_SetString(PyExc_ValueError, "set_hold: this run has no force (attach one with a "
                        "held part first)");
        return -1;
    }
    if (k0 < 0) {
        PyErr_Format(PyExc_ValueError, "set_hold: k0 must be >= 0, got %ld", k0);
        return -1;
    }
    PyArrayObject *a = NULL;
    const int hp = pf->f.hold_points > 1 ? pf->f.hold_points : 1;
    if (o != Py_None && !(a = matrix(o, "the held force array", -1, hp * n))) return -1;
    const long rows = a ? (long)PyArray_DIM(a, 0) : 0;
    const int st = sym_work_set_hold(w, a ? PyArray_DATA(a) : NULL, rows, k0);
    if (st) {
        Py_XDECREF(a);
        py_raise_status(st, NULL, "set_hold: ", NULL);
        return -1;
    }
    Py_XSETREF(pf->hold, a);
    pf->f.hold = a ? PyArray_DATA(a) : NULL;
    pf->f.hold_rows = rows;
    pf->f.hold_k0 = a ? k0 : 0;
    return 0;
}

/* The error of a compiled term's recorded failure; 1 if one was raised. */
int py_force_raise_recorded(const py_force *pf)
{
    if (PyErr_Occurred()) return 0;
    for (int i = 0; i < pf->f.nterms; i++) {
        const py_fterm *pt = &pf->pt[i];
        if (!pt->failed) continue;
        char where[96];
        snprintf(where, sizeof where, "at step %ld (t = %.17g)", pt->k, pt->t);
        if (pt->nonfinite)
            PyErr_Format(PyExc_ValueError, "the compiled force callback returned a non-finite "
                         "value (nan or inf) %s (need = %u)", where, pt->need);
        else
            PyErr_Format(PyExc_RuntimeError, "the compiled force callback returned %d "
                         "(nonzero: stop) %s (need = %u)", pt->rc, where, pt->need);
        return 1;
    }
    return 0;
}

/* Forget the failure records of the last call (a kept force, py_work.c Work). */
void py_force_clear_records(py_force *pf)
{
    for (int i = 0; i < SYM_FORCE_MAX_TERMS; i++) {
        pf->pt[i].failed = pf->pt[i].rc = pf->pt[i].nonfinite = 0;
    }
}

/* The references a kept force holds, for the garbage collector. */
int py_force_traverse(const py_force *pf, visitproc visit, void *arg)
{
    Py_VISIT(pf->damping);
    Py_VISIT(pf->hold);
    Py_VISIT(pf->work);
    Py_VISIT(pf->impulse);
    for (int i = 0; i < SYM_FORCE_MAX_TERMS; i++) {
        Py_VISIT(pf->pt[i].fn);
        Py_VISIT(pf->pt[i].jac);
        Py_VISIT(pf->pars[i]);
    }
    return 0;
}
