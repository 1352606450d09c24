/* coll_verdicts.c: wrong data as findings (coll_verdicts.h). */
#include "coll_verdicts.h"

#include "dtype.h"

#include <stdlib.h>
#include <string.h>

static const char *lab(const result_record *r, const char *k) {
  const char *v = result_record_label(r, k);
  return v ? v : "";
}

ddp_result collectives_findings(const result_doc *d, finding_list *f) {
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *w = &d->records[i];
    if (strcmp(w->measurement, "collectives") || strcmp(w->metric, "wrong_elements")) continue;
    ddp_dtype t = DT_F32;
    dtype_parse(lab(w, "type"), &t);
    long long first = atoll(lab(w, "first"));
    char subject[128];
    snprintf(subject, sizeof subject, "rank %s (%s)", lab(w, "rank"), lab(w, "host"));
    DDP_TRY(findings_add_at(f, lab(w, "host"), atoi(lab(w, "rank")), "collectives_data", SEV_FAIL, SCOPE_RANK, subject,
                            w->value, 0, "elements",
                            "%s %s %s %s B %s (group %s): %.0f wrong element(s) of %s received; first at element %lld "
                            "(byte offset %lld): got %s, expected %s",
                            lab(w, "collective"), lab(w, "type"), lab(w, "redop"), lab(w, "bytes"),
                            strcmp(lab(w, "placement"), "in_place") ? "out-of-place" : "in-place", w->group, w->value,
                            lab(w, "received"), first, first * (long long)dtype_size(t), lab(w, "got"), lab(w, "expected")));
  }
  return DDP_OK;
}
