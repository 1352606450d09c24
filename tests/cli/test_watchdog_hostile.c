/* test_watchdog_hostile: the watchdog against hostile peers at its query port and a frozen
 * launcher, on the real program under mpirun (CPU device, configs/ci.ini):
 *   - "strangers": while a 2-rank job runs (btl self,vader, so that a rank's one TCP listener is the
 *     watchdog's), each rank's query port is bound to the address its peers dial, not 0.0.0.0, and a
 *     connection that sends nothing, garbage, a wrong token or a short one gets no byte back and is closed
 *     within 3 s (the listener drops it after 1 s); 50 idle connections to each rank are held meanwhile
 *     (reopened as the listener drops them); the job still ends with exit 0, its JSON written;
 *   - "askers": 3 ranks that ask each other over TCP (DDPBENCH_TEST_WATCHDOG_TCP), rank 2 stopped in the ddp
 *     phase, 50 idle connections held on every rank's port through the timeout: exit 3, rank 2 named as the
 *     suspect and rank 0 and rank 1 not (their token-bearing queries got through the idle holders);
 *   - "launcher": mpirun stopped (SIGSTOP) while rank 0 writes the JSON, --timeout 3: every rank ends on its
 *     own within 30 s, the JSON is there, each says in one line that every rank has finished and waits in
 *     MPI_Finalize, that the launcher is not answering and that the results were written, nobody is named
 *     SUSPECT, and the job's code (mpirun continued afterwards) is 3. The stop is made while the temporary
 *     file exists (DDPBENCH_TEST_WRITE_DELAY holds its rename 2 s): a stop after the file appears would race
 *     MPI_Finalize, which needs mpirun for only a few milliseconds once the file is in place.
 * Every process started is ended by pid (the ranks, then mpirun's process group), also when a check fails.
 * argv: mpiexec ddpbench srcdir. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"

static char dir[] = "/tmp/ddpbench-test-watchdog-hostile-XXXXXX";
static char err[1 << 18];

/* ---- the job: mpirun in its own process group, stderr to dir/stderr ---- */
enum { MAX_RANKS = 4 };
static pid_t launcher = -1, ranks[MAX_RANKS];
static int nranks, launcher_code = -1; /* its exit code once reaped (128 + signal) */

static pid_t job_start(const char *cmd) {
  char sh[8192];
  snprintf(sh, sizeof sh, "exec %s", cmd);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    int fd = open(tl_path(dir, "stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0644), nul = open("/dev/null", O_WRONLY);
    dup2(fd, 2);
    dup2(nul, 1);
    execl("/bin/sh", "sh", "-c", sh, (char *)NULL);
    _exit(127);
  }
  setpgid(pid, pid);
  launcher = pid;
  launcher_code = -1;
  nranks = 0;
  return pid;
}

/* The launcher has exited (reaped here, its code kept). */
static int job_done(void) {
  int st = 0;
  if (launcher_code < 0 && waitpid(launcher, &st, WNOHANG) == launcher)
    launcher_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return launcher_code >= 0;
}

/* The launcher's children (the ranks, on one host), found from /proc; how many. */
static int job_ranks(void) {
  DIR *d = opendir("/proc");
  struct dirent *e;
  nranks = 0;
  while (d && (e = readdir(d)) && nranks < MAX_RANKS) {
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || tl_file_read(path, buf, sizeof buf) <= 0) continue;
    const char *close_paren = strrchr(buf, ')');
    int ppid = 0;
    char state = 0;
    if (close_paren && sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2 && ppid == launcher)
      ranks[nranks++] = (pid_t)atoi(e->d_name);
  }
  if (d) closedir(d);
  return nranks;
}

/* Waits for the launcher up to limit s; its exit code (128 + signal), or -1 when it was still running (then it is
 * killed). Ends every rank and the launcher's group either way. */
static int job_end(double limit) {
  for (double t0 = tl_now(); tl_now() - t0 < limit && !job_done();) usleep(50000);
  int code = launcher_code;
  for (int i = 0; i < nranks; i++) kill(ranks[i], SIGKILL); /* gone already, or held by a failure */
  kill(-launcher, SIGCONT);
  kill(-launcher, SIGKILL);
  if (code < 0) waitpid(launcher, NULL, 0);
  launcher = -1;
  tl_file_read(tl_path(dir, "stderr"), err, sizeof err);
  return code;
}

/* Every rank found by job_ranks has exited (gone, or a zombie of the stopped launcher). */
static int ranks_gone(void) {
  for (int i = 0; i < nranks; i++) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)ranks[i]);
    const char *p = tl_file_read(path, buf, sizeof buf) > 0 ? strrchr(buf, ')') : NULL;
    if (p && p[1] == ' ' && p[2] != 'Z') return 0;
  }
  return 1;
}

/* ---- a rank's query port, from its socket inodes and its network namespace's /proc/net/tcp ---- */
/* The IPv4 listening socket of pid: 1 and *a filled when there is exactly one, else how many there are. */
static int listener_of(pid_t pid, struct sockaddr_in *a) {
  char path[300], link[128];
  unsigned long inodes[256];
  int ni = 0;
  snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
  DIR *d = opendir(path);
  struct dirent *e;
  while (d && (e = readdir(d)) && ni < 256) {
    char fd[600];
    snprintf(fd, sizeof fd, "%s/%s", path, e->d_name);
    ssize_t n = readlink(fd, link, sizeof link - 1);
    if (n <= 0) continue;
    link[n] = 0;
    if (sscanf(link, "socket:[%lu]", &inodes[ni]) == 1) ni++;
  }
  if (d) closedir(d);
  snprintf(path, sizeof path, "/proc/%d/net/tcp", (int)pid);
  static char tcp[1 << 20]; /* /proc files have no size to slurp by */
  int found = 0;
  if (tl_file_read(path, tcp, sizeof tcp) <= 0) return 0;
  for (char *l = strchr(tcp, '\n'); l && *++l;) {
    unsigned ip, port, st;
    unsigned long inode;
    if (sscanf(l, "%*d: %x:%x %*x:%*x %x %*x:%*x %*x:%*x %*x %*d %*d %lu", &ip, &port, &st, &inode) == 4 && st == 0x0A)
      for (int i = 0; i < ni; i++)
        if (inodes[i] == inode) {
          found++;
          *a = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
          a->sin_addr.s_addr = ip; /* /proc/net/tcp prints the address in the kernel's (network) byte order */
        }
    l = strchr(l, '\n');
  }
  return found;
}

/* Where to dial a listener: its address, loopback for 0.0.0.0. */
static struct sockaddr_in dial_of(struct sockaddr_in a) {
  if (a.sin_addr.s_addr == htonl(INADDR_ANY)) a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

/* Every rank's listener, waited for up to 20 s (the ports open at watchdog_join); 1 when all nranks have one. */
static int listeners(int want, struct sockaddr_in *a) {
  for (double t0 = tl_now(); tl_now() - t0 < 20; usleep(100000)) {
    if (job_ranks() < want) continue;
    int ok = 1;
    for (int r = 0; r < want && ok; r++) ok = listener_of(ranks[r], &a[r]) == 1;
    if (ok) return 1;
  }
  return 0;
}

/* ---- strangers ---- */
static int dial(struct sockaddr_in a, int nonblock) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) return -1;
  a = dial_of(a);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Connects, sends n bytes of what, then reads for up to 3 s. Returns the bytes that came back; *closed: the
 * listener ended the connection (end of file or reset) within those 3 s. -1: could not connect. */
static long probe(struct sockaddr_in a, const char *what, size_t n, int *closed) {
  int fd = dial(a, 0);
  if (fd < 0) return -1;
  if (n) {
    ssize_t w = send(fd, what, n, MSG_NOSIGNAL);
    (void)w;
  }
  long got = 0;
  *closed = 0;
  for (double t0 = tl_now(); tl_now() - t0 < 3 && !*closed;) {
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t r = recv(fd, buf, sizeof buf, 0);
    if (r > 0) got += r;
    else *closed = 1;
  }
  close(fd);
  return got;
}

/* Idle connections to every rank's port: reopened as the listener drops them; every byte they receive counted. */
enum { HOLDERS = 50 };
static int held[MAX_RANKS][HOLDERS];
static long held_bytes;
static void holders_keep(int n, const struct sockaddr_in *a) {
  for (int r = 0; r < n; r++)
    for (int i = 0; i < HOLDERS; i++) {
      int *fd = &held[r][i];
      if (*fd > 0) {
        struct pollfd pf = {*fd, POLLIN, 0};
        if (poll(&pf, 1, 0) <= 0) continue; /* still held */
        char buf[4096];
        ssize_t got = recv(*fd, buf, sizeof buf, MSG_DONTWAIT);
        if (got > 0) held_bytes += got;
        if (got < 0 && errno == EAGAIN) continue; /* connecting */
        close(*fd);
      }
      *fd = dial(a[r], 1);
    }
}
static void holders_close(int n) {
  for (int r = 0; r < n; r++)
    for (int i = 0; i < HOLDERS; i++)
      if (held[r][i] > 0) close(held[r][i]), held[r][i] = 0;
}

int main(int argc, char **argv) {
  if (argc < 4 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: test_watchdog_hostile MPIEXEC DDPBENCH SOURCE_DIR\n");
    return 1;
  }
  const char *mpiexec = argv[1], *prog = argv[2], *src = argv[3];
  char cmd[4096];
  struct sockaddr_in port[MAX_RANKS];

  /* strangers: a 2-rank job of ~10 s (60000 steps of ci.ini), its ports asked without the token */
  char json[512];
  snprintf(json, sizeof json, "%s/strangers.json", dir);
  snprintf(cmd, sizeof cmd, "%s -np 2 --oversubscribe --mca btl self,vader %s --config %s/configs/ci.ini --device cpu "
           "--steps 60000 --timeout 30 --progress none --json %s", mpiexec, prog, src, json);
  job_start(cmd);
  int have = listeners(2, port);
  CHECK(have, "the 2 ranks' query ports found (one IPv4 listener each)");
  if (have) {
    static const char garbage[] = "GET / HTTP/1.0\r\nHost: x\r\n\r\n\x01\xff garbage";
    char wrong[40], shortt[40];
    snprintf(wrong, sizeof wrong, "%032d\n", 0);
    snprintf(shortt, sizeof shortt, "%031d\n", 0);
    const char *sent[] = {"", garbage, wrong, shortt};
    const size_t len[] = {0, sizeof garbage - 1, strlen(wrong), strlen(shortt)};
    const char *what[] = {"nothing", "garbage", "a wrong token", "a short token"};
    for (int r = 0; r < 2; r++) {
      CHECK(port[r].sin_addr.s_addr != htonl(INADDR_ANY), "rank %d's query port is bound to the address its peers "
            "dial, not 0.0.0.0", r);
      for (int k = 0; k < 4; k++) {
        holders_keep(2, port);
        int closed = 0;
        long got = probe(port[r], sent[k], len[k], &closed);
        CHECK(got == 0 && closed, "rank %d, a connection that sends %s: %ld bytes back (want 0), %s", r, what[k], got,
              closed ? "closed" : "not closed within 3 s");
      }
    }
    /* the holders through the rest of the run */
    for (int i = 0; i < 200 && !job_done(); i++) {
      holders_keep(2, port);
      usleep(50000);
    }
  }
  holders_close(2);
  int code = job_end(60);
  CHECK(code == 0 && access(json, F_OK) == 0, "strangers: the job ends normally: exit %d, JSON %s: %.3000s", code,
        access(json, F_OK) == 0 ? "written" : "missing", err);
  CHECK(held_bytes == 0, "the idle holders received %ld bytes (want 0)", held_bytes);

  /* askers: 3 ranks asking each other over TCP while every port is held by 50 idle connections */
  snprintf(cmd, sizeof cmd, "env DDPBENCH_TEST_FAULT=stop:2:ddp DDPBENCH_TEST_WATCHDOG_TCP=1 %s -np 3 --oversubscribe "
           "--mca btl self,vader -x DDPBENCH_TEST_FAULT -x DDPBENCH_TEST_WATCHDOG_TCP %s --config %s/configs/ci.ini "
           "--device cpu --timeout 5 --progress none", mpiexec, prog, src);
  job_start(cmd);
  have = listeners(3, port);
  CHECK(have, "the 3 ranks' query ports found");
  for (double t0 = tl_now(); have && tl_now() - t0 < 40 && !job_done(); usleep(50000))
    holders_keep(3, port);
  holders_close(3);
  held_bytes = 0;
  code = job_end(40);
  CHECK(code == 3, "askers: exit %d (want 3): %.3000s", code, err);
  CHECK(strstr(err, "SUSPECT rank 2 host") && !strstr(err, "SUSPECT rank 0") && !strstr(err, "SUSPECT rank 1"),
        "askers: rank 2 named, the live ranks not (their answers came through the holders): %.3000s", err);
  CHECK(strstr(err, "  rank 0 host") && strstr(err, "  rank 1 host"), "askers: ranks 0 and 1 reported alive: %.3000s",
        err);

  /* launcher: mpirun stopped while the JSON is being written; the ranks finish, then wait in MPI_Finalize */
  snprintf(json, sizeof json, "%s/launcher.json", dir);
  snprintf(cmd, sizeof cmd, "env DDPBENCH_TEST_WRITE_DELAY=2 %s -np 2 --oversubscribe -x DDPBENCH_TEST_WRITE_DELAY %s "
           "--config %s/configs/ci.ini --device cpu --timeout 3 --progress none --json %s", mpiexec, prog, src, json);
  job_start(cmd);
  int stopped = 0, gone = 0;
  for (double t0 = tl_now(); tl_now() - t0 < 30 && !stopped && !job_done(); usleep(20000))
    if (tl_dir_count(dir, ".tmp.") > 0 && job_ranks() == 2) stopped = kill(launcher, SIGSTOP) == 0;
  CHECK(stopped, "launcher: mpirun stopped during the JSON write");
  for (double t0 = tl_now(); stopped && tl_now() - t0 < 30 && !gone;) {
    usleep(100000);
    gone = ranks_gone();
  }
  CHECK(gone, "launcher: every rank ended on its own within 30 s of mpirun's stop");
  CHECK(access(json, F_OK) == 0, "launcher: the JSON was written");
  kill(launcher, SIGCONT); /* it reaps the ranks and passes their output and exit code on */
  code = job_end(30);
  CHECK(code == 3, "launcher: exit %d (want 3, the runtime code): %.3000s", code, err);
  CHECK(tl_lines_starting(err, "[ddpbench rank ") >= 2 &&
            strstr(err, "asked every rank where it is: every rank has finished and waits in MPI_Finalize: the "
                        "launcher (mpirun, its daemons or srun's step daemon) is not answering; the results were "
                        "written\n"),
        "launcher: the report names the launcher and says the results were written: %.3000s", err);
  CHECK(!strstr(err, "SUSPECT") && !strstr(err, "suspect"), "launcher: no rank suspected: %.3000s", err);

  tl_rmtree(dir);
  return check_summary();
}
