/* The callback queue (see pump.h). One mutex guards the list; `signaled` says a wake-up byte
 * is in the pipe and not yet followed by a tn_go_take, so a burst of callbacks (a turn's
 * parallel tool calls) costs one write and one wake-up, and the pipe can never fill. */
#include "pump.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static tn_go_cb *head, *tail;
static int wake = -1;
static int signaled;

void tn_go_pump_start(int wake_fd) {
  pthread_mutex_lock(&mu);
  wake = wake_fd;
  pthread_mutex_unlock(&mu);
}

void tn_go_pump_stop(void) {
  pthread_mutex_lock(&mu);
  wake = -1;
  pthread_mutex_unlock(&mu);
}

static char *copy(const char *s) { return s ? strdup(s) : NULL; }

/* Set while this thread, a Go thread, drives a run (tn_go_run_here): its callbacks are then
 * the cheap kind, made on the thread that called into C, and are not posted. */
static __thread int driving;

int tn_go_driving(int on) {
  int before = driving;
  if (on < 0) return before;
  driving = on;
  return before;
}

int tn_go_post(int kind, uintptr_t ud, uintptr_t run, const char *a, const char *b, uint64_t token, int32_t status) {
  if (driving) return 0;
  tn_go_cb *cb = calloc(1, sizeof *cb);
  if (!cb) return 0;
  cb->kind = kind;
  cb->ud = ud;
  cb->run = run;
  cb->a = copy(a);
  cb->b = copy(b);
  cb->token = token;
  cb->status = status;
  if ((a && !cb->a) || (b && !cb->b)) {
    tn_go_cb_free(cb);
    return 0;
  }
  pthread_mutex_lock(&mu);
  if (wake < 0) {
    pthread_mutex_unlock(&mu);
    tn_go_cb_free(cb);
    return 0;
  }
  if (tail) tail->next = cb; else head = cb;
  tail = cb;
  int fd = signaled ? -1 : wake;
  signaled = 1;
  pthread_mutex_unlock(&mu);
  if (fd >= 0) {
    char byte = 1;
    /* A write happens only after a take, which follows the pump's read of every byte there
     * was, so the pipe holds at most one and the write never blocks. */
    while (write(fd, &byte, 1) < 0 && errno == EINTR) {
    }
  }
  return 1;
}

tn_go_cb *tn_go_take(void) {
  pthread_mutex_lock(&mu);
  tn_go_cb *all = head;
  head = tail = NULL;
  signaled = 0;
  pthread_mutex_unlock(&mu);
  return all;
}

void tn_go_cb_free(tn_go_cb *cb) {
  if (!cb) return;
  free(cb->a);
  free(cb->b);
  free(cb);
}
