/*
 * sym_unroll.h -- SYM_UNROLL asks the compiler to unroll the next loop
 * completely when its trip count is a compile-time constant (the small
 * fixed-size kernel instances); it changes no operation or its order.
 * SYM_UNROLL: up to 16 iterations (the small LU, m <= 16).
 * SYM_UNROLL_SMALL: up to 8 (the Galerkin kernels' loops over s <= 7 nodes,
 * s - 1 unknown nodes, n <= 4 components and tiles of 4): complete in the
 * fixed instances (a partial unroll of lobatto6's and lobatto7's loops over
 * 6 and 7 nodes kept their constant tests, the centre node's skipped terms
 * among them, at run time), without gcc unrolling the runtime-size
 * instances' loops 16 times (a compile many times as long).
 */
#ifndef SYM_UNROLL_H
#define SYM_UNROLL_H

#if defined(__GNUC__) && !defined(__clang__)
#define SYM_UNROLL _Pragma("GCC unroll 16")
#define SYM_UNROLL_SMALL _Pragma("GCC unroll 8")
#elif defined(__clang__)
#define SYM_UNROLL _Pragma("unroll")
#define SYM_UNROLL_SMALL _Pragma("unroll 8")
#else
#define SYM_UNROLL
#define SYM_UNROLL_SMALL
#endif

#endif /* SYM_UNROLL_H */
