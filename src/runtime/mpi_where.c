/* mpi_where.c: every blocking MPI call ddpbench makes tells the watchdog which one it is, so that a rank
 * waiting for a stopped peer says "waiting in MPI_Allreduce(1 x MPI_INT) on world (4 ranks)" and not just
 * "phase ddp". These are MPI profiling-interface wrappers (the MPI standard's PMPI_ names, the way mpiP and
 * other MPI tools hook calls): each records the call, calls PMPI_, and clears it. Non-blocking collectives are
 * recorded when they start; MPI_Wait and MPI_Waitall then name the collective they wait for. Nothing here
 * changes what a call does or returns. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "watchdog.h"

/* The call as the watchdog keeps it (raw: see wd_call), with the names MPI gives (ddpbench names its own
 * communicators); t = MPI_DATATYPE_NULL leaves out the count. No formatting here: these run inside timed loops. */
_Static_assert(MPI_MAX_OBJECT_NAME <= sizeof ((wd_call *)0)->comm, "wd_call's names hold MPI's");
static void describe(wd_call *w, const char *call, long count, MPI_Datatype t, MPI_Comm c) {
  int len = 0;
  w->call = call;
  w->peer = -1;
  w->peer_from = 0;
  w->count = t == MPI_DATATYPE_NULL ? -1 : count;
  w->type[0] = 0;
  if (t != MPI_DATATYPE_NULL && PMPI_Type_get_name(t, w->type, &len) != MPI_SUCCESS) w->type[0] = 0;
  if (PMPI_Comm_get_name(c, w->comm, &len) != MPI_SUCCESS || !w->comm[0]) memcpy(w->comm, "a communicator", 15);
  if (PMPI_Comm_size(c, &w->size) != MPI_SUCCESS) w->size = 0;
}

static unsigned enter(const char *call, long count, MPI_Datatype t, MPI_Comm c) {
  wd_call w;
  describe(&w, call, count, t, c);
  return watchdog_enter_call(NULL, 0, &w);
}

/* ---- non-blocking collectives: which request is which (the last NREQ started) ---- */
enum { NREQ = 64 };
static struct {
  MPI_Request req;
  wd_call call;
} reqs[NREQ];
static unsigned reqs_next;
static pthread_mutex_t reqs_lock = PTHREAD_MUTEX_INITIALIZER;

static void started_peer(const char *call, long count, MPI_Datatype t, int peer, int from, MPI_Comm c, MPI_Request q) {
  wd_call w;
  describe(&w, call, count, t, c);
  w.peer = peer;
  w.peer_from = from;
  watchdog_started_call(&w);
  pthread_mutex_lock(&reqs_lock);
  unsigned i = 0;
  while (i < NREQ && reqs[i].req != q) i++; /* a handle MPI hands out again replaces its old entry */
  if (i == NREQ) i = reqs_next++ % NREQ;
  reqs[i].req = q;
  reqs[i].call = w;
  pthread_mutex_unlock(&reqs_lock);
}

static void started(const char *call, long count, MPI_Datatype t, MPI_Comm c, MPI_Request q) {
  started_peer(call, count, t, -1, 0, c, q);
}

/* MPI_Wait/MPI_Waitall: names the first of the requests that a wrapper saw start. */
static unsigned waiting(const char *call, int n, const MPI_Request *q) {
  wd_call w;
  int found = 0;
  pthread_mutex_lock(&reqs_lock);
  for (int k = 0; k < n && !found; k++)
    for (unsigned i = 0; i < NREQ && q[k] != MPI_REQUEST_NULL; i++)
      if (reqs[i].req == q[k]) {
        w = reqs[i].call;
        found = 1;
        break;
      }
  pthread_mutex_unlock(&reqs_lock);
  if (found) return watchdog_enter_call(call, n - 1, &w);
  const wd_call bare = {.call = call, .count = -1, .peer = -1}; /* a request no wrapper saw start */
  return watchdog_enter_call(NULL, 0, &bare);
}

/* ---- the wrappers ---- */
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  unsigned tok = enter("MPI_Allreduce", n, t, c);
  int e = PMPI_Allreduce(s, r, n, t, op, c);
  watchdog_leave(tok);
  return e;
}
int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
  unsigned tok = enter("MPI_Reduce", n, t, c);
  int e = PMPI_Reduce(s, r, n, t, op, root, c);
  watchdog_leave(tok);
  return e;
}
int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c) {
  unsigned tok = enter("MPI_Allgather", rn, rt, c);
  int e = PMPI_Allgather(s, sn, st, r, rn, rt, c);
  watchdog_leave(tok);
  return e;
}
/* At the root, MPI_IN_PLACE leaves the send count and type undefined: the receive side's are shown. */
int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c) {
  unsigned tok = s == MPI_IN_PLACE ? enter("MPI_Gather", rn, rt, c) : enter("MPI_Gather", sn, st, c);
  int e = PMPI_Gather(s, sn, st, r, rn, rt, root, c);
  watchdog_leave(tok);
  return e;
}
int MPI_Gatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[], const int displs[], MPI_Datatype rt,
                int root, MPI_Comm c) {
  unsigned tok = s == MPI_IN_PLACE ? enter("MPI_Gatherv", 0, MPI_DATATYPE_NULL, c) : enter("MPI_Gatherv", sn, st, c);
  int e = PMPI_Gatherv(s, sn, st, r, rn, displs, rt, root, c);
  watchdog_leave(tok);
  return e;
}
int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  unsigned tok = enter("MPI_Bcast", n, t, c);
  int e = PMPI_Bcast(b, n, t, root, c);
  watchdog_leave(tok);
  return e;
}
int MPI_Barrier(MPI_Comm c) {
  unsigned tok = enter("MPI_Barrier", 0, MPI_DATATYPE_NULL, c);
  int e = PMPI_Barrier(c);
  watchdog_leave(tok);
  return e;
}
static unsigned enter_p2p(const char *call, long n, MPI_Datatype t, int peer, int from, MPI_Comm c) {
  wd_call w;
  describe(&w, call, n, t, c);
  w.peer = peer;
  w.peer_from = from;
  return watchdog_enter_call(NULL, 0, &w);
}
int MPI_Send(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c) {
  unsigned tok = enter_p2p("MPI_Send", n, t, dest, 0, c);
  int e = PMPI_Send(b, n, t, dest, tag, c);
  watchdog_leave(tok);
  return e;
}
int MPI_Recv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status *st) {
  unsigned tok = enter_p2p("MPI_Recv", n, t, src, 1, c);
  int e = PMPI_Recv(b, n, t, src, tag, c, st);
  watchdog_leave(tok);
  return e;
}
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *out) {
  unsigned tok = enter("MPI_Comm_split", 0, MPI_DATATYPE_NULL, c);
  int e = PMPI_Comm_split(c, color, key, out);
  watchdog_leave(tok);
  return e;
}
int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *out) {
  unsigned tok = enter("MPI_Comm_split_type", 0, MPI_DATATYPE_NULL, c);
  int e = PMPI_Comm_split_type(c, type, key, info, out);
  watchdog_leave(tok);
  return e;
}
int MPI_Comm_dup(MPI_Comm c, MPI_Comm *out) {
  unsigned tok = enter("MPI_Comm_dup", 0, MPI_DATATYPE_NULL, c);
  int e = PMPI_Comm_dup(c, out);
  watchdog_leave(tok);
  return e;
}
int MPI_Finalize(void) {
  unsigned tok = watchdog_enter("MPI_Finalize");
  int e = PMPI_Finalize();
  watchdog_leave(tok);
  return e;
}

int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request *q) {
  int e = PMPI_Iallreduce(s, r, n, t, op, c, q);
  if (e == MPI_SUCCESS) started("MPI_Iallreduce", n, t, c, *q);
  return e;
}
int MPI_Ireduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request *q) {
  int e = PMPI_Ireduce_scatter_block(s, r, n, t, op, c, q);
  if (e == MPI_SUCCESS) started("MPI_Ireduce_scatter_block", n, t, c, *q);
  return e;
}
int MPI_Iallgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c,
                   MPI_Request *q) {
  int e = PMPI_Iallgather(s, sn, st, r, rn, rt, c, q);
  if (e == MPI_SUCCESS) started("MPI_Iallgather", rn, rt, c, *q);
  return e;
}
int MPI_Ialltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c,
                  MPI_Request *q) {
  int e = PMPI_Ialltoall(s, sn, st, r, rn, rt, c, q);
  if (e == MPI_SUCCESS) started("MPI_Ialltoall", rn, rt, c, *q);
  return e;
}
int MPI_Ireduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c, MPI_Request *q) {
  int e = PMPI_Ireduce(s, r, n, t, op, root, c, q);
  if (e == MPI_SUCCESS) started("MPI_Ireduce", n, t, c, *q);
  return e;
}
/* At the root, MPI_IN_PLACE leaves one side's count and type undefined: the other side's are shown. */
int MPI_Igather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c,
                MPI_Request *q) {
  int e = PMPI_Igather(s, sn, st, r, rn, rt, root, c, q);
  if (e == MPI_SUCCESS) s == MPI_IN_PLACE ? started("MPI_Igather", rn, rt, c, *q) : started("MPI_Igather", sn, st, c, *q);
  return e;
}
int MPI_Iscatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c,
                 MPI_Request *q) {
  int e = PMPI_Iscatter(s, sn, st, r, rn, rt, root, c, q);
  if (e == MPI_SUCCESS) r == MPI_IN_PLACE ? started("MPI_Iscatter", sn, st, c, *q) : started("MPI_Iscatter", rn, rt, c, *q);
  return e;
}
/* The count shown is this rank's count for peer 0 (the others differ: that is the point of the call). */
int MPI_Ialltoallv(const void *s, const int sn[], const int sd[], MPI_Datatype st, void *r, const int rn[],
                   const int rd[], MPI_Datatype rt, MPI_Comm c, MPI_Request *q) {
  int e = PMPI_Ialltoallv(s, sn, sd, st, r, rn, rd, rt, c, q);
  if (e == MPI_SUCCESS) started("MPI_Ialltoallv", rn[0], rt, c, *q);
  return e;
}
int MPI_Isend(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c, MPI_Request *q) {
  int e = PMPI_Isend(b, n, t, dest, tag, c, q);
  if (e == MPI_SUCCESS) started_peer("MPI_Isend", n, t, dest, 0, c, *q);
  return e;
}
int MPI_Irecv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *q) {
  int e = PMPI_Irecv(b, n, t, src, tag, c, q);
  if (e == MPI_SUCCESS) started_peer("MPI_Irecv", n, t, src, 1, c, *q);
  return e;
}
int MPI_Ibcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *q) {
  int e = PMPI_Ibcast(b, n, t, root, c, q);
  if (e == MPI_SUCCESS) started("MPI_Ibcast", n, t, c, *q);
  return e;
}
int MPI_Ibarrier(MPI_Comm c, MPI_Request *q) {
  int e = PMPI_Ibarrier(c, q);
  if (e == MPI_SUCCESS) started("MPI_Ibarrier", 0, MPI_DATATYPE_NULL, c, *q);
  return e;
}
int MPI_Wait(MPI_Request *q, MPI_Status *st) {
  unsigned tok = waiting("MPI_Wait", 1, q);
  int e = PMPI_Wait(q, st);
  watchdog_leave(tok);
  return e;
}
int MPI_Waitall(int n, MPI_Request q[], MPI_Status st[]) {
  unsigned tok = waiting("MPI_Waitall", n, q);
  int e = PMPI_Waitall(n, q, st);
  watchdog_leave(tok);
  return e;
}
