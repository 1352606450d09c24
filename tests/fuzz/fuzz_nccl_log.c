/* fuzz_nccl_log: libFuzzer target for the NCCL INFO log parser (nccl_log_parse) and its JSON (nccl_account_json,
 * nccl_account_from_json). Property: any bytes, with a span taken from the input's first bytes, parse without a
 * crash, sanitizer report or hang; the account's strings end inside their arrays and its counts inside their
 * tables; its JSON reads back and writes out as the same text; an input that is JSON is read or refused with a
 * reason. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "nccl_log.h"

static nccl_account acc, back;

static void check_bounded(const nccl_account *a) {
  if (a->ncomms < 0 || a->ncomms > NCCL_ACC_MAX_COMMS || a->nnetdevs < 0 || a->nnetdevs > NCCL_ACC_MAX_NETDEVS) abort();
  if (!memchr(a->version, 0, sizeof a->version) || !memchr(a->net_plugin, 0, sizeof a->net_plugin)) abort();
  for (int i = 0; i < a->ncomms; i++) {
    const nccl_acc_comm *c = &a->comms[i];
    if (c->npeers < 0 || c->npeers > NCCL_ACC_MAX_PEERS || c->ngraphs < 0 || c->ngraphs > NCCL_ACC_MAX_GRAPHS) abort();
    if (!memchr(c->trees, 0, sizeof c->trees) || !memchr(c->ring0, 0, sizeof c->ring0)) abort();
    for (int k = 0; k < c->npeers; k++)
      if (!memchr(c->peer[k].via, 0, sizeof c->peer[k].via)) abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  nccl_log_span span = {0, 0, 0};
  int nspans = 0;
  if (n >= 3 && data[0] == 'S') { /* "S" + two bytes: a span over that part of the text, for its first comm */
    span.begin = data[1] * 16u;
    span.end = span.begin + data[2] * 16u;
    nspans = 1;
  }
  memset(&acc, 0, sizeof acc);
  nccl_log_parse((const char *)data, n, nspans ? &span : NULL, nspans, &acc);
  check_bounded(&acc);
  cJSON *j = nccl_account_json(&acc);
  if (!j) return 0;
  char *s1 = cJSON_PrintUnformatted(j);
  char why[256] = "";
  if (nccl_account_from_json(j, &back, why, sizeof why) != 0) abort();
  cJSON *j2 = nccl_account_json(&back);
  char *s2 = j2 ? cJSON_PrintUnformatted(j2) : NULL;
  if (s1 && s2 && strcmp(s1, s2)) abort();
  free(s1);
  free(s2);
  cJSON_Delete(j);
  cJSON_Delete(j2);
  cJSON *doc = cJSON_ParseWithLength((const char *)data, n);
  if (doc) {
    why[0] = '\0';
    if (nccl_account_from_json(doc, &back, why, sizeof why) != 0 && !why[0]) abort();
    check_bounded(&back);
    cJSON_Delete(doc);
  }
  return 0;
}
