/* dtype.c: the element types (dtype.h): their names and typed access to one element (what the
 * exact-data checks and their tests read and write). */
#include <stdint.h>
#include <strings.h>

#include "dtype.h"

#include "numerics.h"

const char *dtype_name(ddp_dtype t) {
  static const char *n[DT_COUNT] = {"float", "bfloat16", "half",   "double", "int8",
                                    "uint8", "int32",    "uint32", "int64",  "uint64"};
  return (unsigned)t < DT_COUNT ? n[t] : "?";
}

/* An element type by any of its names (nccl-tests' -d names, PyTorch's and the short ones); 0 when unknown. */
int dtype_parse(const char *v, ddp_dtype *out) {
  static const struct { const char *name; ddp_dtype t; } T[] = {
      {"float", DT_F32},   {"float32", DT_F32}, {"fp32", DT_F32},   {"half", DT_F16},    {"float16", DT_F16},
      {"fp16", DT_F16},    {"bfloat16", DT_BF16}, {"bf16", DT_BF16}, {"double", DT_F64},  {"float64", DT_F64},
      {"fp64", DT_F64},    {"int8", DT_I8},     {"char", DT_I8},    {"uint8", DT_U8},    {"int32", DT_I32},
      {"int", DT_I32},     {"uint32", DT_U32},  {"int64", DT_I64},  {"uint64", DT_U64}};
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
    if (strcasecmp(v, T[i].name) == 0) return *out = T[i].t, 1;
  return 0;
}

int dtype_is_float(ddp_dtype t) { return t == DT_F32 || t == DT_F64 || t == DT_BF16 || t == DT_F16; }

double dtype_load(const void *p, ddp_dtype t, size_t i) {
  switch (t) {
    case DT_F32: return ((const float *)p)[i];
    case DT_F64: return ((const double *)p)[i];
    case DT_BF16: return bf16_to_f32(((const uint16_t *)p)[i]);
    case DT_F16: return fp16_to_f32(((const uint16_t *)p)[i]);
    case DT_I8: return ((const int8_t *)p)[i];
    case DT_U8: return ((const uint8_t *)p)[i];
    case DT_I32: return ((const int32_t *)p)[i];
    case DT_U32: return ((const uint32_t *)p)[i];
    case DT_I64: return (double)((const int64_t *)p)[i];
    default: return (double)((const uint64_t *)p)[i];
  }
}

void dtype_store(void *p, ddp_dtype t, size_t i, double v) {
  switch (t) {
    case DT_F32: ((float *)p)[i] = (float)v; break;
    case DT_F64: ((double *)p)[i] = v; break;
    case DT_BF16: ((uint16_t *)p)[i] = bf16_from_f32((float)v); break;
    case DT_F16: ((uint16_t *)p)[i] = fp16_from_f32((float)v); break;
    case DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case DT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: ((uint64_t *)p)[i] = (uint64_t)v; break;
  }
}
