/* The callback queue between libtoolnexus's threads and the Go binding's pump goroutine.
 *
 * A Go function called from a thread Go did not start (a libtoolnexus runtime thread) is the
 * expensive kind of cgo callback: it borrows a P for the call and keeps it "in a syscall"
 * after returning to C, so the goroutine it starts waits for another thread to steal it or
 * for sysmon to take the P back, and every such call costs scheduler wake-ups on both sides.
 * So the trampolines post each callback here instead, with copies of its strings, and one
 * write to a pipe wakes the pump, a goroutine parked in Go's own poller, which delivers them
 * in order on Go's threads. */
#ifndef TOOLNEXUS_GO_PUMP_H
#define TOOLNEXUS_GO_PUMP_H

#include <stdint.h>

/* What a posted callback is: which exported Go function delivers it. */
enum {
  TN_GO_CB_TOOL = 1,
  TN_GO_CB_WAIT_FOR,
  TN_GO_CB_TOOLKIT_WAIT_FOR,
  TN_GO_CB_SKILL_PROVIDER,
  TN_GO_CB_TRANSPORT,
  TN_GO_CB_HOOK,
  TN_GO_CB_ON_ERROR,
  TN_GO_CB_BODY_TRANSFORM,
  TN_GO_CB_GENERATE,
  TN_GO_CB_STORE,
  TN_GO_CB_STREAM_EVENT,
  TN_GO_CB_DONE,
};

/* One posted callback: its kind, the handles and token it was called with, and copies of
 * its strings (b is NULL for a callback of one string). */
typedef struct tn_go_cb {
  struct tn_go_cb *next;
  int kind;
  uintptr_t ud;
  uintptr_t run;
  char *a;
  char *b;
  uint64_t token;
  int32_t status;
} tn_go_cb;

/* Starts queueing: wake_fd is the pipe's write end the pump reads the other end of. */
void tn_go_pump_start(int wake_fd);

/* Stops queueing (the pump cannot read its pipe): callbacks are delivered directly again. */
void tn_go_pump_stop(void);

/* Marks this thread as driving a run on itself (on > 0) or not (on == 0), returning what it
 * was; on < 0 only asks. While it drives, callbacks made on it are delivered directly, not
 * queued. */
int tn_go_driving(int on);

/* Queues a callback; 0 when it is not queued (no pump, or no memory), and the trampoline
 * then calls the Go function itself, as it did before the pump. */
int tn_go_post(int kind, uintptr_t ud, uintptr_t run, const char *a, const char *b, uint64_t token, int32_t status);

/* Every queued callback, oldest first (NULL when none); the pump frees each with tn_go_cb_free. */
tn_go_cb *tn_go_take(void);

void tn_go_cb_free(tn_go_cb *cb);

#endif
