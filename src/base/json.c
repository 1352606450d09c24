/* json.c: exact numbers for cJSON documents (json.h). */
#include "json.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

cJSON *json_number(double v) {
  if (!isfinite(v)) return cJSON_CreateNull();
  /* cJSON prints 15 significant digits when they compare equal within its epsilon, which loses the last
   * bits (0.1 + 0.2 comes back as 0.3): print the shortest text that reads back as the same double. */
  char text[40];
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(text, sizeof text, "%.*g", digits, v);
    if (strtod(text, NULL) == v) break;
  }
  return cJSON_CreateRaw(text);
}

const cJSON *json_get(const cJSON *o, const char *k) {
  return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

int json_int(const cJSON *o, const char *k, int def) {
  const cJSON *v = json_get(o, k);
  /* the range check before the cast: a double outside int's range converted to int is undefined (1e300) */
  return cJSON_IsNumber(v) && v->valuedouble >= (double)INT_MIN && v->valuedouble <= (double)INT_MAX
             ? (int)v->valuedouble
             : def;
}

const char *json_str(const cJSON *o, const char *k) {
  const cJSON *v = json_get(o, k);
  return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}
