"""The Hessian of a control problem's Lagrangian L = obj_factor J + nu . c,
interval by interval, with the dynamics' curvature exact (the problem's
:class:`~._curvature.Curvature`, when ``nlp.curvature`` is set) or by
central differences of the exact gradients (:func:`differences`); the
cost's own second derivatives are exact in both.  Assembled dense
(:func:`lagrangian_dense`) or sparse (:func:`lagrangian_sparse`: SciPy's
trust-constr and the polish).  The curvature only steers the iterations
(Newton's, the solver's): the residuals are exact either way."""
import numpy as np

#: The differences take their perturbed steps in batches whose derivative arrays
#: hold about this many bytes.
BATCH_BYTES = 64e6


def block_hessians(nlp, z, obj_factor, nu):
    """The Hessian of obj_factor J + nu_k . Phi_h(y_k, u_k[, h]) (+ the
    interval's path and input rows) in each interval's columns v =
    (y_k, u_k[, F_k][, T]), (N, d, d).  (With a free duration, T's own
    entries: interval k's terms; the caller sums them.)"""
    tr = nlp.tr
    P, m, N = tr.P, tr.m, tr.intervals
    w = 2 * tr.n
    if nlp.curvature is not None:
        H = nlp.curvature.hessians(nlp, z, obj_factor, nu)
    else:
        H = differences(nlp, z, obj_factor, nu)
    h = tr.step_of(z)
    H[:, w:w + P * m, w:w + P * m] += obj_factor * nlp.cost.hess_uu(h, tr.b)
    if tr.free:
        _, U0 = tr.split(z)
        for k in range(N):
            uh = obj_factor * nlp.cost.hess_uh(U0[k], tr.b) / N      # d/dT = d/dh / N
            H[k, w:w + P * m, -1] += uh
            H[k, -1, w:w + P * m] += uh
    return H


def differences(nlp, z, obj_factor, nu):
    """:func:`block_hessians` without the cost's exact part, by central
    differences of the exact gradients (N, d, d): the intervals' perturbed
    steps in one call of the C core per batch of :data:`BATCH_BYTES` of
    derivatives."""
    tr = nlp.tr
    n, P, N = tr.n, tr.P, tr.intervals
    V0 = z[tr.blocks]
    if tr.free:
        V0 = np.hstack([V0, np.full((N, 1), z[-1])])          # T
    d = V0.shape[1]
    E = 6e-6 * np.maximum(1.0, np.abs(V0))
    if tr.free:
        E[:, -1] = 1e-6 * V0[:, -1]
    per = 8 * 2 * d * 2 * n * (2 + P) * n * (1 + P * bool(tr.needs_points))
    size = max(1, int(BATCH_BYTES // per))
    H = np.concatenate([difference_quotients(nlp, np.arange(N)[c:c + size], V0[c:c + size], E[c:c + size],
                               obj_factor, nu) for c in range(0, N, size)])
    return 0.5 * (H + H.transpose(0, 2, 1))


def difference_quotients(nlp, kk, V0, E, obj_factor, nu):
    """The differences for the intervals kk at their variables V0 (K, d) with
    steps E (K, d): the items V0[k] +- E[k, j] e_j, all in one call of the C
    core; returns (K, d, d), row j the gradient's derivative in v_j (not yet
    symmetric)."""
    tr, terms = nlp.tr, nlp.terms
    w, P, m, nb = 2 * tr.n, tr.P, tr.m, tr.block_width
    K, d = V0.shape
    Vs = np.repeat(V0[:, None, None, :], d, axis=1).repeat(2, axis=2)
    jj = np.arange(d)
    Vs[:, jj, 0, jj] += E
    Vs[:, jj, 1, jj] -= E
    Vs = Vs.reshape(-1, d)
    ks = np.repeat(kk, 2 * d)
    hs = Vs[:, -1] / tr.intervals if tr.free else np.full(len(ks), tr.h)
    st = tr.shoot(ks, Vs[:, :nb], hs)
    nus = np.asarray(nu)[:tr.intervals * w].reshape(-1, w)
    G = np.einsum("brc,br->bc", st.jac, nus[ks])
    U = Vs[:, w:w + P * m].reshape(-1, P, m)
    if tr.inputs.state_dependent:
        Fk = Vs[:, w + P * m:nb].reshape(len(ks), P, -1)
        dI = terms.input_blocks(ks, st.points, U, Fk)[1]
        nui = np.repeat([nlp.nu_inputs(nu, k) for k in kk], 2 * d, axis=0)
        G += np.einsum("bx,bxc->bc", nui, dI.reshape(len(ks), -1, dI.shape[-1]))
    if terms.running:
        G += obj_factor * terms.running_blocks(ks, st.points, U, hs)[1]
    if terms.paths:
        dP = terms.path_blocks(ks, st.points, U, hs)[1]
        nup = np.repeat([nlp.nu_path(nu, k) for k in kk], 2 * d, axis=0)
        G += np.einsum("bx,bxc->bc", nup, dP.reshape(len(ks), -1, dP.shape[-1]))
    G = G.reshape(K, d, 2, d)
    return (G[:, :, 0] - G[:, :, 1]) / (2 * E[:, :, None])


def lagrangian_dense(nlp, z, obj_factor, nu):
    """The Hessian of obj_factor J + nu . c, dense (the end conditions'
    curvature left out)."""
    tr = nlp.tr
    H = np.zeros((nlp.n_variables, nlp.n_variables))
    Hb = block_hessians(nlp, z, obj_factor, nu)
    for k in range(tr.intervals):
        idx = tr.columns(k)
        H[np.ix_(idx, idx)] += Hb[k]
    if nlp.cost.has_end:
        w = 2 * tr.n
        end = slice(tr.n_states - w, tr.n_states)
        H[end, end] += obj_factor * nlp.cost.end_hess(z[end])
    return H


def lagrangian_sparse(nlp):
    """(z, nu, obj_factor=1) -> the Hessian of obj_factor J + nu . c as a
    SciPy sparse matrix (whole, from the lower triangle of
    :meth:`NLP.hess_structure`: each entry off the diagonal mirrored,
    repeated positions added up)."""
    from scipy import sparse
    n = nlp.n_variables
    hr, hc = nlp.hess_structure()
    off = hr != hc
    rows, cols = np.concatenate([hr, hc[off]]), np.concatenate([hc, hr[off]])

    def hess(z, nu, obj_factor=1.0):
        vals = nlp.hess_values(z, obj_factor, nu)
        return sparse.csr_matrix((np.concatenate([vals, vals[off]]), (rows, cols)),
                                 shape=(n, n))
    return hess
