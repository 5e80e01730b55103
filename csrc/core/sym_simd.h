/*
 * sym_simd.h -- the core's one SIMD idiom (private): the compiler's vector
 * types (GCC, clang) with a few helpers to load, store and splat, so that a
 * kernel written in vectors reads as the scalar one, operator for operator.
 *
 * Vector operations are element-wise IEEE operations, each lane rounded as
 * the scalar operation, so a kernel written in vectors gives bitwise the
 * numbers of the scalar kernel that does the same operations in the same
 * order.  Loads and stores take any address of a double (only its own
 * alignment assumed): the two-lane ones copy (memcpy), the four-lane ones
 * read and write through a type that may alias doubles, as the compilers'
 * own unaligned-load intrinsics do (with a copy, gcc moves a four-lane
 * vector through integer registers).
 *
 * SYM_VEC2 is 1 where the two-lane type sym_v2d exists and 0 elsewhere,
 * or when the build defines SYM_NO_VEC; the kernels then run their scalar
 * code.  SYM_AVX_DISPATCH is 1 on x86-64 (GCC, clang) unless SYM_NO_AVX or
 * SYM_NO_VEC is defined: the four-lane type sym_v4d and its helpers are
 * compiled for AVX (target attribute) inside a baseline x86-64 binary, for
 * functions that are called only after a run-time check of the CPU.
 * SYM_FMA_DISPATCH is 1 with it unless SYM_NO_FMA is defined: SYM_FMA and
 * SYM_AVX2 compile a function for AVX2 with or without fused multiply-add
 * (sym_v4_fma), again behind a run-time check.
 */
#ifndef SYM_SIMD_H
#define SYM_SIMD_H

#include "sym_util.h"   /* SYM_INLINE */

#include <stdint.h>
#include <string.h>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(SYM_NO_VEC)
#define SYM_VEC2 1
typedef double sym_v2d __attribute__((vector_size(16)));
typedef uint64_t sym_v2u __attribute__((vector_size(16)));

/* (p[0], p[1]) */
SYM_INLINE sym_v2d sym_v2_load(const double *p)
{
    sym_v2d v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* p[0], p[1] = v */
SYM_INLINE void sym_v2_store(double *p, sym_v2d v)
{
    memcpy(p, &v, sizeof v);
}

/* (x, x) */
SYM_INLINE sym_v2d sym_v2_splat(double x)
{
    return (sym_v2d){x, x};
}

/* lane-wise |x| (the sign bit cleared) */
SYM_INLINE sym_v2d sym_v2_abs(sym_v2d x)
{
    const sym_v2u mask = {~(UINT64_C(1) << 63), ~(UINT64_C(1) << 63)};
    sym_v2u u;
    memcpy(&u, &x, sizeof u);
    u &= mask;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* lane-wise select: x where the mask (a vector comparison's result) is set,
 * else y */
SYM_INLINE sym_v2d sym_v2_select(sym_v2u m, sym_v2d x, sym_v2d y)
{
    sym_v2u ux, uy;
    memcpy(&ux, &x, sizeof ux);
    memcpy(&uy, &y, sizeof uy);
    ux = (ux & m) | (uy & ~m);
    memcpy(&x, &ux, sizeof x);
    return x;
}

/* sym_nanmax lane by lane */
SYM_INLINE sym_v2d sym_v2_nanmax(sym_v2d m, sym_v2d v)
{
    return sym_v2_select((sym_v2u)(m != m) | (sym_v2u)(v <= m), m, v);
}
#else
#define SYM_VEC2 0
#endif

#if SYM_VEC2 && defined(__x86_64__) && !defined(SYM_NO_AVX)
#define SYM_AVX_DISPATCH 1
/* compile a function for AVX (256-bit, no FMA) */
#define SYM_AVX __attribute__((target("avx")))
typedef double sym_v4d __attribute__((vector_size(32)));
typedef double sym_v4d_mem __attribute__((vector_size(32), aligned(8), may_alias));

/* (p[0], ..., p[3]) */
SYM_AVX SYM_INLINE sym_v4d sym_v4_load(const double *p)
{
    return *(const sym_v4d_mem *)p;
}

/* p[0], ..., p[3] = v */
SYM_AVX SYM_INLINE void sym_v4_store(double *p, sym_v4d v)
{
    *(sym_v4d_mem *)p = v;
}

/* (x, x, x, x) */
SYM_AVX SYM_INLINE sym_v4d sym_v4_splat(double x)
{
    return (sym_v4d){x, x, x, x};
}
#else
#define SYM_AVX_DISPATCH 0
#endif

#if SYM_AVX_DISPATCH && !defined(SYM_NO_FMA)
#define SYM_FMA_DISPATCH 1
/* compile a function for AVX2 with fused multiply-add, or without */
#define SYM_FMA __attribute__((target("avx2,fma")))
#define SYM_AVX2 __attribute__((target("avx2")))

/* a b + c, one rounding per lane */
SYM_FMA SYM_INLINE sym_v4d sym_v4_fma(sym_v4d a, sym_v4d b, sym_v4d c)
{
    return __builtin_ia32_vfmaddpd256(a, b, c);
}
#else
#define SYM_FMA_DISPATCH 0
#endif

#endif /* SYM_SIMD_H */
