/* dtype.h: the element types that devices, comms and the collectives' checks move: their sizes, nccl-tests'
 * names, and typed access to one element. Plain data and pure functions: no device, no MPI.
 *
 * defines: ddp_dtype, dtype_size, dtype_name, dtype_is_float, dtype_parse, dtype_load, dtype_store */
#ifndef DDPBENCH_DTYPE_H
#define DDPBENCH_DTYPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The model uses the first three; the rest exist for the comm interface's collectives (`ddpbench
 * collectives`), which move and reduce every type nccl-tests does. Device math takes only the first three. */
typedef enum { DT_F32 = 0, DT_BF16, DT_F16, DT_F64, DT_I8, DT_U8, DT_I32, DT_U32, DT_I64, DT_U64, DT_COUNT } ddp_dtype;
static inline size_t dtype_size(ddp_dtype t) {
  static const unsigned char sz[DT_COUNT] = {4, 2, 2, 8, 1, 1, 4, 4, 8, 8};
  return (unsigned)t < DT_COUNT ? sz[t] : 0;
}
/* nccl-tests' names: "float", "bfloat16", "half", "double", "int8", "uint8", "int32", ...  */
const char *dtype_name(ddp_dtype t);
int dtype_is_float(ddp_dtype t);
int dtype_parse(const char *name, ddp_dtype *t);
/* Element i of an array of type t, as a double (exact for every value of the integer types up to 2^53), and
 * stored back (rounded to the type: 16-bit floats round to nearest even). */
double dtype_load(const void *p, ddp_dtype t, size_t i);
void dtype_store(void *p, ddp_dtype t, size_t i, double v);

#ifdef __cplusplus
}
#endif
#endif
