/*
 * sym_gtree_kernel.h -- the chain's O(n) factorisation and solve
 * (sym_galerkin_tree.c, whose header has the equations), written once and
 * included there twice: with two-lane vectors and with four-lane AVX2 + FMA ones
 * (chosen at run time), each with its dispatcher over the instances
 * (GT_NAME(factor), GT_NAME(solve)).  GT_NAME(x) names an instance, GT_ATTR is its
 * target attribute, GT_DOT / GT_AXPYM the dot product and the update by K
 * rows y = y0 + sgn sum_k c_k x_k (y0 = y in place, NULL for 0) over the
 * interface padded to GT_PAD(F) entries (zeros beyond F), GT_DOTS cnt dot
 * products out_k = GT_DOT(A + k as, B + k bs) (bitwise GT_DOT each).
 * Internal (private).
 */

#ifdef GT_V4_SETUP
/* X = D^{-1} (m x m, m <= 4) from D's LU and pivots: lu_small_solve_k
 * (sym_lu_small.c) on the m unit vectors at once, X's rows as four-lane
 * vectors (lane c: the solve of e_c; lanes >= m unused), the same
 * operations in the same order (the interchanges by selects, L y = P e_c
 * forward, U x = y backward with the stored 1/U_ii), so the same numbers
 * as m calls of the solve. */
GT_ATTR SYM_INLINE void GT_NAME(lu_inverse4)(const int m, const double *restrict LU,
                                            const int *restrict piv, double *restrict X)
{
    sym_v4d x[4];
    for (int a = 0; a < m; a++) x[a] = (sym_v4d){a == 0, a == 1, a == 2, a == 3};
    for (int k = 0; k < m; k++) {
        const int p = piv[k];
        const sym_v4d xk = x[k];
        sym_v4d xp = xk;
        for (int j = k + 1; j < m; j++) {
            const int here = p == j;
            xp = here ? x[j] : xp;
            x[j] = here ? xk : x[j];
        }
        x[k] = xp;
    }
    for (int i = 1; i < m; i++)
        for (int j = 0; j < i; j++) x[i] -= sym_v4_splat(LU[i * m + j]) * x[j];
    for (int i = m - 1; i >= 0; i--) {
        for (int j = i + 1; j < m; j++) x[i] -= sym_v4_splat(LU[i * m + j]) * x[j];
        x[i] *= sym_v4_splat(LU[i * m + i]);
    }
    for (int a = 0; a < m; a++)
        for (int c = 0; c < m; c++) X[a * m + c] = x[a][c];
}
#endif

/* The factorisation at the point data of the last sym_gtree_points (the
 * header's elimination); SYM_ESINGULAR / SYM_ENONFINITE from a pivot.
 * Stored per joint, each as m rows of L = GT_PAD(F): U^T, A, (Psi U)^T and
 * G, and D^{-1} (m x m, from D's LU with partial pivoting).
 * dd = 2 slots a point (the velocity and momentum 2-vectors), or 3 with a
 * tridiagonal damping (the header's third slot: gamma, zeta).  Written for
 * runtime s, r and instantiated for the Lobatto rows s = r = 3..7 and
 * the Gauss rows s = 3, 4, r = s - 1 with dd = 2 (lob: B = I; the loops
 * then have compile-time bounds). */
GT_ATTR SYM_INLINE int GT_NAME(factor_k)(sym_gwork *g, double h, const int s, const int r,
                                        const int lob, const int dd)
{
    sym_gtree *t = &g->tree;
    const sym_gtab *tab = g->tab;
    const int n = g->n, m = s - 1, F = dd * r, L = GT_PAD(F);
    const double ih = 1.0 / h, grav = t->grav;
    /* Phi_{j+1} in one buffer, becoming Psi_j in place; Phi_j written to
     * the other; the two swap at every joint.  Only F rows of L are used. */
    double bufA[TF * GT_PAD(TF)], bufB[TF * GT_PAD(TF)], E[TM * GT_PAD(TF)];
    double *Psi = bufA, *Phi = bufB;
    for (int a = 0; a < F * L; a++) Psi[a] = 0.0;
    int sign = 1;
    /* the pivots' LU and solve for m x m: the unrolled kernels, which try
     * the joint's pivots of the last factorisation first (bitwise the plain
     * kernels' factors and solutions) */
    sym_lu_factor_fn lu_factor;
    sym_lu_solve_fn lu_solve;
    if (!sym_lu_small_pick(m, &lu_factor, &lu_solve)) return SYM_EINVAL;
    /* the table's weights for this h, the same for every joint:
     * Dh_ib = D_i,b+1 / h, Bt_ib = B_i,b+1 (U's), Ca_ia = b_i D_ia, Cb_ia =
     * h b_i B_ia (A's; Ca also the pivot's N); with B = I, Bt and Cb are
     * Kronecker deltas and are not multiplied out */
    double Dh[SYM_MAX_NODES][TM], Bt[SYM_MAX_NODES][TM], Ca[SYM_MAX_NODES][SYM_MAX_NODES];
    double Cb[SYM_MAX_NODES][TM];
    for (int i = 0; i < r; i++) {
        for (int b = 0; b < m; b++) {
            Dh[i][b] = tab->D[i][b + 1] * ih;
            Bt[i][b] = lob ? 0.0 : tab->B[i][b + 1];
        }
        for (int a = 0; a <= m; a++) Ca[i][a] = tab->b[i] * tab->D[i][a];
        for (int a = 0; a < m; a++) Cb[i][a] = lob ? 0.0 : h * tab->b[i] * tab->B[i][a];
    }
#ifdef GT_V4_SETUP
    /* the Lobatto rows' weights spread over the interface, (i, d) -> Dh_ib
     * and Ca_ia for both slots d of point i (zeros beyond F): U's and A's
     * rows are then the point vector v times them, plus u at one point */
    double DhI[TM][GT_PAD(TF)], CaI[TM][GT_PAD(TF)];
    if (lob && dd == 2)
        for (int b = 0; b < m; b++)
            for (int e = 0; e < L; e++) {
                DhI[b][e] = e < F ? Dh[e / 2][b] : 0.0;
                CaI[b][e] = e < F ? Ca[e / 2][b] : 0.0;
            }
#endif
    for (int j = n - 1; j >= 0; j--) {
        const double lj = t->l[j];
        double *UT = t->U + (size_t)j * L * m, *Aa = t->Aa + (size_t)j * L * m;
        double *PUT = t->PU + (size_t)j * L * m, *G = t->G + (size_t)j * L * m;
        double *LU = t->LU + (size_t)j * m * m;
        int *piv = t->piv + (size_t)j * m;
        /* the damping's rows: its own rate (diagonal), the parent's and the child's */
        const double dg = dd == 3 ? t->dd[j] : 0.0, dlo = dd == 3 ? t->dlo[j] : 0.0;
        const double dup = dd == 3 ? t->dup[j] : 0.0;
        double cP[SYM_MAX_NODES], cf[SYM_MAX_NODES], ef[SYM_MAX_NODES];
        double Bb[TM][SYM_MAX_NODES];   /* h b_i B_ia: the force rows' weights */
        const double lmu = grav * t->mu[j] * lj;
#ifdef GT_V4_SETUP
        if (lob && dd == 2) {
            /* the same numbers as the loop below, four entries at a time:
             * Ub = v Dh_ib (+ u at i = b + 1), Ab = Ca_ia v (+ h b_a u at
             * i = a), each product and sum as there (no fused multiply-add) */
            double Vv[GT_PAD(TF)] = {0.0}, Uu[GT_PAD(TF)] = {0.0};
            for (int i = 0; i < r; i++) {
                const size_t k = (size_t)i * n + j;
                const double c = t->cs[k], sn = t->sn[k], gv = g->Gp[k];
                const double a0 = t->pi0[k], a1 = t->pi1[k];
                const double lg = lj * gv;
                Uu[2 * i] = -lg * sn;
                Uu[2 * i + 1] = lg * c;
                Vv[2 * i] = lj * c;
                Vv[2 * i + 1] = lj * sn;
                cP[i] = lj * (c * a1 - sn * a0);
                ef[i] = cP[i] - dg;
                cf[i] = -lg * (c * a0 + sn * a1) - lmu * c;
            }
            for (int b = 0; b < m; b++) {
                double *Ub = UT + b * L;
                for (int e = 0; e < L; e += 4)
                    sym_v4_store(Ub + e, sym_v4_load(Vv + e) * sym_v4_load(DhI[b] + e));
                Ub[2 * b + 2] += Uu[2 * b + 2];
                Ub[2 * b + 3] += Uu[2 * b + 3];
            }
            for (int a = 0; a < m; a++) {
                double *Ab = Aa + a * L;
                const double hb = h * tab->b[a];
                for (int e = 0; e < L; e += 4)
                    sym_v4_store(Ab + e, sym_v4_load(Vv + e) * sym_v4_load(CaI[a] + e));
                Ab[2 * a] += hb * Uu[2 * a];
                Ab[2 * a + 1] += hb * Uu[2 * a + 1];
            }
        } else
#endif
        for (int i = 0; i < r; i++) {
            const size_t k = (size_t)i * n + j;
            const double c = t->cs[k], sn = t->sn[k], gv = g->Gp[k];
            const double a0 = t->pi0[k], a1 = t->pi1[k];
            const double lg = lj * gv;
            const double u0 = -lg * sn, u1 = lg * c, v0 = lj * c, v1 = lj * sn;
            for (int b = 0; b < m; b++) {
                double *Ub = UT + b * L + dd * i;
                if (lob) {
                    Ub[0] = i == b + 1 ? u0 + v0 * Dh[i][b] : v0 * Dh[i][b];
                    Ub[1] = i == b + 1 ? u1 + v1 * Dh[i][b] : v1 * Dh[i][b];
                } else {
                    Ub[0] = u0 * Bt[i][b] + v0 * Dh[i][b];
                    Ub[1] = u1 * Bt[i][b] + v1 * Dh[i][b];
                }
                if (dd == 3) Ub[2] = Dh[i][b];   /* gamma = d g_ij */
            }
            const double hb = h * tab->b[i];
            for (int a = 0; a < m; a++) {
                double *Ab = Aa + a * L + dd * i;
                const double cb = lob ? (i == a ? hb : 0.0) : Cb[i][a];
                if (lob) {
                    Ab[0] = i == a ? Ca[i][a] * v0 + cb * u0 : Ca[i][a] * v0;
                    Ab[1] = i == a ? Ca[i][a] * v1 + cb * u1 : Ca[i][a] * v1;
                } else {
                    Ab[0] = Ca[i][a] * v0 + cb * u0;
                    Ab[1] = Ca[i][a] * v1 + cb * u1;
                }
                if (dd == 3) Ab[2] = -cb * dup;   /* the child's zeta */
                Bb[a][i] = cb;
            }
            cP[i] = lj * (c * a1 - sn * a0);
            ef[i] = cP[i] - dg;
            cf[i] = -lg * (c * a0 + sn * a1) - lmu * c;
        }
        /* Psi = m_j I (velocity slots) + Phi_{j+1} */
        for (int i = 0; i < r; i++) {
            Psi[(dd * i) * L + dd * i] += t->m[j];
            Psi[(dd * i + 1) * L + dd * i + 1] += t->m[j];
        }
        /* (Psi U)^T: row b, entry a = Psi row a . U^T row b */
        for (int b = 0; b < m; b++)
            GT_DOTS(PUT + b * L, Psi, (size_t)L, UT + b * L, 0, F, L);
        /* D = N + A Psi U, E = A Psi T + B_beta (rows of Psi combined) */
        for (int a = 0; a < m; a++) {
            double ap[TM];   /* Aa row a . (Psi U) column b */
            GT_DOTS(ap, PUT, (size_t)L, Aa + a * L, 0, m, L);
            for (int b = 0; b < m; b++) {
                double v;
                if (lob) {
                    /* b_{b+1} D_{b+1,a} = Ca_{b+1,a}, b_a D_{a,b+1} = Ca_{a,b+1} */
                    v = Ca[b + 1][a] * cP[b + 1] + Ca[a][b + 1] * ef[a];
                    if (a == b + 1) v += h * tab->b[a] * cf[a];
                } else {
                    v = 0.0;
                    for (int i = 0; i < r; i++)
                        v += tab->b[i] * (tab->D[i][a] * cP[i] * tab->B[i][b + 1] +
                                          tab->B[i][a] * ef[i] * tab->D[i][b + 1] +
                                          h * tab->B[i][a] * cf[i] * tab->B[i][b + 1]);
                }
                LU[a * m + b] = v + ap[b];
            }
            double *Ea = E + a * L;
            GT_AXPYM(Ea, NULL, Aa + a * L, 1, 1.0, Psi, F, L);
            if (dd == 3)   /* T drops the parent's gamma; the parent's rate enters directly */
                for (int i = 0; i < r; i++) Ea[dd * i + 2] = -Bb[a][i] * dlo;
        }
        const int st = lu_factor(m, LU, piv, NULL);
        if (st) return st;
        sign *= sym_lu_det_sign(m, LU, piv);
        /* D^{-1} from the LU (kept in LU's place for the solve), G = D^{-1} E */
        double Dinv[TM * TM];
#ifdef GT_V4_SETUP
        if (m <= 4)
            GT_NAME(lu_inverse4)(m, LU, piv, Dinv);
        else
#endif
            for (int b = 0; b < m; b++) {
                double col[TM] = {0.0};
                col[b] = 1.0;
                lu_solve(m, LU, piv, col);
                for (int a = 0; a < m; a++) Dinv[a * m + b] = col[a];
            }
        memcpy(LU, Dinv, sizeof(double) * (size_t)m * (size_t)m);
        for (int a = 0; a < m; a++) {
            GT_AXPYM(G + a * L, NULL, Dinv + a * m, 1, 1.0, E, m, L);
        }
        /* Phi_j = (S Psi + V)(T - U G): the momentum rows Psi T - (Psi U) G,
         * with dd = 3 the zeta rows (this joint's own gamma) - U_gamma G */
        for (int a = 0; a < F; a++) {
            double *row = Phi + a * L;
            if (dd == 3 && a % 3 == 2) {
                GT_AXPYM(row, NULL, UT + a, L, -1.0, G, m, L);
                continue;
            }
            if (dd == 3) {
                memcpy(row, Psi + a * L, sizeof(double) * (size_t)L);
                for (int i = 0; i < r; i++) row[dd * i + 2] = 0.0;
                GT_AXPYM(row, row, PUT + a, L, -1.0, G, m, L);
            } else {
                GT_AXPYM(row, Psi + a * L, PUT + a, L, -1.0, G, m, L);
            }
        }
        double *const sw = Psi;
        Psi = Phi;
        Phi = sw;
    }
    /* a NaN or an infinity anywhere reaches Phi_0 (now in Psi): 0 x is NaN
     * exactly for the non-finite x */
    double zero[GT_PAD(TF)] = {0.0}, nf = 0.0;
    for (int a = 0; a < F; a++) nf += GT_DOT(Psi + a * L, zero, L);
    if (nf != 0.0) return SYM_ENONFINITE;
    t->sign = sign;
    return SYM_OK;
}

/* b <- J^{-1} b (layout b[a n + j]) with the factors of sym_gtree_factor */
GT_ATTR SYM_INLINE void GT_NAME(solve_k)(sym_gwork *g, double *b, const int s, const int r,
                                        const int dd)
{
    sym_gtree *t = &g->tree;
    const int n = g->n, m = s - 1, F = dd * r, L = GT_PAD(F);
    double phi[TF] = {0.0}, *Y = t->Y;
    for (int j = n - 1; j >= 0; j--) {   /* tip to root: t_j, phi_j */
        const double *Aa = t->Aa + (size_t)j * L * m, *PUT = t->PU + (size_t)j * L * m;
        const double *UT = t->U + (size_t)j * L * m;
        const double *Dinv = t->LU + (size_t)j * m * m;
        double rj[TM], tj[TM];
        GT_DOTS(rj, Aa, (size_t)L, phi, 0, m, L);
        for (int a = 0; a < m; a++) rj[a] = b[(size_t)a * n + j] - rj[a];
        for (int a = 0; a < m; a++) {
            double v = Dinv[a * m] * rj[0];
            for (int k = 1; k < m; k++) v += Dinv[a * m + k] * rj[k];
            tj[a] = v;
        }
        /* phi_j = (S Psi + V) U t_j + S phi_{j+1} */
        GT_AXPYM(phi, phi, tj, 1, 1.0, PUT, m, L);
        if (dd == 3)
            for (int i = 0; i < r; i++) {
                double v = 0.0;
                for (int k = 0; k < m; k++) v += UT[k * L + dd * i + 2] * tj[k];
                phi[dd * i + 2] = v;
            }
        for (int a = 0; a < m; a++) b[(size_t)a * n + j] = tj[a];
    }
    for (int a = 0; a < L; a++) Y[a] = 0.0;
    for (int j = 0; j < n; j++) {   /* root to tip: x_j, Y_j = T Y_{j-1} + U x_j */
        const double *G = t->G + (size_t)j * L * m, *UT = t->U + (size_t)j * L * m;
        double xj[TM];
        GT_DOTS(xj, G, (size_t)L, Y, 0, m, L);
        for (int a = 0; a < m; a++) {
            xj[a] = b[(size_t)a * n + j] - xj[a];
            b[(size_t)a * n + j] = xj[a];
        }
        if (dd == 3)
            for (int i = 0; i < r; i++) Y[dd * i + 2] = 0.0;
        GT_AXPYM(Y, Y, xj, 1, 1.0, UT, m, L);
    }
}

/* The instance for the workspace's method and force: the Lobatto rows with
 * s = 3..7 and the Gauss rows with s = 3, 4 (r = s - 1), no damping,
 * with constant bounds; the rest at run time. */
GT_ATTR static int GT_NAME(factor)(sym_gwork *g, double h)
{
    const int s = g->tab->s, r = g->tab->r, lob = g->tab->lobatto;
    if (g->tree.damped && g->base.force) return GT_NAME(factor_k)(g, h, s, r, 0, 3);
    if (lob && s == 3) return GT_NAME(factor_k)(g, h, 3, 3, 1, 2);
    if (lob && s == 4) return GT_NAME(factor_k)(g, h, 4, 4, 1, 2);
    if (lob && s == 5) return GT_NAME(factor_k)(g, h, 5, 5, 1, 2);
    if (lob && s == 6) return GT_NAME(factor_k)(g, h, 6, 6, 1, 2);
    if (lob && s == 7) return GT_NAME(factor_k)(g, h, 7, 7, 1, 2);
    if (!lob && s == 3 && r == 2) return GT_NAME(factor_k)(g, h, 3, 2, 0, 2);
    if (!lob && s == 4 && r == 3) return GT_NAME(factor_k)(g, h, 4, 3, 0, 2);
    return lob ? GT_NAME(factor_k)(g, h, s, s, 1, 2) : GT_NAME(factor_k)(g, h, s, r, 0, 2);
}

GT_ATTR static void GT_NAME(solve)(sym_gwork *g, double *b)
{
    const int s = g->tab->s, r = g->tab->r, lob = g->tab->lobatto;
    if (g->tree.damped && g->base.force)
        GT_NAME(solve_k)(g, b, s, r, 3);
    else if (lob && s == 3)
        GT_NAME(solve_k)(g, b, 3, 3, 2);
    else if (lob && s == 4)
        GT_NAME(solve_k)(g, b, 4, 4, 2);
    else if (lob && s == 5)
        GT_NAME(solve_k)(g, b, 5, 5, 2);
    else if (lob && s == 6)
        GT_NAME(solve_k)(g, b, 6, 6, 2);
    else if (lob && s == 7)
        GT_NAME(solve_k)(g, b, 7, 7, 2);
    else if (!lob && s == 3 && r == 2)
        GT_NAME(solve_k)(g, b, 3, 2, 2);
    else if (!lob && s == 4 && r == 3)
        GT_NAME(solve_k)(g, b, 4, 3, 2);
    else
        GT_NAME(solve_k)(g, b, s, r, 2);
}
