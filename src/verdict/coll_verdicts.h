/* coll_verdicts.h: the verdicts of a collectives sweep, from its records: every rank that received wrong data,
 * per row and placement, is a failing finding about that rank and its host. Pure: no MPI, no printing.
 *
 * defines: collectives_findings */
#ifndef DDPBENCH_COLL_VERDICTS_H
#define DDPBENCH_COLL_VERDICTS_H

#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One failing finding (check "collectives_data", scope rank) per "wrong_elements" record of d, appended to f. */
ddp_result collectives_findings(const result_doc *d, finding_list *f);

#ifdef __cplusplus
}
#endif
#endif
