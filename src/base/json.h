/* json.h: numbers in JSON documents (cJSON underneath): written so that they read back as exactly the same
 * double, and non-finite values as null, never as text a reader would misread. Nothing else. */
#ifndef DDPBENCH_JSON_H
#define DDPBENCH_JSON_H

#include <cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A JSON number that reads back as exactly v (null when v is NaN or infinite). */
cJSON *json_number(double v);

#ifdef __cplusplus
}
#endif
#endif
