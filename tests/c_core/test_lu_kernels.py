"""The blocked LU of the Newton solver (csrc/core/sym_linalg.c) and the unrolled small kernels
(csrc/core/sym_lu_small.c) against the unblocked kernel.

The blocked factorisation (used for Newton systems larger than 32) reorders memory traffic
only: it must give bitwise the same factors and pivots as the plain right-looking kernel,
with and without the run-time AVX paths (-DSYM_NO_AVX) and without any vector types
(-DSYM_NO_VEC, the scalar code of other compilers), in both its forms (the public
sym_lu_factor, which allocates the panel buffer, and sym_lu_factor_ws, which the schemes call
with a buffer from their workspace), and solve A x = b to rounding.
Compiled here from the C sources with the system's C compiler, at -O2 (the optimised build
the claims are about): each variant's object files once per session (conftest.py's
``c_objects``; sym_linalg.c and sym_lu_small.c without -D are test_c_core.py's, the same
command), the compilations of the selected tests started together, two at a time.
"""
import pathlib
import subprocess

import numpy as np
import pytest

from support.cbuild import compiler_or_skip, csrc_flags

CSRC = pathlib.Path(__file__).resolve().parents[2] / "csrc" / "core"

# compiles the C sources on its own (independent of the installed package and
# of NumPy): the README's run covers it; .ci/run's run of the installed wheel (NumPy 1.24)
# and the sanitizer run leave it out
pytestmark = pytest.mark.cbuild

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sym_linalg.h"
/* for each m: random A (seeded), blocked factors (both forms) vs unblocked factors
 * bitwise, then the solve of A x = b with b = A * ones; prints m, status, equal,
 * max|x - 1| */
int main(void)
{
    int sizes[64], ns = 0;
    for (int m = 1; m <= 150; m += (m < 40 ? 1 : 9)) sizes[ns++] = m;
    sizes[ns++] = 515;   /* large panels (the old stack/heap boundary was 512 rows) */
    sizes[ns++] = 600;
    for (int t = 0; t < ns; t++) {
        const int m = sizes[t];
        double *A = malloc(sizeof(double) * m * m), *B = malloc(sizeof(double) * m * m);
        double *A0 = malloc(sizeof(double) * m * m), *b = malloc(sizeof(double) * m);
        double *C = malloc(sizeof(double) * m * m);
        double *work = malloc(sizeof(double) * (sym_lu_work_size(m) + 1));
        int *pa = malloc(sizeof(int) * m), *pb = malloc(sizeof(int) * m), *pc = malloc(sizeof(int) * m);
        unsigned s = 12345u + (unsigned)m;
        for (int i = 0; i < m * m; i++) {
            s = s * 1103515245u + 12345u;
            A0[i] = (double)(s >> 8) / 16777216.0 - 0.5;
        }
        memcpy(A, A0, sizeof(double) * m * m);
        memcpy(B, A0, sizeof(double) * m * m);
        memcpy(C, A0, sizeof(double) * m * m);
        int sa = sym_lu_factor(m, A, pa), sb = sym_lu_factor_k(m, B, pb);
        int sc = sym_lu_factor_ws(m, C, pc, work);
        int equal = sa == sb && sc == sb && memcmp(A, B, sizeof(double) * m * m) == 0
                    && memcmp(C, B, sizeof(double) * m * m) == 0
                    && memcmp(pa, pb, sizeof(int) * m) == 0 && memcmp(pc, pb, sizeof(int) * m) == 0;
        for (int i = 0; i < m; i++) {
            b[i] = 0.0;
            for (int j = 0; j < m; j++) b[i] += A0[i * m + j];
        }
        sym_lu_solve(m, A, pa, b);
        double err = 0.0;
        for (int i = 0; i < m; i++) if (fabs(b[i] - 1.0) > err) err = fabs(b[i] - 1.0);
        printf("%d %d %d %.3e\n", m, sa, equal, err);
        free(A); free(B); free(C); free(A0); free(b); free(work); free(pa); free(pb); free(pc);
    }
    return 0;
}
"""


class Drivers:
    """The drivers of this module, each compiled with its flags (-D...) and linked with what it
    calls: sym_linalg.c (the blocked and the plain kernels) and, for the small driver,
    sym_lu_small.c (the hint driver includes it, with its probe; the blocked driver calls
    nothing of it).  Each object file compiled once (the session's cache)."""

    def __init__(self, c_objects, directory):
        self.c_objects, self.directory = c_objects, directory

    def compilations(self, kind, flags):
        """The futures of the object files of driver ``kind`` built with ``flags``."""
        driver, small_source = DRIVERS[kind]
        f = csrc_flags(CSRC, *flags)
        return ([self.c_objects.submit(CSRC / "sym_lu_small.c", f)] if small_source else []) + [
            self.c_objects.submit_text(f"lu_{kind}", driver, f),
            self.c_objects.submit(CSRC / "sym_linalg.c", f)]

    def start(self, builds):
        """Submit the compilations of several (kind, flags), the longest first: those that
        compile sym_lu_small.c (the hint driver includes it), without vectors first."""
        for kind, flags in sorted(builds, key=lambda b: (not (DRIVERS[b[0]][1] or b[0] == "hint"),
                                                         "-DSYM_NO_VEC" not in b[1])):
            self.compilations(kind, flags)

    def run(self, kind, flags):
        """Link and run driver ``kind`` built with ``flags``: its output lines as an array."""
        exe = self.directory / ("drv_" + kind + "".join(f.strip("-") for f in flags))
        res = self.c_objects.link([c.result().checked() for c in self.compilations(kind, flags)], exe)
        assert res.returncode == 0, res.stderr
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
        return np.array([[float(v) for v in line.split()] for line in out.splitlines()])


@pytest.fixture(scope="module")
def drivers(request, c_objects, tmp_path_factory):
    compiler_or_skip()
    if not (CSRC / "sym_linalg.c").is_file():
        pytest.skip("the C sources are not next to the tests (installed-package run)")
    d = Drivers(c_objects, tmp_path_factory.mktemp("lu_drivers"))
    # start the compilations of every test of this module that the session runs
    d.start([(TESTS_OF[item.originalname],
              item.callspec.params.get("flags", []) if hasattr(item, "callspec") else [])
             for item in request.session.items if getattr(item, "module", None) is request.module
             and item.originalname in TESTS_OF])
    return d


@pytest.mark.parametrize("flags", [[], ["-DSYM_NO_AVX"], ["-DSYM_NO_VEC"]],
                         ids=["dispatch", "no-avx", "no-vec"])
def test_blocked_lu_is_bitwise_the_unblocked_kernel(drivers, flags):
    res = drivers.run("blocked", flags)
    m, status, equal, err = res.T
    assert m.max() > 512 and (m > 32).sum() >= 10        # blocked path, small and large panels
    assert np.all(status == 0)
    assert np.all(equal == 1), f"blocked LU differs from the unblocked kernel at m = {m[equal != 1]}"
    # random matrices: condition numbers up to ~1e4 here, so the solve is good to ~1e-11
    assert np.all(err <= 1e-10), err.max()


# the small-kernel drivers' test matrices (their own seed RNG_SEED) and comparison: m x m of kind 0 random
# reals, 1 small integers (ties in the pivot columns, zero columns, singular matrices), 2 and 3
# the same with a NaN, or an infinity, placed at random (on or off the diagonal)
RANDOM_MATRIX = r"""
static unsigned rng = RNG_SEED;
static double uni(void) { rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5; return (double)rng / 4294967296.0; }
static void random_matrix(double *A, int m, int kind)
{
    for (int i = 0; i < m * m; i++)
        A[i] = kind == 0 ? uni() - 0.5 : (double)((int)(uni() * 5.0) - 2);
    if (kind >= 2) {
        const int at = (int)(uni() * m * m);
        A[at] = kind == 2 ? NAN : (uni() < 0.5 ? INFINITY : -INFINITY);
    }
}
/* the picked kernel's result (status sa, factors A, pivots pa) is the plain kernel's (sb, B,
 * pb), and so are the solutions of the right-hand side x = y by each */
static int same_as_plain(int m, sym_lu_solve_fn sv, int sa, const double *A, const int *pa,
                         int sb, const double *B, const int *pb, double *x, double *y)
{
    if (sa != sb || memcmp(A, B, sizeof(double) * m * m) != 0 || memcmp(pa, pb, sizeof(int) * m) != 0)
        return 0;
    if (sb != SYM_OK)
        return 1;
    sv(m, A, pa, x);
    sym_lu_solve_k(m, B, pb, y);
    return memcmp(x, y, sizeof(double) * m) == 0;
}
"""

SMALL_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sym_linalg.h"
/* for m = 1..SYM_LU_SMALL_MAX and many matrices per size (random reals; small integers, with
 * ties in the pivot columns, zero columns, singular matrices; a NaN or an infinity placed at
 * random, on or off the diagonal): the picked kernels (sym_lu_pick) against sym_lu_factor_k /
 * sym_lu_solve_k: status, pivots and factors bitwise, and the solution bitwise.
 * Prints m, kind, matrices, mismatches, statuses seen (bit 0 ok, 1 singular, 2 non-finite). */
#define RNG_SEED 2463534242u
@RANDOM_MATRIX@
int main(void)
{
    for (int m = 1; m <= SYM_LU_SMALL_MAX; m++) {
        sym_lu_factor_fn f;
        sym_lu_solve_fn sv;
        sym_lu_pick(m, &f, &sv);
        for (int kind = 0; kind < 4; kind++) {
            int bad = 0, seen = 0;
            const int count = 400;
            for (int t = 0; t < count; t++) {
                double A[256], B[256], x[16], y[16];
                int pa[16], pb[16];
                random_matrix(A, m, kind);
                for (int i = 0; i < m; i++) x[i] = y[i] = uni() - 0.5;
                memcpy(B, A, sizeof(double) * m * m);
                memset(pa, 0, sizeof(pa));
                memset(pb, 0, sizeof(pb));
                const int sa = f(m, A, pa, NULL), sb = sym_lu_factor_k(m, B, pb);
                seen |= 1 << (sb == SYM_OK ? 0 : sb == SYM_ESINGULAR ? 1 : 2);
                bad += !same_as_plain(m, sv, sa, A, pa, sb, B, pb, x, y);
            }
            printf("%d %d %d %d %d\n", m, kind, count, bad, seen);
        }
    }
    return 0;
}
"""


SMALL_DRIVER = SMALL_DRIVER.replace("@RANDOM_MATRIX@", RANDOM_MATRIX)


@pytest.mark.parametrize("flags", [[], ["-DSYM_NO_VEC"]], ids=["vec", "no-vec"])
def test_small_lu_kernels_are_bitwise_the_plain_kernel(drivers, flags):
    res = drivers.run("small", flags)
    m, kind, count, bad, seen = res.T.astype(int)
    assert set(m) == set(range(1, 17)) and np.all(count == 400)
    assert np.all(bad == 0), f"small LU differs at (m, kind) = {list(zip(m[bad > 0], kind[bad > 0]))}"
    # the cases were exercised: integer matrices hit singular ones, the NaN/inf kinds non-finite
    # pivots (status bits: 1 ok, 2 singular, 4 non-finite)
    assert np.all(seen[kind == 0] & 1)
    assert np.any(seen[(kind == 1) & (m >= 3)] & 2)
    assert np.all(seen[(kind >= 2)] & 4)


HINT_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* the outcomes of the checked factorisation with given pivots: [0] failed checks (the
 * kernel then restarts with the search), [1] passed */
static long taken[2];
#define SYM_LU_SPEC_PROBE(ok) (taken[(ok) != 0]++)
#include "sym_lu_small.c"
/* For m = 1..SYM_LU_SMALL_MAX, the four kinds of matrices of the small driver, and a pivot
 * sequence on entry (the kernels try the one they find there):
 *   hint 0: the plain kernel's own pivots of this matrix;
 *   hint 1: the pivots of the matrix with every entry moved by ~1e-9 relative (the next Newton
 *           matrix: mostly the same pivots, sometimes not);
 *   hint 2: a random pivot sequence (piv[k] in [k, m));
 *   hint 3: an entry out of range (no sequence: the search from the start).
 * The picked kernel against sym_lu_factor_k: status, pivots, factors and solution bitwise.
 * Prints m, kind, hint, matrices, mismatches, checks passed, checks failed. */
#define RNG_SEED 88172645u
@RANDOM_MATRIX@
int main(void)
{
    for (int m = 1; m <= SYM_LU_SMALL_MAX; m++) {
        sym_lu_factor_fn f;
        sym_lu_solve_fn sv;
        sym_lu_pick(m, &f, &sv);
        for (int kind = 0; kind < 4; kind++)
            for (int hint = 0; hint < 4; hint++) {
                int bad = 0;
                const int count = 200;
                taken[0] = taken[1] = 0;
                for (int t = 0; t < count; t++) {
                    double A[256], B[256], C[256], x[16], y[16];
                    int pa[16], pb[16], pc[16];
                    random_matrix(A, m, kind);
                    for (int i = 0; i < m; i++) x[i] = y[i] = uni() - 0.5;
                    if (hint <= 1) {
                        /* the plain kernel's pivots of A itself (hint 0) or of A perturbed */
                        for (int i = 0; i < m * m; i++)
                            C[i] = hint == 0 ? A[i] : A[i] * (1.0 + 1e-9 * (uni() - 0.5));
                        memset(pc, 0, sizeof(pc));
                        sym_lu_factor_k(m, C, pc);
                        memcpy(pa, pc, sizeof(pa));
                    } else if (hint == 2) {
                        for (int k = 0; k < m; k++) pa[k] = k + (int)(uni() * (m - k));
                    } else {
                        for (int k = 0; k < m; k++) pa[k] = k;
                        pa[(int)(uni() * m)] = m;
                    }
                    /* the same entries on both sides: a failed factorisation leaves the pivots
                     * after the failing column as they were */
                    memcpy(pb, pa, sizeof(pb));
                    memcpy(B, A, sizeof(double) * m * m);
                    const int sb = sym_lu_factor_k(m, B, pb);
                    memcpy(C, A, sizeof(double) * m * m);
                    const int sa = f(m, C, pa, NULL);
                    bad += !same_as_plain(m, sv, sa, C, pa, sb, B, pb, x, y);
                }
                printf("%d %d %d %d %d %ld %ld\n", m, kind, hint, count, bad, taken[1], taken[0]);
            }
    }
    return 0;
}
"""


HINT_DRIVER = HINT_DRIVER.replace("@RANDOM_MATRIX@", RANDOM_MATRIX)


def test_small_lu_with_given_pivots_is_bitwise_the_plain_kernel(drivers):
    """The small kernels try the pivots found in piv on entry (the previous Newton matrix's),
    check each against the search's choice and restart with the search when one fails: right or
    wrong, the sequence on entry never changes status, pivots, factors or solution."""
    res = drivers.run("hint", [])
    m, kind, hint, count, bad, passed, failed = res.T.astype(int)
    assert set(m) == set(range(1, 17)) and np.all(count == 200)
    assert np.all(bad == 0), f"differs at (m, kind, hint) = {list(zip(m[bad > 0], kind[bad > 0], hint[bad > 0]))}"
    # both outcomes were exercised where they must be: a random real matrix with its own pivots
    # passes every check (no ties), a pivot sequence out of range is not tried at all, a random
    # sequence mostly fails, and so does every matrix with a NaN or an infinity
    own = (kind == 0) & (hint == 0)
    assert np.all(passed[own] == 200) and np.all(failed[own] == 0)
    assert np.all(passed[hint == 3] + failed[hint == 3] == 0)
    assert np.all(failed[(hint == 2) & (m >= 4)] > 100)
    assert np.all(passed[kind >= 2] == 0)
    assert np.all(passed[(kind == 0) & (hint == 1)] > 150)


# driver: (its source, whether it links sym_lu_small.c); the tests' drivers
DRIVERS = {"blocked": (DRIVER, False), "small": (SMALL_DRIVER, True), "hint": (HINT_DRIVER, False)}
TESTS_OF = {"test_blocked_lu_is_bitwise_the_unblocked_kernel": "blocked",
            "test_small_lu_kernels_are_bitwise_the_plain_kernel": "small",
            "test_small_lu_with_given_pivots_is_bitwise_the_plain_kernel": "hint"}
