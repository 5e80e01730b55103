"""Gradients and Jacobians of user functions of a state, checked against central
differences of the user's own function: the cost terms of
``sensitivity.gradient`` (``grad_phi``, ``grad_l``) and of ``symplectic.control``
(``terminal``, ``running``) and the Jacobians of ``control.path`` constraints.

The same comparison as for a system's derivatives (the package docstring of
symplectic._model._derivcheck, :mod:`._compare`): at a point x (k,), the
function f (a float, or an array of shape S) is evaluated at
x_c +- h_c and x_c +- h_c / 2 along each coordinate, h_c = 1e-4 sqrt(max(1,
|x_c|)) (rounded so that x_c +- h_c is exact); the Richardson value F = (4
D(h/2) - D(h)) / 3 of the central differences D is compared with the supplied
derivative U (shape S + (k,), U[..., c] = df/dx_c), and U fails when

    max |U - F| > max(rtol * max(|F|, |U|), 10 e)

(rtol = 1e-6, e the finite-difference error estimate max |D(h) - D(h/2)|
+ 3 u m / h with u = 4 ulp for a user callable).  Every coordinate is
compared (4 k evaluations of f): these functions are of a state and an
input, a few dozen coordinates at most.

Who checks where (the callers decide, this module compares and words the
error): :func:`verify` compares at each given point and, if asked, at one
perturbed point x0 + dx (|dx_c| between 0.05 and 0.1 max(1, |x0_c|), fixed
mixed signs; dx/10, dx/100 where f or its derivative cannot be evaluated at
x0 + dx), away from special points of the given ones (u = 0 in a
control problem's first guess, where a sign error in dl/du gives 0 either
way).  A point where f cannot be evaluated at a difference point
(ValueError, ArithmeticError) or gives non-finite values there is not
checked; the derivative at the given points themselves is evaluated as the
caller will use it, so that its exceptions (a wrong shape) propagate.
"""
import numpy as np

from ._compare import EPS, SAFETY, ULPS, UNDEFINED, _compare, _differences, _estimate, _plan, \
    _stencil, generic
from ._hints import fmt_q
from .._errors import DerivativeError

PERTURB = 0.1                  # the perturbed point's offset relative to max(1, |x|)


def compare(f, U, x, rtol):
    """The comparison of U, the supplied derivative of f at x, with central
    differences of f (see the module): a dict with the supplied values ``U``,
    the differences ``F``, the worst ``index`` (into U), ``error``,
    ``tol``, ``scale``, ``fd_err``, ``rel`` and ``ok``; or None when f
    cannot be evaluated at a difference point (ValueError,
    ArithmeticError, non-finite values).  Other exceptions of f propagate."""
    x = np.array(x, dtype=float)
    U = np.asarray(U, dtype=float)
    D, _, h, L, _ = _plan(x, full=True)
    try:
        vals = [np.asarray(f(xi), dtype=float) for xi in _stencil(x, D, h)]
    except UNDEFINED:
        return None
    if any(v.shape != U.shape[:-1] for v in vals):
        return None             # (the caller's own evaluation names a wrong shape)
    vals = np.array(vals)
    if not np.isfinite(vals).all():
        return None
    (F, trunc, mag), = _differences([vals], L, h)                # F[c, ...] = df/dx_c
    F = np.moveaxis(F, 0, -1)
    cmp = _compare("gradient", U, F, _estimate(trunc, mag, h, ULPS * EPS), rtol)
    if not (np.isfinite(cmp["error"]) and np.isfinite(cmp["tol"])):
        return None
    return cmp


def perturbation(x):
    """dx with |dx_c| in [0.5, 1] x PERTURB max(1, |x_c|), fixed mixed signs."""
    return PERTURB * np.maximum(1.0, np.abs(x)) * generic(len(x), 1)


def verify(f, grad, points, *, rtol, callback, reference, parts, skip, fmt, quantity,
           perturb=None):
    """Compare ``grad`` with central differences of ``f`` at each of
    ``points``, a list of (x, where) -- x the flat argument (k,) of f and
    grad, ``where`` words for it ("the run's end state") -- and, with
    ``perturb`` (words for it), at a perturbed point of the first of them
    (module docstring).  Raises :class:`DerivativeError` at the first point
    that fails, the given ones first; returns the number of points compared
    (0: none could be; the caller keeps no verdict then).

    ``grad(x)`` returns U of shape S + (k,); ``parts`` names the blocks of
    its last axis, ((label, width), ...), e.g. (("dq", n), ("dp", n)):
    an entry is named ``label[i]`` (``label[row, i]`` for a Jacobian);
    ``callback``: the derivative as the user knows it ("the terminal
    cost's gradient grad_phi"); ``reference``: the function it is compared
    with ("phi(q, p)"); ``skip``: how to turn the check off; ``fmt(x)``:
    the point in the user's terms; ``quantity``: the error's ``quantity``
    ("cost_gradient", "path_jacobian")."""
    checked = []
    for x, where in points:
        x = np.array(x, dtype=float)
        cmp = compare(f, grad(x), x, rtol)
        if cmp is not None:
            checked.append((x, where, cmp))
    if perturb is not None and points:
        x0 = np.array(points[0][0], dtype=float)
        dx = perturbation(x0)
        for s in (1.0, 0.1, 0.01):
            xp = x0 + s * dx
            try:
                cmp = compare(f, grad(xp), xp, rtol)
            except UNDEFINED:
                cmp = None
            if cmp is not None:
                checked.append((xp, perturb, cmp))
                break
    for x, where, cmp in checked:
        if not cmp["ok"]:
            raise error(cmp, x, where, rtol=rtol, callback=callback, reference=reference,
                        parts=parts, skip=skip, fmt=fmt, quantity=quantity)
    return len(checked)


def component(index, parts):
    """(label, i...) of the entry ``index`` of U: the block of the last axis
    that holds it, and the index within that block (after any leading ones)."""
    *lead, c = index
    start = 0
    for label, width in parts:
        if c < start + width:
            return (label, *lead, c - start)
        start += width
    raise IndexError(f"index {index} outside the parts {parts}")


def error(cmp, x, where, *, rtol, callback, reference, parts, skip, fmt, quantity):
    """The DerivativeError of a failed comparison at x."""
    idx = cmp["index"]
    label, *ix = component(idx, parts)
    name = f"{label}[{', '.join(str(i) for i in ix)}]"
    U, F = float(cmp["U"][idx]), float(cmp["F"][idx])
    msg = (f"{callback} disagrees with central differences of {reference} at {where}, "
           f"{fmt(x)}: its entry {name} is {U:.12g}, the differences give {F:.12g} "
           f"(difference {cmp['error']:.3g} > tolerance {cmp['tol']:.3g} = max(rtol {rtol:g} x "
           f"largest entry {cmp['scale']:.3g}, {SAFETY:g} x the finite-difference error "
           f"estimate {cmp['fd_err']:.3g})).")
    hint = None
    if float(np.abs(cmp["U"] + cmp["F"]).max()) <= cmp["tol"]:
        hint = "the negative of the differences in every entry (a flipped sign)"
        msg += f" It is {hint}."
    msg += f" Fix it, or skip this check with {skip}."
    return DerivativeError(msg, callback=callback, quantity=quantity, index=(label, *ix),
                           supplied=U, finite_difference=F, q=x[:parts[0][1]].copy(),
                           error=cmp["error"], tolerance=cmp["tol"], layout=hint,
                           report={callback: cmp["rel"]})


def fmt_state(**parts):
    """'q = [...], p = [...]' (scalars as numbers) for the messages."""
    return ", ".join(f"{k} = {fmt_q(np.atleast_1d(v)) if np.ndim(v) else f'{float(v):.10g}'}"
                     for k, v in parts.items())
