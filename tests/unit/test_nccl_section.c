/* test_nccl_section.c: the report's block of NCCL's account (nccl_section_print) from hand-made sections: the
 * version and network, per label the ranks, channels and transports counted over ranks, NCCL's choices with
 * sizes of one choice as one range, and the reasons where something is not reported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nccl_section.h"

static char *block(const char *json) {
  cJSON *sec = cJSON_Parse(json);
  CHECK(sec != NULL, "bad test JSON: %.80s", json);
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (sec && f) nccl_section_print(f, sec);
  if (f) fclose(f);
  cJSON_Delete(sec);
  return buf ? buf : calloc(1, 1);
}

#define HAS(text, s) CHECK(strstr((text), (s)) != NULL, "missing \"%s\" in:\n%s", (s), (text))

int main(void) {
  /* two ranks of one 2-rank world: P2P to each other; choices recorded on rank 0 */
  char *t = block(
      "{\"reported\":true,\"why\":null,\"source\":\"ddpbench\",\"ranks\":["
      "{\"rank\":0,\"host\":\"a\",\"account\":{\"version\":\"2.28.3+cuda13.0\",\"net\":\"IB\",\"communicators\":[{"
      "\"label\":\"world\",\"nranks\":2,\"channels\":{\"coll\":24},\"peers\":[{\"peer\":1,\"via\":\"P2P/CUMEM/read\"}],"
      "\"algorithms\":["
      "{\"coll\":\"AllReduce\",\"bytes\":1048576,\"algo\":\"RING\",\"proto\":\"SIMPLE\",\"channels\":16,\"calls\":1},"
      "{\"coll\":\"AllReduce\",\"bytes\":8,\"algo\":\"RING\",\"proto\":\"LL\",\"channels\":2,\"calls\":1},"
      "{\"coll\":\"AllReduce\",\"bytes\":32768,\"algo\":\"RING\",\"proto\":\"LL\",\"channels\":2,\"calls\":1},"
      "{\"coll\":\"AllReduce\",\"bytes\":67108864,\"algo\":\"RING\",\"proto\":\"SIMPLE\",\"channels\":16,\"calls\":1},"
      "{\"coll\":\"AllGather\",\"bytes\":4096,\"algo\":\"RING\",\"proto\":\"LL128\",\"channels\":4,\"calls\":2}]}]}},"
      "{\"rank\":1,\"host\":\"a\",\"account\":{\"version\":\"2.28.3+cuda13.0\",\"net\":\"IB\",\"communicators\":[{"
      "\"label\":\"world\",\"nranks\":2,\"channels\":{\"coll\":24},\"peers\":[{\"peer\":0,\"via\":\"P2P/CUMEM/read\"}],"
      "\"algorithms\":null}]}}]}");
  HAS(t, "NCCL's account (its set-up log, 2 of 2 ranks): NCCL 2.28.3+cuda13.0, network IB");
  HAS(t, "world (2 ranks): 24 coll channels; peers: P2P/CUMEM/read x2");
  HAS(t, "NCCL's choices (rank 0): AllGather 4.00 KiB LL128/RING 4 ch; AllReduce 8 B-32.00 KiB LL/RING 2 ch, "
         "1.00 MiB-64.00 MiB SIMPLE/RING 16 ch");
  free(t);
  /* channels that differ between ranks, a SHM peer, and choices not reported with the rank's reason */
  t = block("{\"reported\":true,\"why\":null,\"source\":\"user\",\"ranks\":["
            "{\"rank\":0,\"host\":\"a\",\"algorithms_why\":\"NCCL makes no profiler event on a 1-rank communicator\","
            "\"account\":{\"version\":null,\"net\":null,\"communicators\":[{\"label\":\"world\",\"nranks\":2,"
            "\"channels\":{\"coll\":16},\"peers\":[{\"peer\":1,\"via\":\"SHM/direct/direct\"}],\"algorithms\":null}]}},"
            "{\"rank\":1,\"host\":\"b\",\"account\":null,\"why\":\"NCCL wrote no log file\"},"
            "{\"rank\":2,\"host\":\"c\",\"account\":{\"version\":null,\"communicators\":[{\"label\":\"world\","
            "\"nranks\":2,\"channels\":{\"coll\":32},\"peers\":[]}]}}]}");
  HAS(t, "2 of 3 ranks): NCCL (version not reported), network not reported");
  HAS(t, "16-32 coll channels; peers: SHM/direct/direct x1");
  HAS(t, "NCCL's choices: not reported (NCCL makes no profiler event on a 1-rank communicator)");
  free(t);
  /* nobody reported */
  t = block("{\"reported\":false,\"why\":\"NCCL_DEBUG=WARN is set\",\"source\":\"user\",\"ranks\":["
            "{\"rank\":0,\"host\":\"a\",\"account\":null,\"why\":\"NCCL_DEBUG=WARN is set\"}]}");
  HAS(t, "# NCCL's account: not reported (NCCL_DEBUG=WARN is set)");
  CHECK(!strstr(t, "world"), "a communicator line without an account:\n%s", t);
  free(t);
  /* every line of the block starts with '#' (collectives' tables: only rows lack it) */
  t = block("{\"reported\":true,\"why\":null,\"source\":\"ddpbench\",\"ranks\":[{\"rank\":0,\"host\":\"a\","
            "\"account\":{\"version\":\"2.28.9\",\"communicators\":[{\"label\":\"world\",\"nranks\":1,\"peers\":[]},"
            "{\"label\":\"group 0\",\"nranks\":1,\"peers\":[]}]}}]}");
  int lines = 0, hashed = 0;
  for (char *p = t; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) lines++, hashed += *p == '#';
  CHECK(lines == 5 && lines == hashed, "%d lines, %d with '#':\n%s", lines, hashed, t);
  HAS(t, "group 0 (1 rank): channels not reported; peers: none");
  free(t);
  return check_summary();
}
