/* csv.h: a result document's records as CSV (RFC 4180) for spreadsheets: csv.c says the columns. Reads the
 * result model only. */
#ifndef DDPBENCH_CSV_H
#define DDPBENCH_CSV_H

#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The text (malloc'd, *out). */
ddp_result csv_format(const result_doc *d, char **out);

#ifdef __cplusplus
}
#endif
#endif
