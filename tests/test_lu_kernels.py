"""The blocked LU of the Newton solver (csrc/sym_linalg.c) against the unblocked kernel.

The blocked factorisation (used for Newton systems larger than 32) reorders memory traffic
only: it must give bitwise the same factors and pivots as the plain right-looking kernel,
with and without the run-time AVX paths (-DSYM_NO_AVX), in both its forms (the public
sym_lu_factor, which allocates the panel buffer, and sym_lu_factor_ws, which the schemes call
with a buffer from their workspace), and solve A x = b to rounding.
Compiled here from the C sources with the system's C compiler.
"""
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

CSRC = pathlib.Path(__file__).resolve().parent.parent / "csrc"

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


def run(tmp_path, flags):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    if not (CSRC / "sym_linalg.c").is_file():
        pytest.skip("the C sources are not next to the tests (installed-package run)")
    src = tmp_path / "drv.c"
    src.write_text(DRIVER)
    exe = tmp_path / ("drv" + "".join(f.strip("-") for f in flags))
    subprocess.run([cc, "-std=c99", "-O2", *flags, f"-I{CSRC}", str(src), str(CSRC / "sym_linalg.c"),
                    "-o", str(exe), "-lm"], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return np.array([[float(v) for v in line.split()] for line in out.splitlines()])


@pytest.mark.parametrize("flags", [[], ["-DSYM_NO_AVX"]], ids=["dispatch", "no-avx"])
def test_blocked_lu_is_bitwise_the_unblocked_kernel(tmp_path, flags):
    res = run(tmp_path, flags)
    m, status, equal, err = res.T
    assert m.max() > 512 and (m > 32).sum() >= 10        # blocked path, small and large panels
    assert np.all(status == 0)
    assert np.all(equal == 1), f"blocked LU differs from the unblocked kernel at m = {m[equal != 1]}"
    # random matrices: condition numbers up to ~1e4 here, so the solve is good to ~1e-11
    assert np.all(err <= 1e-10), err.max()
