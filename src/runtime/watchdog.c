/* watchdog.c: the watchdog thread, the out-of-band "where is every rank" query, and the SIGINT/SIGTERM
 * handlers of watchdog.h.
 *
 * Finding the culprit. A rank that times out is usually a victim: it waits in a collective for a peer that
 * stopped. So before aborting, the rank whose timer ran out asks every rank where it is, without MPI (which is
 * what hangs):
 *   - the ranks of one host share a status board (a shared-memory file mapped by all of them and unlinked at
 *     once, so that nothing is left behind even after SIGKILL): each slot holds the rank's pid, its last
 *     location ("phase ddp, step 3 of 8") and two clocks, the main thread's last progress and the watchdog
 *     thread's heartbeat (every 250 ms). A stale heartbeat means the process itself stopped (SIGSTOP, a
 *     frozen node), not just its main thread;
 *   - each watchdog thread also listens on a TCP port, on the address its peers dial (addresses exchanged at
 *     start-up), and answers with its host's board only a connection that first sends the job's token (16
 *     random bytes drawn by rank 0 at start-up and shared over MPI, never printed or written anywhere), so
 *     that ranks on other hosts are asked too (1 s per host, 8 s in all) and nobody else learns the ranks'
 *     pids and whereabouts. A connection that does not send the token within 1 s is
 *     closed with nothing sent; the thread never waits for one (see "the listener" below).
 * Ranks that do not answer, or whose heartbeat is stale, are named as suspects with host, pid and last known
 * location; the others say where they wait. When every rank answers from the shutdown (MPI_Finalize), the
 * launcher is the one not answering, and the report says so.
 *
 * The thread never touches the engine, the device or the comm. The signal handlers use async-signal-safe
 * calls only (unlink, write, _exit). */
#include "watchdog.h"
#include "testhooks.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <math.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "common.h"

enum { WD_WHAT = 320, WD_COLL = 160, WD_NCOLL = 4, WD_TOKEN = 16 };

typedef struct {
  _Atomic int pid;
  int rank;
  _Atomic double heartbeat; /* watchdog thread, ddp_now() (CLOCK_MONOTONIC: one clock per host) */
  _Atomic double progress;  /* main thread's last tick */
  char what[WD_WHAT];       /* location, and the call it blocks in (compose) */
} wd_slot;

typedef struct {
  int node_index, port;
  int any; /* the listener is on every address: this host's own could not be bound */
  char ip[48];
  char host[64];
} wd_peer;

static struct {
  _Atomic double timeout;
  _Atomic double last;
  _Atomic double busy_since; /* watchdog_busy: this rank works alone (0 = not) */
  _Atomic int forced;         /* watchdog_report_abort: report and abort now, with forced_why */
  char forced_why[400];
  char what[128];
  /* The blocking calls this process is in now (a thread each at most: the main thread, a device's worker),
   * and the last collective it started without blocking (NCCL's, MPI's non-blocking ones). */
  struct {
    unsigned token; /* 0: free */
    int raw;          /* c (and wait, more) rather than text */
    const char *wait;
    int more;
    wd_call c;
    char text[WD_COLL];
  } in[WD_NCOLL];
  unsigned next_token;
  int have_last; /* last_call holds a collective */
  wd_call last_call;
  _Atomic unsigned gen; /* bumped by every change the board does not show yet (the watchdog thread publishes) */
  pthread_mutex_t lock;
  int started;
  /* after watchdog_join: */
  _Atomic int joined;
  int rank, world, local_rank, local_size;
  wd_slot *board;   /* [local_size], shared with this host's ranks */
  int board_private; /* the board could not be shared: only this rank's slot is filled */
  wd_peer *peers;   /* [world] */
  int listen_fd;
  char token_line[2 * WD_TOKEN + 1]; /* the job's token as an asker sends it: hex, then '\n' (no NUL) */
  /* watchdog_on_end */
  watchdog_end_fn end_fn;
  void *end_arg;
  _Atomic int end_deferral; /* rank 0 writes at the end: the other ranks leave it the abort (WD_END_DEFER) */
  int deferred;             /* that was done once */
} g_wd = {.lock = PTHREAD_MUTEX_INITIALIZER, .listen_fd = -1};

void wd_call_text(const wd_call *c, char *out, size_t n) {
  char peer[32] = "", what[96] = "";
  if (c->peer >= 0) snprintf(peer, sizeof peer, " %s rank %d", c->peer_from ? "from" : "to", c->peer);
  if (c->count >= 0) snprintf(what, sizeof what, "(%ld x %s)", c->count, c->type[0] ? c->type : "?");
  if (c->comm[0])
    snprintf(out, n, "%s%s%s on %s (%d rank%s)", c->call, what, peer, c->comm, c->size, c->size == 1 ? "" : "s");
  else
    snprintf(out, n, "%s%s%s", c->call, what, peer);
}

/* The text of blocking-call slot i. Called with the lock held. */
static void slot_text(int i, char *out, size_t n) {
  if (!g_wd.in[i].raw) {
    snprintf(out, n, "%s", g_wd.in[i].text);
    return;
  }
  char call[WD_COLL];
  wd_call_text(&g_wd.in[i].c, call, sizeof call);
  if (!g_wd.in[i].wait)
    snprintf(out, n, "%s", call);
  else if (g_wd.in[i].more > 0)
    snprintf(out, n, "%s for %s and %d more", g_wd.in[i].wait, call, g_wd.in[i].more);
  else
    snprintf(out, n, "%s for %s", g_wd.in[i].wait, call);
}

/* Where this rank is, in one line: the location, then the newest blocking call it is in, with the collective
 * it waits for. Called with the lock held. */
static void compose(char *out, size_t n) {
  int top = -1;
  for (int i = 0; i < WD_NCOLL; i++)
    if (g_wd.in[i].token && (top < 0 || g_wd.in[i].token > g_wd.in[top].token)) top = i;
  if (top < 0) {
    snprintf(out, n, "%s", g_wd.what);
    return;
  }
  char call[WD_COLL + 128];
  slot_text(top, call, sizeof call);
  snprintf(out, n, "%s; waiting in %s", g_wd.what, call);
}

static void publish(void) { /* lock held */
  if (atomic_load(&g_wd.joined)) compose(g_wd.board[g_wd.local_rank].what, sizeof g_wd.board[0].what);
}

/* The watchdog thread: what changed since the board was last written (blocking calls, collectives started). */
static void publish_if_changed(void) {
  static unsigned done;
  unsigned gen = atomic_load(&g_wd.gen);
  if (gen == done || !atomic_load(&g_wd.joined)) return;
  pthread_mutex_lock(&g_wd.lock);
  publish();
  pthread_mutex_unlock(&g_wd.lock);
  done = gen;
}

void watchdog_test_fault_act(const char *action, int rank, const char *where) {
  fprintf(stderr, "[ddpbench rank %d] test fault: %s in %s%s\n", rank, action,
          strcmp(where, "accept") && strcmp(where, "soak") && strcmp(where, "exit") ? "phase " : "", where);
  fflush(stderr);
  if (!strcmp(action, "kill")) raise(SIGKILL);
  if (!strcmp(action, "stop")) raise(SIGSTOP);
  for (;;) sleep(1000);
}

void watchdog_test_fault(int rank, const char *where) {
  char action[16], at[16];
  int r = -1;
  const char *f = testhook_value(HOOK_FAULT);
  if (!f || sscanf(f, "%15[a-z]:%d:%15[a-z]", action, &r, at) != 3 || r != rank || strcmp(at, where)) return;
  watchdog_test_fault_act(action, rank, where);
}


void watchdog_where(const char *what) {
  if (!what) return; /* nothing new to say */
  pthread_mutex_lock(&g_wd.lock);
  snprintf(g_wd.what, sizeof g_wd.what, "%s", what);
  publish();
  pthread_mutex_unlock(&g_wd.lock);
}

/* The shutdown's locations: culprit_report knows a job that has finished by them. */
#define WD_SHUTDOWN "the shutdown after the work"
#define WD_SHUTDOWN_WRITTEN WD_SHUTDOWN " (the results are written)"

static volatile sig_atomic_t g_decided = -1; /* the exit code once the work is over (watchdog_shutdown) */

void watchdog_shutdown(int written, int code) {
  g_decided = code;
  watchdog_where(written ? WD_SHUTDOWN_WRITTEN : WD_SHUTDOWN);
}

void watchdog_tick(const char *what) {
  double now = ddp_now();
  if (what) {
    pthread_mutex_lock(&g_wd.lock);
    snprintf(g_wd.what, sizeof g_wd.what, "%s", what);
    publish();
    pthread_mutex_unlock(&g_wd.lock);
  }
  atomic_store(&g_wd.last, now);
  if (atomic_load(&g_wd.joined)) atomic_store(&g_wd.board[g_wd.local_rank].progress, now);
}

/* The longest a busy section counts as progress when --timeout is shorter (a hung write still ends). */
#define WD_BUSY_MAX 600.0

void watchdog_busy(const char *what) {
  watchdog_tick(what);
  atomic_store(&g_wd.busy_since, ddp_now());
}

void watchdog_busy_end(void) {
  atomic_store(&g_wd.busy_since, 0.0);
  watchdog_tick(NULL);
}

void watchdog_report_abort(const char *why) {
  if (!atomic_load(&g_wd.joined)) return;
  snprintf(g_wd.forced_why, sizeof g_wd.forced_why, "%s", why);
  atomic_store(&g_wd.forced, 1);
  for (int i = 0; i < 200; i++) { /* the thread asks (8 s at most), prints and aborts; not returning is the rule */
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
  }
}

void watchdog_started_call(const wd_call *c) {
  pthread_mutex_lock(&g_wd.lock);
  g_wd.last_call = *c;
  g_wd.have_last = 1;
  pthread_mutex_unlock(&g_wd.lock);
}

void watchdog_started_text(char *out, size_t n) {
  pthread_mutex_lock(&g_wd.lock);
  if (g_wd.have_last)
    wd_call_text(&g_wd.last_call, out, n);
  else if (n)
    out[0] = 0;
  pthread_mutex_unlock(&g_wd.lock);
}

/* A free slot for a blocking call, with its token; -1 when more threads than slots block at once (that call is
 * then not shown). Called with the lock held. */
static int slot_take(unsigned *token) {
  for (int i = 0; i < WD_NCOLL; i++)
    if (!g_wd.in[i].token) {
      if (++g_wd.next_token == 0) g_wd.next_token = 1;
      *token = g_wd.in[i].token = g_wd.next_token;
      return i;
    }
  return -1;
}

unsigned watchdog_enter(const char *fmt, ...) {
  pthread_mutex_lock(&g_wd.lock);
  unsigned token = 0;
  int i = slot_take(&token);
  if (i >= 0) {
    g_wd.in[i].raw = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_wd.in[i].text, sizeof g_wd.in[i].text, fmt, ap);
    va_end(ap);
    atomic_fetch_add(&g_wd.gen, 1);
  }
  pthread_mutex_unlock(&g_wd.lock);
  return token;
}

unsigned watchdog_enter_call(const char *wait, int more, const wd_call *c) {
  pthread_mutex_lock(&g_wd.lock);
  unsigned token = 0;
  int i = slot_take(&token);
  if (i >= 0) {
    g_wd.in[i].raw = 1;
    g_wd.in[i].wait = wait;
    g_wd.in[i].more = more;
    g_wd.in[i].c = *c;
    atomic_fetch_add(&g_wd.gen, 1);
  }
  pthread_mutex_unlock(&g_wd.lock);
  return token;
}

void watchdog_where_text(char *out, size_t n) {
  pthread_mutex_lock(&g_wd.lock);
  compose(out, n);
  pthread_mutex_unlock(&g_wd.lock);
}

unsigned watchdog_enter_device(const char *what) {
  char last[WD_COLL];
  watchdog_started_text(last, sizeof last);
  if (!last[0]) return watchdog_enter("the device to finish %s", what);
  return watchdog_enter("the device to finish %s (last collective started: %s)", what, last);
}

void watchdog_leave(unsigned token) {
  if (!token) return;
  pthread_mutex_lock(&g_wd.lock);
  for (int i = 0; i < WD_NCOLL; i++)
    if (g_wd.in[i].token == token) g_wd.in[i].token = 0;
  atomic_fetch_add(&g_wd.gen, 1);
  pthread_mutex_unlock(&g_wd.lock);
}

/* ---- the board as text: "rank pid heartbeat_age progress_age what" per line ---- */
static size_t board_text(char *buf, size_t n) {
  size_t o = 0;
  double now = ddp_now();
  buf[0] = 0;
  for (int i = 0; i < g_wd.local_size && o < n; i++) {
    wd_slot *s = &g_wd.board[i];
    if (atomic_load(&s->pid) == 0) continue; /* not this process's to tell (a private board) */
    char what[WD_WHAT];
    memcpy(what, s->what, sizeof what);
    what[sizeof what - 1] = 0;
    for (char *c = what; *c; c++)
      if (*c == '\n') *c = ' ';
    int w = snprintf(buf + o, n - o, "%d %d %.1f %.1f %s\n", s->rank, atomic_load(&s->pid),
                     now - atomic_load(&s->heartbeat), now - atomic_load(&s->progress), what);
    if (w < 0) break;
    o += (size_t)w;
  }
  return o < n ? o : n - 1;
}

/* ---- the listener: the board for a rank of this job, nothing for anyone else ----
 * An asker sends the job's token line (g_wd.token_line) as soon as it is connected; the board goes only to a
 * connection whose first bytes are that line, within WD_PENDING_S. Until then a connection waits in a small
 * table whose sockets are in the same poll() as the listening one (serve_fds, serve_polled: this thread's
 * loop, the query's waves, the last second before an abort) and are read as their bytes arrive, so that idle
 * holders, floods and 1-byte windows never hold the thread: the timer and the real askers go on. A full
 * table closes its oldest connection. Only this thread touches the table. */
enum { WD_PENDING = 32, WD_SERVE_FDS = 1 + WD_PENDING };
#define WD_PENDING_S 1.0
typedef struct {
  int fd; /* -1: free */
  double since;
  size_t got;
  char buf[sizeof g_wd.token_line];
} wd_pending;
static wd_pending g_pend[WD_PENDING];

static void pending_close(wd_pending *p) {
  close(p->fd);
  p->fd = -1;
}

/* The board for a connection that sent the token, then close. Only a rank of this job gets here, and its answer
 * (a line per local rank) fits a socket's buffer; the send is bounded all the same. */
static void pending_answer(wd_pending *p) {
  static char buf[65536]; /* this thread only */
  publish_if_changed();
  size_t n = board_text(buf, sizeof buf);
  struct timeval tv = {0, 500000};
  int fl = fcntl(p->fd, F_GETFL);
  if (fl >= 0) fcntl(p->fd, F_SETFL, fl & ~O_NONBLOCK);
  setsockopt(p->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  ssize_t w = send(p->fd, buf, n, MSG_NOSIGNAL); /* an asker that gave up must not SIGPIPE us */
  (void)w;
  pending_close(p);
}

/* Reads what connection p has sent; answers it once the whole token line is there and right; closes it on
 * anything else: a wrong line, end of file, an error. */
static void pending_read(wd_pending *p) {
  ssize_t r = recv(p->fd, p->buf + p->got, sizeof p->buf - p->got, 0);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (r <= 0) {
    pending_close(p);
    return;
  }
  p->got += (size_t)r;
  if (p->got < sizeof p->buf) return;
  unsigned char diff = 0; /* compared in constant time: the time taken says nothing of how much of a guess was right */
  for (size_t i = 0; i < sizeof p->buf; i++) diff |= (unsigned char)(p->buf[i] ^ g_wd.token_line[i]);
  if (diff == 0)
    pending_answer(p);
  else
    pending_close(p);
}

/* Takes every connection waiting on the listening socket into the table. */
static void pending_accept(void) {
  for (int k = 0; k < 1024; k++) {
    int c = accept4(g_wd.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) return;
    wd_pending *p = NULL;
    for (int i = 0; i < WD_PENDING && !p; i++)
      if (g_pend[i].fd < 0) p = &g_pend[i];
    if (!p) { /* full: the oldest has had the longest to send its token */
      p = &g_pend[0];
      for (int i = 1; i < WD_PENDING; i++)
        if (g_pend[i].since < p->since) p = &g_pend[i];
      pending_close(p);
    }
    *p = (wd_pending){.fd = c, .since = ddp_now()};
    pending_read(p); /* an asker sends its token at once: it is often here already */
  }
}

/* The listening socket and the pending connections as pf[0 .. WD_SERVE_FDS), for a poll() that may wait on
 * other sockets too; fd -1 (which poll ignores) where there is nothing. */
static void serve_fds(struct pollfd *pf) {
  int on = atomic_load(&g_wd.joined);
  pf[0] = (struct pollfd){on ? g_wd.listen_fd : -1, POLLIN, 0};
  for (int i = 0; i < WD_PENDING; i++) pf[1 + i] = (struct pollfd){on ? g_pend[i].fd : -1, POLLIN, 0};
}

/* After that poll: reads the pending connections that have something, closes those older than WD_PENDING_S,
 * then takes the new ones. */
static void serve_polled(const struct pollfd *pf) {
  if (!atomic_load(&g_wd.joined)) return;
  double now = ddp_now();
  for (int i = 0; i < WD_PENDING; i++) {
    wd_pending *p = &g_pend[i];
    if (p->fd >= 0 && pf[1 + i].fd == p->fd && pf[1 + i].revents) pending_read(p);
    if (p->fd >= 0 && now - p->since > WD_PENDING_S) pending_close(p);
  }
  if (pf[0].revents & POLLIN) pending_accept();
}

/* Serves for up to ms milliseconds (0: what is there now). */
static void serve_for(int ms) {
  struct pollfd pf[WD_SERVE_FDS];
  serve_fds(pf);
  if (poll(pf, WD_SERVE_FDS, ms) < 0)
    for (int i = 0; i < WD_SERVE_FDS; i++) pf[i].revents = 0;
  serve_polled(pf);
}

/* A query in flight: a non-blocking connection to one rank's listener, whether the token went out, and the
 * answer read so far. */
typedef struct {
  int fd, rank, sent;
  size_t got;
  char *buf;
} wd_query;

static int query_open(const wd_peer *p) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p->port)};
  if (inet_pton(AF_INET, p->ip, &a.sin_addr) != 1 ||
      (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS)) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The connection is writable: sends the token line once the connect has succeeded. 0: the query failed. */
static int query_send_token(wd_query *q) {
  int e = 0;
  socklen_t len = sizeof e;
  if (getsockopt(q->fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0 || e != 0) return 0;
  /* 33 bytes into a new connection's empty buffer: all or an error */
  if (send(q->fd, g_wd.token_line, sizeof g_wd.token_line, MSG_NOSIGNAL) != (ssize_t)sizeof g_wd.token_line) return 0;
  q->sent = 1;
  return 1;
}

/* ---- the verdict ---- */
typedef struct {
  int known, pid, behind, suspect;
  double hb_age, prog_age;
  char what[WD_WHAT];
} rank_state;

static void parse_board(const char *text, rank_state *st, int world) {
  for (const char *p = text; p && *p;) {
    int r, pid, k = 0;
    double hb, pr;
    if (sscanf(p, "%d %d %lf %lf %n", &r, &pid, &hb, &pr, &k) == 4 && r >= 0 && r < world) {
      st[r].known = 1;
      st[r].pid = pid;
      st[r].hb_age = hb;
      st[r].prog_age = pr;
      size_t len = strcspn(p + k, "\n");
      if (len >= sizeof st[r].what) len = sizeof st[r].what - 1;
      memcpy(st[r].what, p + k, len);
      st[r].what[len] = 0;
    }
    p = strchr(p, '\n');
    if (p) p++;
  }
}

/* Asks every rank where it is, without MPI: this host's ranks from the shared board, the others' hosts over TCP,
 * all at once (up to 2 ranks a host, WD_ASK_WAVE connections at a time, 1.5 s a wave, 8 s in all); st[world],
 * zeroed by the caller. While it waits it answers whoever asks this rank: ranks that time out together ask each
 * other at the same moment, and an asker that served nobody, or asked one host after another, would take every
 * other asker's host for down. */
enum { WD_ASK_WAVE = 128, WD_ASK_PER_HOST = 2 };
static void states_gather(rank_state *st, char *buf, size_t n) {
  int W = g_wd.world;
  const char *remote_test = testhook_value(HOOK_WATCHDOG_TCP); /* ask this host's ranks over TCP too */
  int me = g_wd.peers[g_wd.rank].node_index;
  double deadline = ddp_now() + 8.0;
  publish_if_changed();
  atomic_store(&g_wd.board[g_wd.local_rank].heartbeat, ddp_now());
  serve_for(0);
  board_text(buf, n);
  parse_board(buf, st, W);
  if (remote_test || g_wd.board_private) { /* this rank alone from the board; the others of its host are asked */
    rank_state self = st[g_wd.rank];
    for (int q = 0; q < W; q++)
      if (g_wd.peers[q].node_index == me) memset(&st[q], 0, sizeof st[q]);
    st[g_wd.rank] = self;
  }
  int nodes = 0;
  for (int r = 0; r < W; r++)
    if (g_wd.peers[r].node_index + 1 > nodes) nodes = g_wd.peers[r].node_index + 1;
  int *wave = calloc((size_t)(nodes > 0 ? nodes : 1), sizeof *wave); /* per host: queries in this wave */
  char *tried = calloc((size_t)W, 1);                                 /* per rank: asked already */
  wd_query *q = calloc(WD_ASK_WAVE, sizeof *q);
  char *space = malloc((size_t)WD_ASK_WAVE * n);
  if (!wave || !tried || !q || !space) goto out;
  while (ddp_now() < deadline) {
    int nq = 0; /* a wave: ranks not asked yet whose host has not answered, up to 2 a host */
    memset(wave, 0, (size_t)nodes * sizeof *wave);
    for (int r = 0; r < W && nq < WD_ASK_WAVE; r++) {
      const wd_peer *p = &g_wd.peers[r];
      int node = p->node_index;
      if (r == g_wd.rank || tried[r] || st[r].known || p->port <= 0 || node < 0 || node >= nodes) continue;
      if ((node == me && !remote_test && !g_wd.board_private) || wave[node] >= WD_ASK_PER_HOST) continue;
      tried[r] = 1;
      int fd = query_open(p);
      if (fd < 0) continue;
      wave[node]++;
      q[nq] = (wd_query){fd, r, 0, 0, space + (size_t)nq * n};
      nq++;
    }
    if (nq == 0) break;
    double end = fmin(deadline, ddp_now() + 1.5);
    int open = nq;
    while (open > 0) {
      int ms = (int)((end - ddp_now()) * 1000);
      if (ms <= 0) break;
      struct pollfd pf[WD_ASK_WAVE + WD_SERVE_FDS]; /* the queries, then what this rank serves */
      for (int k = 0; k < nq; k++) pf[k] = (struct pollfd){q[k].fd, q[k].sent ? POLLIN : POLLOUT, 0};
      serve_fds(pf + nq);
      /* woken at least every 250 ms, so that the pending connections' 1 s runs out on time */
      if (poll(pf, (nfds_t)(nq + WD_SERVE_FDS), ms < 250 ? ms : 250) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      serve_polled(pf + nq);
      for (int k = 0; k < nq; k++) {
        if (q[k].fd < 0 || !pf[k].revents) continue;
        if (!q[k].sent) { /* connected (or refused): the token first */
          if (query_send_token(&q[k])) continue;
          close(q[k].fd);
          q[k].fd = -1;
          open--;
          continue;
        }
        if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t r = read(q[k].fd, q[k].buf + q[k].got, n - 1 - q[k].got);
        if (r > 0) q[k].got += (size_t)r;
        if (r > 0 && q[k].got < n - 1) continue;
        if (r == 0 || q[k].got >= n - 1) { /* the whole answer: it speaks for every rank on its board */
          q[k].buf[q[k].got] = 0;
          parse_board(q[k].buf, st, W);
        }
        close(q[k].fd);
        q[k].fd = -1;
        open--;
      }
    }
    for (int k = 0; k < nq; k++)
      if (q[k].fd >= 0) close(q[k].fd);
  }
out:
  free(wave), free(tried), free(q), free(space);
}

/* How long ago any other rank whose process is alive (heartbeat under 2 s) last made progress; HUGE_VAL when
 * none answered. A rank waiting for others (outside a measurement's group, or for a group slower than itself)
 * makes no progress of its own while the job does. */
static double job_progress_age(const rank_state *st) {
  double age = HUGE_VAL;
  for (int r = 0; r < g_wd.world; r++)
    if (r != g_wd.rank && st[r].known && st[r].hb_age <= 2.0 && st[r].prog_age < age) age = st[r].prog_age;
  return age;
}

/* How long another rank waits for rank 0 to end the job itself when its timer ran out first (watchdog_on_end). */
#define WD_END_DEFER 10.0

void watchdog_on_end(watchdog_end_fn fn, void *arg) {
  pthread_mutex_lock(&g_wd.lock);
  g_wd.end_fn = fn;
  g_wd.end_arg = arg;
  pthread_mutex_unlock(&g_wd.lock);
  atomic_store(&g_wd.end_deferral, fn != NULL || g_wd.rank != 0);
}

void watchdog_on_end_clear(void) {
  pthread_mutex_lock(&g_wd.lock);
  g_wd.end_fn = NULL;
  g_wd.end_arg = NULL;
  pthread_mutex_unlock(&g_wd.lock);
  atomic_store(&g_wd.end_deferral, 0);
}

/* Rank 0, before it aborts the job: the suspects of st (culprit_report marked them; NULL: no one asked) to the
 * hook. */
static void end_hook_call(const rank_state *st) {
  pthread_mutex_lock(&g_wd.lock);
  watchdog_end_fn fn = g_wd.end_fn;
  void *arg = g_wd.end_arg;
  pthread_mutex_unlock(&g_wd.lock);
  if (!fn || g_wd.rank != 0) return;
  int n = 0;
  for (int r = 0; st && r < g_wd.world; r++) n += st[r].suspect;
  watchdog_suspect *s = calloc((size_t)n + 1, sizeof *s);
  if (!s) return;
  n = 0;
  for (int r = 0; st && r < g_wd.world; r++) {
    if (!st[r].suspect) continue;
    watchdog_suspect *x = &s[n++];
    x->rank = r;
    snprintf(x->host, sizeof x->host, "%s", g_wd.peers[r].host);
    if (!st[r].known)
      snprintf(x->where, sizeof x->where, "did not answer the query (process stopped, frozen or gone, or its host "
                                          "unreachable)");
    else if (st[r].behind)
      snprintf(x->where, sizeof x->where, "alive but elsewhere than the others, in %.*s, no progress for %.0f s",
               WD_WHAT - 96, st[r].what, st[r].prog_age);
    else
      snprintf(x->where, sizeof x->where, "not answering (stopped or frozen for %.0f s); last known: %.*s",
               st[r].hb_age, WD_WHAT - 96, st[r].what);
  }
  fn(arg, s, n);
  free(s);
}

/* Prints one line per rank (suspects first) from st (states_gather). Called by the rank whose timer ran out,
 * just before it aborts the job. */
static void culprit_report(FILE *out, rank_state *st) {
  int W = g_wd.world;
  /* Suspects: no answer from their host, or a heartbeat older than 2 s (the process itself is stopped). When all
   * answer, the ranks that are somewhere else than the majority (a step behind, another phase) are the
   * likely culprits: the others wait for them. */
  int nsus = 0, major = -1, major_n = 0;
  for (int r = 0; r < W; r++) nsus += r != g_wd.rank && (!st[r].known || st[r].hb_age > 2.0);
  for (int r = 0; r < W && nsus == 0; r++) {
    int n = 0;
    for (int q = 0; q < W; q++) n += st[q].known && strcmp(st[q].what, st[r].what) == 0;
    if (st[r].known && n > major_n) major = r, major_n = n;
  }
  if (nsus == 0 && major >= 0 && major_n < W && 2 * major_n > W)
    for (int r = 0; r < W; r++)
      if (st[r].known && strcmp(st[r].what, st[major].what) != 0 && !(st[r].prog_age < 1.0))
        st[r].behind = 1, nsus++; /* one progressing now (rank 0 writing in a busy section: its thread ticks it
                                   * every 250 ms) is not behind; one stalled for a second or more is, whichever
                                   * timer fired (-T's of a few seconds, or --timeout's) */
  /* Every rank alive and in the shutdown: the work is done and what MPI_Finalize waits for is the launcher
   * (its exit fence goes through mpirun's daemons or srun's step daemon). Nobody else to suspect. */
  int down = nsus == 0, in_finalize = 1, written = 1;
  for (int r = 0; r < W && down; r++) {
    down = st[r].known && !strncmp(st[r].what, WD_SHUTDOWN, strlen(WD_SHUTDOWN));
    in_finalize &= strstr(st[r].what, "waiting in MPI_Finalize") != NULL;
    written &= !strncmp(st[r].what, WD_SHUTDOWN_WRITTEN, strlen(WD_SHUTDOWN_WRITTEN));
  }
  if (down)
    fprintf(out, "[ddpbench rank %d host %s] asked every rank where it is: every rank has finished and waits in %s: "
                 "the launcher (mpirun, its daemons or srun's step daemon) is not answering; %s\n", g_wd.rank,
            ddp_host(), in_finalize ? "MPI_Finalize" : "the shutdown",
            written ? "the results were written" : "not every result was written (see above)");
  else
    fprintf(out, "[ddpbench rank %d host %s] asked every rank where it is: %d suspect%s\n", g_wd.rank, ddp_host(),
            nsus, nsus == 1 ? "" : "s");
  /* every suspect is marked (the end hook's list), whatever the 32 printed lines leave out */
  for (int r = 0; r < W; r++)
    st[r].suspect = !down && (st[r].behind || (r != g_wd.rank && (!st[r].known || st[r].hb_age > 2.0)));
  int lines = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int r = 0; r < W && lines < 32; r++) {
      int sus = st[r].behind || (r != g_wd.rank && (!st[r].known || st[r].hb_age > 2.0));
      if (sus != (pass == 0)) continue;
      lines++;
      const wd_peer *p = &g_wd.peers[r];
      if (!st[r].known && p->node_index == g_wd.peers[g_wd.rank].node_index)
        fprintf(out, "  SUSPECT rank %d host %s: did not answer the query (process stopped, frozen or gone)\n", r,
                p->host);
      else if (!st[r].known)
        fprintf(out, "  SUSPECT rank %d host %s: its host did not answer the query (down, unreachable, or port %d at %s "
                     "filtered)\n", r, p->host, p->port, p->ip);
      else if (st[r].behind)
        fprintf(out, "  SUSPECT rank %d host %s pid %d: alive but elsewhere than the other %d ranks (they are in "
                        "%s): in %s, no progress for %.0f s\n", r, p->host, st[r].pid, major_n, st[major].what,
                st[r].what, st[r].prog_age);
      else if (sus)
        fprintf(out, "  SUSPECT rank %d host %s pid %d: not answering (process stopped or frozen for %.0f s); last "
                        "known: %s, %.0f s ago\n", r, p->host, st[r].pid, st[r].hb_age, st[r].what, st[r].prog_age);
      else
        fprintf(out, "  rank %d host %s pid %d: alive, in %s (no progress for %.0f s)%s\n", r, p->host, st[r].pid,
                st[r].what, st[r].prog_age, r == g_wd.rank ? " <- this rank" : "");
    }
  if (lines == 32) fprintf(out, "  (more ranks not shown)\n");
}

/* The timer ran out: unless another rank made progress within the timeout (then the job is alive and this rank
 * only waits for it: the timer is set back to that progress), print where every rank is and end the job. */
static void timer_expired(double seen, double idle, const char *forced) {
  int joined = atomic_load(&g_wd.joined);
  rank_state *st = joined ? calloc((size_t)g_wd.world, sizeof *st) : NULL;
  char *buf = joined ? malloc(65536) : NULL;
  if (st && buf) {
    states_gather(st, buf, 65536);
    double age = job_progress_age(st);
    if (!forced && age < g_wd.timeout) {
      double now = ddp_now(), next = now - age; /* check again when that progress is `timeout` old, */
      if (next + g_wd.timeout < now + 1.0) next = now + 1.0 - g_wd.timeout; /* and not within the second */
      atomic_compare_exchange_strong(&g_wd.last, &seen, next); /* unless this rank ticked meanwhile */
      free(st), free(buf);
      return;
    }
    /* Rank 0 writes what it knows when the job ends (watchdog_on_end): another rank whose timer ran out first,
     * while rank 0 is alive and answering, leaves it the abort for a while, once. */
    if (!forced && g_wd.rank != 0 && atomic_load(&g_wd.end_deferral) && st[0].known && st[0].hb_age <= 2.0 &&
        !g_wd.deferred) {
      g_wd.deferred = 1;
      double now = ddp_now(), next = now - g_wd.timeout + WD_END_DEFER;
      atomic_compare_exchange_strong(&g_wd.last, &seen, next);
      free(st), free(buf);
      return;
    }
  }
  char where[WD_WHAT];
  pthread_mutex_lock(&g_wd.lock);
  compose(where, sizeof where);
  pthread_mutex_unlock(&g_wd.lock);
  int rank = ddp_rank() >= 0 ? ddp_rank() : ddp_launcher_rank();
  if (forced)
    fprintf(stderr, "[ddpbench rank %d host %s] %s; this rank is in %s; aborting the job\n", rank, ddp_host(), forced,
            where);
  else if (st && buf)
    fprintf(stderr, "[ddpbench rank %d host %s] timeout: no progress on any rank for %.0f s (--timeout %g); this "
                    "rank is in %s; aborting the job\n", rank, ddp_host(), fmin(idle, job_progress_age(st)),
            g_wd.timeout, where);
  else
    fprintf(stderr, "[ddpbench rank %d host %s] timeout: no progress for %.0f s (--timeout %g) in %s; aborting the "
                    "job\n", rank, ddp_host(), idle, g_wd.timeout, where);
  if (st && buf) { /* one write, so that two ranks' reports do not interleave line by line */
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m) {
      culprit_report(m, st);
      fclose(m);
      fputs(text, stderr);
      free(text);
    }
  }
  end_hook_call(st && buf ? st : NULL);
  free(st), free(buf);
  fflush(stderr);
  /* Peers that timed out a moment later may be asking this rank now: answer them for a second before the
   * abort ends this process, so that none of them takes this live rank for stopped. */
  for (double until = ddp_now() + 1.0; joined && ddp_now() < until;) serve_for(100);
  atomic_file_abandon();
  dist_abort(DDP_EXIT_RUNTIME);
}

static void *watchdog_main(void *arg) {
  (void)arg;
  double mark = ddp_now();
  for (;;) {
    int joined = atomic_load(&g_wd.joined);
    if (joined) atomic_store(&g_wd.board[g_wd.local_rank].heartbeat, ddp_now());
    publish_if_changed(); /* the board lags the rank by at most one poll (250 ms) */
    serve_for(250); /* everyone who is asking now */
    /* A turn of this loop that should take 250 ms took seconds: this process was stopped as a whole (scontrol
     * suspend, gang scheduling, a VM pause, a debugger) while the clock ran on. That time is no rank's stall:
     * the timer moves on by it. A rank stopped alone is still found: the others'
     * threads ran, and their timers did not move. */
    double gap = ddp_now() - mark;
    if (gap > 2.0) {
      double last = atomic_load(&g_wd.last);
      while (!atomic_compare_exchange_weak(&g_wd.last, &last, last + gap - 0.25)) continue;
    }
    /* A busy section (watchdog_busy: rank 0 writing the report while the others wait for it) is progress: the
     * thread ticks for it, so that this rank's timer and, through the board, its peers' see the job alive. */
    double busy = atomic_load(&g_wd.busy_since), t = ddp_now();
    if (busy > 0 && t - busy < fmax(g_wd.timeout, WD_BUSY_MAX)) {
      atomic_store(&g_wd.last, t);
      if (joined) atomic_store(&g_wd.board[g_wd.local_rank].progress, t);
    }
    double last = atomic_load(&g_wd.last), idle = ddp_now() - last;
    if (atomic_load(&g_wd.forced)) timer_expired(last, idle, g_wd.forced_why);
    if (g_wd.timeout > 0 && idle > g_wd.timeout) timer_expired(last, idle, NULL);
    mark = ddp_now();
  }
  return NULL;
}

/* ---- start-up ---- */
/* This host's address as peers should dial it: a non-loopback IPv4 address of its name, else of an interface
 * that is up (Debian maps the hostname to 127.0.1.1), else loopback (then only this host can be asked). */
static void my_ip(const char *host, char *ip, size_t n) {
  snprintf(ip, n, "127.0.0.1");
  struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
  if (getaddrinfo(host, NULL, &hints, &res) == 0) {
    for (struct addrinfo *a = res; a; a = a->ai_next) {
      char s[48];
      if (inet_ntop(AF_INET, &((struct sockaddr_in *)a->ai_addr)->sin_addr, s, sizeof s) && strncmp(s, "127.", 4)) {
        snprintf(ip, n, "%s", s);
        freeaddrinfo(res);
        return;
      }
    }
    freeaddrinfo(res);
  }
  struct ifaddrs *ifs = NULL;
  if (getifaddrs(&ifs) != 0) return;
  for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
    char s[48];
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
      continue;
    if (inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, s, sizeof s)) {
      snprintf(ip, n, "%s", s);
      break;
    }
  }
  freeifaddrs(ifs);
}

/* Listens on ip, the address peers dial (my_ip), so that the port is not open on every network of the host;
 * on every address when ip is not this host's to bind (*any set; the token still keeps
 * strangers out). Returns the port, -1 when there is none. */
static int listen_on(const char *ip, int *any) {
  for (*any = 0; *any < 2; ++*any) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY), .sin_port = 0};
    socklen_t len = sizeof a;
    if ((*any || inet_pton(AF_INET, ip, &a.sin_addr) == 1) && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        listen(fd, 64) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0) {
      g_wd.listen_fd = fd;
      return ntohs(a.sin_port);
    }
    close(fd);
  }
  *any = 0;
  return -1;
}

/* The job's token: WD_TOKEN bytes from the kernel's generator (getrandom, else /dev/urandom). 0: none to be had. */
static int token_draw(unsigned char *t) {
  if (getrandom(t, WD_TOKEN, 0) == WD_TOKEN) return 1;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  size_t got = 0;
  while (fd >= 0 && got < WD_TOKEN) {
    ssize_t r = read(fd, t + got, WD_TOKEN - got);
    if (r <= 0 && !(r < 0 && errno == EINTR)) break;
    if (r > 0) got += (size_t)r;
  }
  if (fd >= 0) close(fd);
  return got == WD_TOKEN;
}

/* The host's board: local rank 0 creates a file in /dev/shm (else /tmp), every local rank maps it, then it is
 * unlinked. Without one, each rank keeps a board of its own: the query then learns about the other ranks of
 * this host over TCP only. */
/* Boards that a job which died while setting them up left behind (a rank killed between the create and the
 * unlink): a board whose creator's pid is gone is removed. Only this user's files of the
 * board's exact name form. */
static void boards_sweep(const char *dir) {
  DIR *dh = opendir(dir);
  if (!dh) return;
  struct dirent *e;
  while ((e = readdir(dh))) {
    long pid = 0;
    unsigned long long ns = 0;
    int k = 0;
    if (sscanf(e->d_name, "ddpbench-watchdog-%ld-%llx%n", &pid, &ns, &k) != 2 || e->d_name[k] || pid <= 0) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid()) unlink(path);
  }
  closedir(dh);
}

static ddp_result board_map(const ddp_dist *d) {
  char name[128] = "";
  if (d->local_rank == 0) {
    struct stat st;
    const char *dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
    boards_sweep(dir);
    snprintf(name, sizeof name, "%s/ddpbench-watchdog-%ld-%llx", dir, (long)getpid(),
             (unsigned long long)(ddp_now() * 1e9));
  }
  DDP_CHECK_MPI(MPI_Bcast(name, sizeof name, MPI_CHAR, 0, d->node));
  size_t bytes = (size_t)d->local_size * sizeof(wd_slot);
  int fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  int ok = fd >= 0 && (d->local_rank != 0 || ftruncate(fd, (off_t)bytes) == 0);
  DDP_CHECK_MPI(MPI_Barrier(d->node)); /* the file has its size */
  void *p = ok ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (fd >= 0) close(fd);
  DDP_CHECK_MPI(MPI_Barrier(d->node)); /* everyone has it mapped (or failed) */
  if (d->local_rank == 0) unlink(name);
  int bad = p == MAP_FAILED;
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, d->node));
  if (bad) {
    if (p != MAP_FAILED) munmap(p, bytes);
    ddp_notice("watchdog: cannot share a status board in %s; a timeout will ask this host's ranks over TCP only", name);
    p = calloc((size_t)d->local_size, sizeof(wd_slot));
    DDP_CHECK_ALLOC(p);
    g_wd.board_private = 1;
  }
  g_wd.board = p;
  return DDP_OK;
}

ddp_result watchdog_join(const ddp_dist *d) {
  if (atomic_load(&g_wd.joined)) return DDP_OK;
  g_wd.rank = d->rank;
  g_wd.world = d->size;
  g_wd.local_rank = d->local_rank;
  g_wd.local_size = d->local_size;
  for (int i = 0; i < WD_PENDING; i++) g_pend[i].fd = -1;
  /* The token: rank 0 draws it, every rank learns it here. Without one nobody listens (port -1): this host's
   * ranks are still read from the board. */
  unsigned char tok[WD_TOKEN + 1] = {0}; /* the bytes, then whether there are any */
  if (d->rank == 0) tok[WD_TOKEN] = (unsigned char)token_draw(tok);
  DDP_CHECK_MPI(MPI_Bcast(tok, (int)sizeof tok, MPI_BYTE, 0, d->world));
  for (int i = 0; i < WD_TOKEN; i++) {
    static const char hex[] = "0123456789abcdef";
    g_wd.token_line[2 * i] = hex[tok[i] >> 4];
    g_wd.token_line[2 * i + 1] = hex[tok[i] & 15];
  }
  g_wd.token_line[2 * WD_TOKEN] = '\n';
  int have_token = tok[WD_TOKEN];
  memset(tok, 0, sizeof tok);
  wd_peer me;
  memset(&me, 0, sizeof me);
  me.node_index = d->node_index;
  snprintf(me.host, sizeof me.host, "%.63s", d->host);
  my_ip(d->host, me.ip, sizeof me.ip);
  me.port = have_token ? listen_on(me.ip, &me.any) : -1;
  g_wd.peers = calloc((size_t)d->size, sizeof *g_wd.peers);
  DDP_CHECK_ALLOC(g_wd.peers);
  DDP_CHECK_MPI(MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, g_wd.peers, (int)sizeof me, MPI_BYTE, d->world));
  if (!have_token)
    ddp_notice("watchdog: no random bytes for the query's token (getrandom and /dev/urandom failed); a timeout will "
               "not ask other hosts' ranks");
  for (int r = 0; r < d->size; r++) /* rank 0 speaks for every rank, once */
    if (g_wd.peers[r].any) {
      ddp_notice("watchdog: rank %d (host %s) cannot listen on %s, the address its peers dial; its query port %d "
                 "listens on every address (only this job's token is answered)", r, g_wd.peers[r].host,
                 g_wd.peers[r].ip, g_wd.peers[r].port);
      break;
    }
  DDP_TRY(board_map(d));
  wd_slot *s = &g_wd.board[d->local_rank];
  s->rank = d->rank;
  atomic_store(&s->pid, (int)getpid());
  pthread_mutex_lock(&g_wd.lock);
  compose(s->what, sizeof s->what);
  pthread_mutex_unlock(&g_wd.lock);
  atomic_store(&s->progress, atomic_load(&g_wd.last));
  atomic_store(&s->heartbeat, ddp_now());
  atomic_store(&g_wd.joined, 1);
  return DDP_OK;
}

/* ---- signals ---- */
/* Built outside the handler (snprintf is not async-signal-safe), again once the rank is known. */
static char g_msg_int[160], g_msg_term[160];

/* watchdog_signal_note: two copies, the handler reads the one g_note_cur names (the other is being written). */
static char g_note[2][1200];
static volatile sig_atomic_t g_note_cur = -1;

void watchdog_signal_note(const char *line) {
  int next = g_note_cur == 0 ? 1 : 0;
  snprintf(g_note[next], sizeof g_note[next], "%s%s", line ? line : "", line && line[0] ? "\n" : "");
  g_note_cur = next;
}

static void on_signal(int sig) {
  if (g_decided >= 0) _exit(g_decided); /* the work is over and its outputs are in place */
  atomic_file_abandon();
  const char *m = sig == SIGINT ? g_msg_int : g_msg_term;
  ssize_t w = write(2, m, strlen(m));
  int cur = g_note_cur;
  if (cur >= 0 && g_note[cur][0]) w = write(2, g_note[cur], strlen(g_note[cur]));
  (void)w;
  _exit(sig == SIGINT ? DDP_EXIT_SIGINT : DDP_EXIT_SIGTERM);
}

void watchdog_signals_install(void) {
  int rank = ddp_rank() >= 0 ? ddp_rank() : ddp_launcher_rank();
  snprintf(g_msg_int, sizeof g_msg_int, "[ddpbench rank %d host %.64s] interrupted (SIGINT): exiting with code %d\n",
           rank, ddp_host(), DDP_EXIT_SIGINT);
  snprintf(g_msg_term, sizeof g_msg_term, "[ddpbench rank %d host %.64s] terminated (SIGTERM): exiting with code %d\n",
           rank, ddp_host(), DDP_EXIT_SIGTERM);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

void watchdog_set_timeout(double timeout) {
  if (g_wd.started) {
    atomic_store(&g_wd.timeout, timeout);
    return;
  }
  if (timeout <= 0) return;
  atomic_store(&g_wd.timeout, timeout);
  pthread_t tid;
  if (pthread_create(&tid, NULL, watchdog_main, NULL) == 0) {
    pthread_detach(tid);
    g_wd.started = 1;
  } else {
    ddp_notice("cannot start the watchdog thread: --timeout %g is not enforced", timeout);
  }
}

void watchdog_start(double timeout, const char *what) {
  watchdog_signals_install();
  watchdog_tick(what);
  if (!g_wd.started) watchdog_set_timeout(timeout);
}
