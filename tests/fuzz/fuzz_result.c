/* fuzz_result: libFuzzer target for the result-file reader (result_from_json after cJSON's parser, as
 * result_load does, without the file). Property: any input is read or refused with a reason (a usage error with
 * `why` set), never a crash, sanitizer report or hang; a document it accepts writes back out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  cJSON *doc = cJSON_ParseWithLength((const char *)data, n);
  if (!doc) return 0;
  result_doc d;
  result_init(&d);
  char why[512] = "";
  ddp_result r = result_from_json(doc, &d, why, sizeof why);
  if (r != DDP_OK && r != DDP_ERR_USAGE) abort();
  if (r == DDP_ERR_USAGE && !why[0]) abort();
  if (r == DDP_OK) {
    cJSON *out = cJSON_CreateObject();
    if (out && result_to_json(&d, out) != DDP_OK) abort();
    cJSON_Delete(out);
  }
  result_free(&d);
  cJSON_Delete(doc);
  return 0;
}
