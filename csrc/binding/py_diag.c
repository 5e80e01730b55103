/*
 * py_diag.c -- the diagnostics of symplectic._core: newton_system (the
 * residual and Jacobian of a method's Newton system) and step_tangent (a
 * step with its tangent map), on the run prologue of py_run.c; and
 * adjoint_sweep, the backward sweep over a run's step derivatives.
 */
#include "py_run.h"
#include "sym_params.h"

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
    if (py_run_begin(module, &r, "q", "p") < 0 || py_run_work(&r) < 0) goto done;
    const int nu = sym_newton_size(r.w);
    if (!(x = py_as_vector(xo, nu, "X"))) goto done;
    const npy_intp d1 = nu, d2[2] = {nu, nu};
    if (!(R = py_new_array(1, &d1, 0)) || !(J = py_new_array(2, d2, 0))) goto done;
    int st = sym_work_set_time(r.w, r.t0, 0);   /* a force's time */
    if (!st) st = sym_newton_system(r.w, PyArray_DATA(r.q), PyArray_DATA(r.p), r.h,
                                     PyArray_DATA(x), py_data_of(R), py_data_of(J));
    if (st == SYM_ECALLBACK) py_force_raise_recorded(&r.force);
    if (st == SYM_EINVAL && !PyErr_Occurred())
        py_raise_invalid(&r, st, "newton_system");
    else if (st)
        py_raise_status(st, &r.call, NULL, NULL);
    else
        ret = PyTuple_Pack(2, R, J);
done:
    py_run_end(&r);
    Py_XDECREF(x);
    Py_XDECREF(R);
    Py_XDECREF(J);
    return ret;
}

/* newton_direction(system, q, p, h, X, b, method, force=None, t=0, solver=0) -> (R, rnorm,
 * x, sign): the residual at X and its norm, x = J^{-1} b and the sign of det J through the
 * linear algebra the run's steps take (solver: _core.SOLVER_MODES' value) --
 * diagnostics for tests */
PyObject *mod_newton_direction(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"system", "q", "p", "h", "X", "b", "method", "force", "t", "solver",
                             NULL};
    run r = {.predictor = 1, .check = has_newton_system, .force_in = Py_None, .force_steps = -1};
    PyObject *xo, *bo, *R = NULL, *x = NULL, *ret = NULL;
    PyArrayObject *X = NULL, *b = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOdOOs|Odi", kwlist, &r.system, &r.q_in,
                                     &r.p_in, &r.h, &xo, &bo, &r.method, &r.force_in, &r.t0,
                                     &r.solver))
        return NULL;
    if (py_run_begin(module, &r, "q", "p") < 0 || py_run_work(&r) < 0) goto done;
    const int nu = sym_newton_size(r.w);
    if (!(X = py_as_vector(xo, nu, "X")) || !(b = py_as_vector(bo, nu, "b"))) goto done;
    const npy_intp d1 = nu;
    if (!(R = py_new_array(1, &d1, 0)) || !(x = py_new_array(1, &d1, 0))) goto done;
    memcpy(py_data_of(x), PyArray_DATA(b), sizeof(double) * (size_t)nu);
    int sign = 0;
    double rnorm = 0.0;
    int st = sym_work_set_time(r.w, r.t0, 0);   /* a force's time */
    if (!st) st = sym_newton_direction(r.w, PyArray_DATA(r.q), PyArray_DATA(r.p), r.h,
                                        PyArray_DATA(X), py_data_of(R), &rnorm, py_data_of(x),
                                        &sign);
    if (st == SYM_ECALLBACK) py_force_raise_recorded(&r.force);
    if (st == SYM_EINVAL && !PyErr_Occurred())
        py_raise_invalid(&r, st, "newton_direction");
    else if (st)
        py_raise_status(st, &r.call, NULL, NULL);
    else
        ret = Py_BuildValue("(OdOi)", R, rnorm, x, sign);
done:
    py_run_end(&r);
    Py_XDECREF(X);
    Py_XDECREF(b);
    Py_XDECREF(R);
    Py_XDECREF(x);
    return ret;
}

/* step_tangent(system, q, p, h, method, rtol, max_iter, force, t, branch, chord) -> (q1, p1,
 * D) */
PyObject *mod_step_tangent(PyObject *module, PyObject *args, PyObject *kw)
{
    run r = {.method = "simpson", .predictor = 1, .force_in = Py_None};
    PyObject *out[3] = {NULL}, *ret = NULL;   /* q1, p1, D */
    if (py_one_step_begin(module, args, kw, &r) < 0) goto done;
    const npy_intp n = r.S->sys.n, d2[2] = {2 * n, 2 * n};
    if (!(out[0] = py_new_array(1, &n, 0)) || !(out[1] = py_new_array(1, &n, 0)) ||
        !(out[2] = py_new_array(2, d2, 0)))
        goto done;
    sym_step_info info = {0};
    int st = sym_work_set_time(r.w, r.t0, 0);
    if (!st)
        st = sym_step_tangent(r.w, PyArray_DATA(r.q), PyArray_DATA(r.p), r.h, py_data_of(out[0]),
                              py_data_of(out[1]), py_data_of(out[2]), &info);
    if (st == SYM_ECALLBACK) py_force_raise_recorded(&r.force);
    if (st == SYM_EINVAL && !PyErr_Occurred()) {
        py_raise_invalid(&r, st, "step_tangent");
    } else if (st) {
        char after[48];
        snprintf(after, sizeof after, " (residual %.3g)", info.residual);
        py_raise_status(st, &r.call, "step_tangent failed: ", after);
    } else {
        ret = PyTuple_Pack(3, out[0], out[1], out[2]);
    }
done:
    py_run_end(&r);
    for (int k = 0; k < 3; k++) Py_XDECREF(out[k]);
    return ret;
}

/* adjoint_sweep's optional parameter blocks pjac (N, 2n, n_par), or NULL
 * with an exception; *np their number. */
static PyArrayObject *param_blocks(PyObject *po, npy_intp N, npy_intp m, int *np)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(po, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) return NULL;
    if (PyArray_NDIM(a) != 3 || PyArray_DIM(a, 0) != N || PyArray_DIM(a, 1) != m ||
        PyArray_DIM(a, 2) < 1 || PyArray_DIM(a, 2) > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "adjoint_sweep: pjac must be (N, 2n, n_par)");
        Py_DECREF(a);
        return NULL;
    }
    *np = (int)PyArray_DIM(a, 2);
    return a;
}

/* adjoint_sweep(jacobians, lam_end, src=None, pjac=None) -> (lam0, grad_u or
 * None), and grad_par (n_par) third with pjac: sym_adjoint_sweep_params over
 * jacobians (N, 2n, (2 + P) n), P = 0, 1 or the force points, as integrate's
 * jacobians= fills it), lam_end
 * (2n), src None or (N, 2n), pjac None or (N, 2n, n_par) (params=). */
PyObject *mod_adjoint_sweep(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"jacobians", "lam_end", "src", "pjac", NULL};
    PyObject *jo, *lo, *so = Py_None, *po = Py_None, *lam0 = NULL, *gu = NULL, *gp = NULL,
             *ret = NULL;
    PyArrayObject *jac = NULL, *lam = NULL, *src = NULL, *pj = NULL;
    int np = 0;
    (void)module;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OO", kwlist, &jo, &lo, &so, &po)) return NULL;
    const int flags = NPY_ARRAY_IN_ARRAY;
    jac = (PyArrayObject *)PyArray_FROM_OTF(jo, NPY_DOUBLE, flags);
    lam = (PyArrayObject *)PyArray_FROM_OTF(lo, NPY_DOUBLE, flags);
    if (!jac || !lam) goto done;
    const npy_intp m = PyArray_NDIM(lam) == 1 ? PyArray_DIM(lam, 0) : 0, n = m / 2;
    const npy_intp N = PyArray_NDIM(jac) == 3 ? PyArray_DIM(jac, 0) : -1;
    const npy_intp c = N >= 0 ? PyArray_DIM(jac, 2) : 0;
    if (m < 2 || m % 2 || m > INT_MAX || N < 0 || PyArray_DIM(jac, 1) != m || c < m ||
        c % n || c / n - 2 > 64) {
        PyErr_SetString(PyExc_ValueError, "adjoint_sweep: lam_end must be (2n,) and jacobians "
                        "(N, 2n, 2n) or (N, 2n, (2 + P) n)");
        goto done;
    }
    if (so != Py_None) {
        src = (PyArrayObject *)PyArray_FROM_OTF(so, NPY_DOUBLE, flags);
        if (!src) goto done;
        if (PyArray_NDIM(src) != 2 || PyArray_DIM(src, 0) != N || PyArray_DIM(src, 1) != m) {
            PyErr_SetString(PyExc_ValueError, "adjoint_sweep: src must be (N, 2n)");
            goto done;
        }
    }
    if (po != Py_None && !(pj = param_blocks(po, N, m, &np))) goto done;
    const int with_u = (int)(c / n - 2);   /* u blocks: 0, 1, or P force points */
    const npy_intp du[2] = {N, c - m}, dp = np;
    if (!(lam0 = py_new_array(1, &m, 0)) || (with_u && !(gu = py_new_array(2, du, 0))) ||
        (pj && !(gp = py_new_array(1, &dp, 0))))
        goto done;
    const int st = sym_adjoint_sweep_params(
        (int)n, (long)N, with_u, PyArray_DATA(jac), PyArray_DATA(lam),
        src ? PyArray_DATA(src) : NULL, py_data_of(lam0), gu ? py_data_of(gu) : NULL, np,
        pj ? PyArray_DATA(pj) : NULL, gp ? py_data_of(gp) : NULL);
    if (st) {
        py_raise_status(st, NULL, "adjoint_sweep failed: ", NULL);
        goto done;
    }
    if (pj)
        ret = Py_BuildValue("(OOO)", lam0, gu ? gu : Py_None, gp);
    else
        ret = Py_BuildValue("(OO)", lam0, gu ? gu : Py_None);
done:
    Py_XDECREF(jac);
    Py_XDECREF(lam);
    Py_XDECREF(src);
    Py_XDECREF(pj);
    Py_XDECREF(lam0);
    Py_XDECREF(gu);
    Py_XDECREF(gp);
    return ret;
}
