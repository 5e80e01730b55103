"""Derivatives checked before they are trusted.

One implementation serves :meth:`System.check_derivatives` and the check that
:func:`step`, :func:`integrate`, :func:`integrate_many` (and the exact
:func:`analysis.tangent_map`) run the first time a system with user-supplied
derivatives is used.  A derivative laid out in the wrong order (``mass_grad``
as ``[i, j, k]`` instead of ``[k, i, j]``) still gives a symplectic map that
conserves energy, so no later check sees it; this one compares every supplied
derivative, *as the core uses it* (through the System's own evaluation), with
central finite differences.

What is compared at a point q (g a fixed generic vector):

- ``mass_grad``: the tensor T[k, i, j] = dM_ij/dq_k rebuilt from the core's
  contraction A(q, e_j)[i, k] = sum_j' T[k, i, j'] (e_j)_j', against
  differences of M;
- ``potential_grad``: grad V against differences of V;
- ``mass_hess``: H(q, g), the Hessian of 1/2 g^T M(q) g, against differences
  of 1/2 A(q, g)^T g (its gradient, from the mass_grad just checked); for the
  message the full tensor -- its part symmetric in (i, j), all the core uses
  -- is rebuilt from H(q, e_i + e_j);
- ``potential_hess``: against differences of grad V.

Up to n = NFULL every partial derivative is compared (differences along each
axis); beyond, NDIR fixed generic directions d_r (and contraction vectors
g_s for A) keep the cost at a fixed number of evaluations however large n
is -- a wrong layout shows in a generic projection -- and the full tensors
are rebuilt only for the message.

Finite differences and their error estimate: central differences D(h) and
D(h/2) along each direction, h = 1e-4 sqrt(max(1, |q_c|)) (rounded so that
q_c +- h is exact), the Richardson value F = (4 D(h/2) - D(h)) / 3 (error
O(h^4)) and the error estimate

    e = max |D(h) - D(h/2)| + 3 u m / h.

The first term is h^2 |f'''| / 8 in the asymptotic range -- far above the
truncation error of F -- and grows with the error of F where the differences
are not in that range (a kink, a steep function, a step across a
singularity).  The second bounds the rounding error of F: u is the relative
accuracy of f (4 ulp for a user callable, eps^(2/3) for a first derivative
the package forms by differences itself) and m the size of the terms f is
computed from, max |f| + max |L f'| + max |f''| (L = max(1, |q_c|)):
k (1 - cos q) near q = 0 is tiny but rounds like k, and sin(q) at
q = 1000 pi carries the rounding of q.  A supplied derivative U fails when

    max |U - F| > max(rtol * max(|F|, |U|), 10 e)

(rtol = 1e-6): relative to the largest entry of the quantity, with an
absolute floor ten times the estimated finite-difference error.  At a
near-singular point (the Lagrange top at theta ~ 0, where every entry of dM
is O(theta)) the floor, not rtol, decides, so correct derivatives pass.  On
the test systems correct derivatives stay more than 20 times below the
tolerance (36 in the last run), at random, near-singular and large-|q|
states (tests/model/test_derivcheck.py).

The first-use check runs at the initial q and at a perturbed q + dq
(|dq_c| between 0.05 and 0.1 max(1, |q_c|), fixed mixed signs; dq/10 and
dq/100 if the callbacks cannot be evaluated there), away from the special
points where a wrong derivative can look right (grad V = 0 at an
equilibrium).  First derivatives are judged at both points before any
Hessian, whose reference they are.

This module decides what is checked, when, and what the error says; the
comparison at one point is :mod:`symplectic._model._derivcheck._compare`, the words for a
wrong layout :mod:`symplectic._model._derivcheck._hints`.  The same
differences, steps and tolerance (RTOL) check the gradients of user cost
terms and the Jacobians of path constraints (``sensitivity.gradient``,
``symplectic.control``): :mod:`symplectic._model._derivcheck._gradients`,
which those callers drive.
"""
import sys

import numpy as np

from ... import _engine
from ._compare import QUANTITIES, SAFETY, Evaluator, check_point, default_g, diagnose, generic
from ._hints import LABELS, fmt_q, index_text, layout_hint
from .._errors import DerivativeError

_V = _engine.NEED_V

RTOL = 1e-6
PERTURB = 0.1                  # size of the perturbation dq relative to max(1, |q|)

_REF = {"mass_grad": "M(q)", "potential_grad": "V(q)", "potential_hess": "grad V(q)"}
_FORM_NAMES = {
    "combined": dict(mass_grad="the combined callable's dM", mass_hess="the combined callable's d2M",
                     potential_grad="the combined callable's dV",
                     potential_hess="the combined callable's d2V"),
    "vectorized": dict(mass_grad="vectorized 'mass_grad'", mass_hess="vectorized 'mass_hess'",
                       potential_grad="vectorized 'potential_grad'",
                       potential_hess="vectorized 'potential_hess'"),
    "cfunc": dict(mass_grad="the compiled callback's A (need bit 2)",
                  mass_hess="the compiled callback's H (need bit 4)",
                  potential_grad="the compiled callback's dV (need bit 16)",
                  potential_hess="the compiled callback's d2V (need bit 32)"),
    "builtin": dict(mass_grad="mass_dir", mass_hess="mass_hess_dir",
                    potential_grad="potential_grad", potential_hess="potential_hess"),
}


# ---------------------------------------------------------------- public entry points
def ensure(system, q, check=True):
    """The first-use check: run it unless disabled, skipped or already passed.

    Called by step/integrate/integrate_many with the initial q (validated).
    Raises DerivativeError; caches a pass on the system object.
    """
    if not check or not isinstance(system, _engine.System):
        return                                      # (a non-System is the caller's TypeError)
    if system.__dict__.get("_derivcheck_verdict") is not None:
        return
    if not getattr(system, "derivative_check", True) or not _user_supplied(system):
        return
    q = np.array(q, dtype=float)
    try:
        # V at the initial state, once: the integration itself may never call the
        # potential (only its gradient), so a malformed one would otherwise surface only
        # at Trajectory.energy; the binding's message names the callback
        system._eval(q, None, _V)
        _first_use(system, q)
    except DerivativeError:
        raise
    except Exception as exc:       # a callback failed while being checked: say so
        if hasattr(exc, "add_note"):
            exc.add_note(f"(raised while symplectic checked the supplied derivatives against "
                         f"finite differences around q = {fmt_q(q)}, before the first step; "
                         f"check=False skips the check)")
        raise


def ensure_many(systems, Q0, check=True):
    """ensure() for each distinct system of an ensemble, at its first member's q0."""
    if not check:
        return
    seen = set()
    for k, s in enumerate(systems):
        if id(s) not in seen:
            seen.add(id(s))
            ensure(s, Q0[k if len(Q0) > 1 else 0], check)


def check(system, q, g=None, rtol=RTOL, raise_on_failure=True):
    """System.check_derivatives: compare at q; return {quantity: relative error}."""
    n = system.n
    q = np.array(q, dtype=float)
    if q.shape != (n,):
        raise ValueError(f"q must have shape ({n},), got {q.shape}")
    g = default_g(n) if g is None else np.array(g, dtype=float)
    if g.shape != (n,):
        raise ValueError(f"g must have shape ({n},), got {g.shape}")
    rtol = float(rtol)
    if not rtol > 0:
        raise ValueError(f"rtol must be > 0, got {rtol}")
    ev = Evaluator(system)
    sup = _supplied(system, ev, q)
    res = check_point(ev, q, g, sup, rtol, mode="explicit")
    report = _report(system, sup, res)
    if raise_on_failure:
        bad = [r for r in res.values() if not r["ok"]]
        if bad:
            raise _error(ev, q, g, sup, res, bad[0], rtol, "the q given to check_derivatives",
                         report)
    return report


# ---------------------------------------------------------------- which derivatives are the user's
def _form(system):
    c = system._callables
    if c is None:
        return "builtin"
    for k in ("combined", "vectorized", "cfunc"):
        if k in c:
            return k
    return "callables"


def _user_supplied(system):
    """True for systems whose derivatives come from the user: Python callables
    (plain, combined, vectorized) and compiled callbacks; not the built-in C
    systems nor the SymPy-generated ones (their derivatives are derived)."""
    if system.builtin is not None or system._callables is None:
        return False
    symbolic = sys.modules.get("symplectic.symbolic")
    return not (symbolic is not None and isinstance(system, symbolic.SymbolicSystem))


def _supplied(system, ev, q):
    """{quantity: (callback name, contracted?)} for every derivative the user supplied."""
    form = _form(system)
    cm = system.constant_mass
    out = {}
    if form == "callables":
        c = system._callables
        fd = set(system._fd_used)
        if not cm and "mass_grad" not in fd:
            out["mass_grad"] = ("mass_dir", True) if c["mass_dir"] is not None else ("mass_grad", False)
        if "potential_grad" not in fd:
            out["potential_grad"] = ("potential_grad", False)
        if not cm and c["mass_hess_dir"] is not None:
            out["mass_hess"] = ("mass_hess_dir", True)
        elif not cm and c["mass_hess"] is not None:
            out["mass_hess"] = ("mass_hess", False)
        if c["potential_hess"] is not None:
            out["potential_hess"] = ("potential_hess", False)
        return {k: out[k] for k in QUANTITIES if k in out}
    names = _FORM_NAMES[form]
    contracted = form in ("cfunc", "builtin")
    hess = ev.vectorized_hessians(q) if form == "vectorized" else None
    for k in QUANTITIES:
        if k.startswith("mass") and cm:
            continue
        if hess is not None and k.endswith("hess") and k not in hess:
            continue
        out[k] = (names[k], contracted and k.startswith("mass"))
    return out


def _report(system, sup, res):
    """{quantity: relative error | "finite differences" | "not checked: ..."}."""
    report = {}
    for k in QUANTITIES:
        if k.startswith("mass") and system.constant_mass:
            continue
        r = (res or {}).get(k)
        if k not in sup:
            report[k] = "finite differences"
        elif r is None:
            report[k] = "not checked"
        elif "skipped" in r:
            report[k] = f"not checked: {r['skipped']} is wrong"
        else:
            report[k] = r["rel"]
    return report


def _error(ev, q, g, sup, res, cmp, rtol, where, report):
    quantity = cmp["quantity"]
    callback, contracted = sup[quantity]
    full = diagnose(ev, q, g, sup, cmp, rtol)
    tensor = full.get("full") and full["U"].ndim == len(LABELS.get(quantity, ())) or \
        (quantity.startswith("potential") and full.get("full"))
    hint = layout_hint(full, callback, contracted, ev.n) if tensor else None
    idx = full["index"]
    others = [r["quantity"] for r in res.values() if r is not cmp and not r["ok"]]
    ref = _REF.get(quantity)
    if quantity == "potential_hess" and "potential_grad" not in sup:
        ref = "grad V(q) (itself by differences of V)"
    if quantity == "mass_hess":
        own = "" if "mass_grad" in sup else ", itself by differences of M"
        ref = (f"the tensor dM_ij/dq_k (the checked mass_grad{own})" if full["U"].ndim == 4
               else f"1/2 A(q, g)^T g (A from the checked mass_grad{own})")
    rebuilt = ""
    if contracted and tensor:
        rebuilt = (" of the tensor rebuilt from A(q, e_j)" if quantity == "mass_grad"
                   else " of the tensor rebuilt from H(q, e_i + e_j)")
    msg = (f"{callback} disagrees with finite differences at q = {fmt_q(q)} ({where}): "
           f"at entry{rebuilt} {index_text(full, ev.n)} it gives {full['U'][idx]:.12g}, "
           f"central differences of {ref} give {full['F'][idx]:.12g} (difference "
           f"{full['error']:.3g} > tolerance {full['tol']:.3g} = max(rtol {rtol:g} x largest "
           f"entry {full['scale']:.3g}, {SAFETY:g} x the finite-difference error estimate "
           f"{full['fd_err']:.3g})).")
    if hint:
        msg += " " + hint
    if others:
        msg += f" Also wrong at this q: {', '.join(sup[o][0] for o in others)}."
    msg += (" Fix the callback (layouts: System docstring), or skip this check with check=False "
            "(step/integrate/integrate_many) or derivative_check=False (System).")
    return DerivativeError(msg, callback=callback, quantity=quantity, index=idx,
                           supplied=float(full["U"][idx]), finite_difference=float(full["F"][idx]),
                           q=q.copy(), error=full["error"], tolerance=full["tol"], layout=hint,
                           report=report)


# ---------------------------------------------------------------- the first-use check
def _perturbation(q):
    """dq with |dq_c| in [0.5, 1] x PERTURB max(1, |q_c|), fixed mixed signs."""
    return PERTURB * np.maximum(1.0, np.abs(q)) * generic(len(q), 1)


def _first_use(system, q):
    n = system.n
    ev = Evaluator(system)
    sup = _supplied(system, ev, q)
    if not sup:
        system._derivcheck_verdict = "nothing supplied"
        return
    g = default_g(n)
    dq = _perturbation(q)
    around = ("a perturbed state: the initial q plus a fixed pseudo-random offset, away from "
              "special points")
    # the initial state, then the first of q + dq, q + dq/10, q + dq/100 where the
    # callbacks can be evaluated (a model may be defined only near q)
    points = [(q, "the initial state", "initial")] + [(q + s * dq, around, "perturbed")
                                                      for s in (1.0, 0.1, 0.01)]
    checked = []                                       # (q, where, results) at <= 2 points
    for x, where, mode in points:
        if mode == "perturbed" and any(w == around for _, w, _ in checked):
            break
        res = check_point(ev, x, g, sup, RTOL, mode)
        if res is not None:
            checked.append((x, where, res))
    # a Hessian is compared with differences of the first derivative, so a wrong first
    # derivative (which may look right at one point: grad V = 0 at an equilibrium) is
    # reported before any Hessian, at whichever point shows it
    for quantity in QUANTITIES:
        for x, where, res in checked:
            r = res.get(quantity)
            if r is not None and not r["ok"]:
                raise _error(ev, x, g, sup, res, r, RTOL, where, _report(system, sup, res))
    if checked:
        system._derivcheck_verdict = "passed"
