"""What a wrong derivative looks like, in words, for DerivativeError's message
(symplectic._model._derivcheck): the axis permutation, sign or factor a supplied
tensor matches (:func:`layout_hint`) and the name of the entry that was
compared (:func:`index_text`)."""
import functools
import itertools

import numpy as np

from ._compare import amax, generic

LABELS = {"mass_grad": ("k", "i", "j"), "mass_hess": ("k", "l", "i", "j")}


# ---------------------------------------------------------------- layouts
def _as_used(quantity, T):
    if quantity == "mass_hess":
        return 0.5 * (T + T.transpose(0, 1, 3, 2))
    return T


@functools.lru_cache(maxsize=None)
def _classes(quantity, dim):
    """The permutations of the axes that the core can tell apart, as
    (representative, members): those giving different tensors as used, for a
    generic tensor with the true symmetries (M symmetric: dM symmetric in
    (i, j); d2M symmetric in (i, j) and in (k, l))."""
    if quantity == "mass_grad":
        R = generic(dim ** 3, 30).reshape((dim,) * 3)
        R = R + R.transpose(0, 2, 1)
    else:
        R = generic(dim ** 4, 31).reshape((dim,) * 4)
        R = R + R.transpose(1, 0, 2, 3)
        R = R + R.transpose(0, 1, 3, 2)
    classes = []
    for P in itertools.permutations(range(R.ndim)):
        X = _as_used(quantity, R.transpose(P))
        for rep, members, Xr in classes:
            if np.allclose(X, Xr, rtol=1e-12, atol=1e-12):
                members.append(P)
                break
        else:
            classes.append((P, [P], X))
    return tuple((rep, tuple(members)) for rep, members, _ in classes)


def _layout_name(quantity, P):
    return "[" + ", ".join(LABELS[quantity][p] for p in P) + "]"


def _formula(quantity, P):
    """What a contracted callback computes if its tensor is laid out P."""
    labels = LABELS[quantity]
    v = {labels[P[m]]: labels[m] for m in range(len(P))}
    if quantity == "mass_grad":
        return f"A[i, k] = sum_j dM_{v['i']}{v['j']}/dq_{v['k']} g_j"
    return f"H[k, l] = 1/2 sum_ij d2M_{v['i']}{v['j']}/dq_{v['k']} dq_{v['l']} g_i g_j"


_EXPECTED = {"mass_grad": "[k, i, j] = dM_ij/dq_k", "mass_hess": "[k, l, i, j] = d2M_ij/dq_k dq_l"}
_WHAT = {"mass_grad": "dM_ij/dq_k", "mass_hess": "d2M_ij/dq_k dq_l", "potential_grad": "dV/dq_k",
         "potential_hess": "d2V/dq_k dq_l"}


def layout_hint(cmp, callback, contracted, n):
    """A sentence naming the layout (axis permutation, sign) the supplied
    tensor matches, or None."""
    quantity, U, F, tol = cmp["quantity"], cmp["U"], cmp["F"], cmp["tol"]
    if quantity not in LABELS or n < 2 or U.ndim != len(LABELS[quantity]):
        if np.max(np.abs(U + F)) <= tol and amax(F) > tol:
            return _sign_hint(quantity, callback)
        return _zero_hint(U, F, tol, callback)
    classes = _classes(quantity, min(n, 3))
    ident = tuple(range(U.ndim))
    matches = []
    for rep, _members in classes:
        C = _as_used(quantity, F.transpose(rep))
        for s in (1.0, -1.0):
            if (rep == ident and s > 0) or amax(C) <= tol:
                continue
            if np.max(np.abs(U - s * C)) <= tol:
                matches.append((rep, s))
    if not matches:
        return _zero_hint(U, F, tol, callback)
    rep, s = matches[0]
    neg = "minus " if s < 0 else ""
    if rep == ident:
        text = _sign_hint(quantity, callback)
    elif contracted:
        text = (f"{callback} looks like it computes {neg}{_formula(quantity, rep)} (the tensor laid "
                f"out {_layout_name(quantity, rep)}) instead of {_formula(quantity, ident)}.")
    else:
        text = (f"{callback} looks like it is laid out {neg}{_layout_name(quantity, rep)}; "
                f"expected {_EXPECTED[quantity]}.")
    if len(matches) > 1:
        alt = ", ".join(("minus " if t < 0 else "") + _layout_name(quantity, r) for r, t in matches[1:])
        text += f" (At this q it also matches {alt}.)"
    if quantity == "mass_grad" and rep != ident:
        text += (" M is symmetric, so only the position of the derivative index k can be told "
                 "apart: [k, i, j] = [k, j, i], [i, k, j] = [j, k, i], [i, j, k] = [j, i, k].")
    elif quantity == "mass_hess" and rep != ident:
        reps = ", ".join(_layout_name(quantity, r) for r, _ in classes)
        text += (" The core uses d2M only through 1/2 g^T d2M g and d2M is symmetric in (k, l), "
                 f"so only these layouts can be told apart: {reps} (each up to swapping i with j "
                 f"and k with l).")
    return text


def _sign_hint(quantity, callback):
    if quantity == "potential_hess":
        return (f"{callback} looks like the negative of the derivative of grad V (a sign error "
                f"in it, or in potential_grad where grad V vanishes).")
    if quantity == "mass_hess":
        return (f"{callback} looks like the negative of the derivative of dM (a sign error in "
                f"it, or in mass_grad where dM vanishes).")
    return f"{callback} looks like the negative of {_WHAT[quantity]} (a sign error)."


def _zero_hint(U, F, tol, callback):
    """Zeros where differences are not (entries not filled), or a constant factor."""
    if amax(U) == 0.0 and amax(F) > tol:
        return f"{callback} gives zeros here (entries not filled in?)."
    ff = float(np.vdot(F, F))
    if ff > 0.0 and amax(F) > tol:
        a = float(np.vdot(U, F)) / ff
        if abs(a - 1.0) > 1e-3 and np.max(np.abs(U - a * F)) <= tol:
            return (f"{callback} looks like {a:.6g} times the finite-difference value "
                    f"(a wrong factor).")
    return None


# ---------------------------------------------------------------- messages
def fmt_q(q):
    return "[" + ", ".join(f"{x:.10g}" for x in q) + "]"


def index_text(cmp, n):
    quantity, idx, ix = cmp["quantity"], cmp["index"], ", ".join(str(i) for i in cmp["index"])
    big = f"(n = {n} is too large to compare every entry; d_r, g_s fixed pseudo-random unit vectors)"
    if quantity == "mass_grad":
        if cmp.get("full"):
            return f"[k, i, j] = [{ix}] (dM[{idx[1]},{idx[2]}]/dq[{idx[0]}])"
        return f"[r, i, s] = [{ix}] of sum_kj dM_ij/dq_k d_rk g_sj {big}"
    if quantity == "potential_grad":
        return f"[k] = [{ix}] (dV/dq[{idx[0]}])" if cmp.get("full") else \
            f"[r] = [{ix}] of sum_k dV/dq_k d_rk {big}"
    if quantity == "potential_hess":
        return f"[k, l] = [{ix}] (d2V/dq[{idx[0]}]dq[{idx[1]}])" if cmp.get("full") else \
            f"[k, r] = [{ix}] of sum_l d2V/dq_k dq_l d_rl {big}"
    if len(idx) == 4:
        return (f"[k, l, i, j] = [{ix}] (d2M[{idx[2]},{idx[3]}]/dq[{idx[0]}]dq[{idx[1]}], "
                f"symmetrised in i, j as the core uses it)")
    gtext = "H(q, g) = the Hessian of 1/2 g^T M(q) g, g a fixed pseudo-random vector"
    if cmp.get("full"):
        return f"[k, l] = [{ix}] of {gtext} (n = {n} is too large to rebuild the full mass Hessian)"
    return f"[k, r] = [{ix}] of sum_l H_kl d_rl, {gtext} {big}"
