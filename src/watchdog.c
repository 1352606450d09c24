/* watchdog.c: the watchdog thread and the SIGINT/SIGTERM handlers of watchdog.h. The thread only reads a
 * clock and a location string and, on timeout, prints one line and calls dist_abort; it never touches the
 * engine, the device or the comm. The signal handlers use async-signal-safe calls only (unlink, write,
 * _exit). */
#include "watchdog.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "common.h"
#include "dist.h"

static struct {
  double timeout;
  _Atomic double last;
  char what[128];
  pthread_mutex_t lock;
  int started;
} g_wd = {.lock = PTHREAD_MUTEX_INITIALIZER};

void watchdog_tick(const char *what) {
  if (what) {
    pthread_mutex_lock(&g_wd.lock);
    snprintf(g_wd.what, sizeof g_wd.what, "%s", what);
    pthread_mutex_unlock(&g_wd.lock);
  }
  atomic_store(&g_wd.last, ddp_now());
}

static void *watchdog_main(void *arg) {
  (void)arg;
  for (;;) {
    struct timespec ts = {0, 250000000};
    nanosleep(&ts, NULL);
    double idle = ddp_now() - atomic_load(&g_wd.last);
    if (idle <= g_wd.timeout) continue;
    pthread_mutex_lock(&g_wd.lock);
    int rank = ddp_rank() >= 0 ? ddp_rank() : ddp_launcher_rank();
    fprintf(stderr, "[ddpbench rank %d host %s] timeout: no progress for %.0f s (--timeout %g) in %s; aborting the "
                    "job\n", rank, ddp_host(), idle, g_wd.timeout, g_wd.what);
    pthread_mutex_unlock(&g_wd.lock);
    atomic_file_abandon();
    dist_abort(DDP_EXIT_RUNTIME);
  }
  return NULL;
}

/* Built outside the handler (snprintf is not async-signal-safe), again once the rank is known. */
static char g_msg_int[160], g_msg_term[160];

static void on_signal(int sig) {
  atomic_file_abandon();
  const char *m = sig == SIGINT ? g_msg_int : g_msg_term;
  ssize_t w = write(2, m, strlen(m));
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

void watchdog_start(double timeout, const char *what) {
  watchdog_signals_install();
  watchdog_tick(what);
  if (timeout <= 0 || g_wd.started) return;
  g_wd.timeout = timeout;
  pthread_t tid;
  if (pthread_create(&tid, NULL, watchdog_main, NULL) == 0) {
    pthread_detach(tid);
    g_wd.started = 1;
  } else {
    ddp_notice("cannot start the watchdog thread: --timeout %g is not enforced", timeout);
  }
}
