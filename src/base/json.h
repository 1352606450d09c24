/* json.h: numbers in JSON documents (cJSON underneath): written so that they read back as exactly the same
 * double, and non-finite values as null, never as text a reader would misread; and lenient readers of a
 * document that may lack any member. Nothing else. */
#ifndef DDPBENCH_JSON_H
#define DDPBENCH_JSON_H

#include <cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A JSON number that reads back as exactly v (null when v is NaN or infinite). */
cJSON *json_number(double v);
/* Lenient readers of a document that may lack anything: o's member k (NULL when o is not an object or has
 * none); an integer member (def when absent, null, not a number, or outside int's range, non-finite values
 * included; a fraction is cut toward 0); a string member ("" when absent, null or not a string). */
const cJSON *json_get(const cJSON *o, const char *k);
int json_int(const cJSON *o, const char *k, int def);
const char *json_str(const cJSON *o, const char *k);

#ifdef __cplusplus
}
#endif
#endif
