/* Helpers shared by the C tests: checks, JSON access (json.h), a scripted model as a
 * transport callback, and completing a token from another thread after a delay. */
#ifndef TN_TEST_SUPPORT_H
#define TN_TEST_SUPPORT_H

#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* usleep, strdup under -std=c99 */
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "toolnexus.h"

static int g_passed, g_failed;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (cond) {                                            \
      g_passed++;                                          \
    } else {                                               \
      g_failed++;                                          \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
    }                                                      \
  } while (0)

static inline int summary(void) {
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}

/* The string member `key` of `root`, or NULL. */
static inline const char *jstr(const tj *root, const char *key) { return tj_str(tj_get(root, key)); }

/* ---- a scripted model: a transport callback answering from a list of bodies ---- */

typedef struct {
  pthread_mutex_t lock;
  const char **replies; /* JSON bodies, served in order with status 200 */
  int next, count;
  int requests;        /* requests received */
  tj *last_request; /* the last request body, parsed */
} script_t;

static inline void script_init(script_t *s, const char **replies, int count) {
  memset(s, 0, sizeof(*s));
  pthread_mutex_init(&s->lock, NULL);
  s->replies = replies;
  s->count = count;
}

static inline void script_done(script_t *s) {
  tj_free(s->last_request);
  pthread_mutex_destroy(&s->lock);
}

static inline void script_transport(void *user_data, const char *request_json, uint64_t token) {
  script_t *s = user_data;
  tj *req = tj_parse(request_json);
  pthread_mutex_lock(&s->lock);
  s->requests++;
  tj_free(s->last_request);
  s->last_request = tj_parse(jstr(req, "body"));
  const char *body = s->next < s->count ? s->replies[s->next++] : NULL;
  pthread_mutex_unlock(&s->lock);
  tj_free(req);
  if (body == NULL) {
    tn_complete(token, TN_ERR_NETWORK, "script exhausted", NULL);
    return;
  }
  tj *resp = tj_object();
  tj_add(resp, "status", tj_number(200));
  tj_add(resp, "headers", tj_object());
  tj_add(resp, "body", tj_string(body));
  char *text = tj_print(resp);
  tn_complete(token, TN_OK, text, NULL);
  free(text);
  tj_free(resp);
}

/* ---- completing from another thread, later ---- */

/* The complete_later threads still running: they are detached, so a test that must outlast
 * them (before tearing down, or before exiting) waits on this count instead of guessing. */
static pthread_mutex_t g_later_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_later_cond = PTHREAD_COND_INITIALIZER;
static int g_later_running;

typedef struct {
  uint64_t token;
  int status;
  char *payload; /* owned */
  int delay_ms;
} later_t;

static inline void *later_main(void *arg) {
  later_t *l = arg;
  usleep((useconds_t)l->delay_ms * 1000);
  tn_complete(l->token, l->status, l->payload, NULL);
  free(l->payload);
  free(l);
  pthread_mutex_lock(&g_later_lock);
  g_later_running--;
  pthread_cond_broadcast(&g_later_cond);
  pthread_mutex_unlock(&g_later_lock);
  return NULL;
}

/* Completes `token` with `payload` from a new detached thread after `delay_ms`. */
static inline void complete_later(uint64_t token, int status, const char *payload, int delay_ms) {
  later_t *l = malloc(sizeof(*l));
  l->token = token;
  l->status = status;
  l->payload = payload ? strdup(payload) : NULL;
  l->delay_ms = delay_ms;
  pthread_mutex_lock(&g_later_lock);
  g_later_running++;
  pthread_mutex_unlock(&g_later_lock);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_create(&t, &attr, later_main, l);
  pthread_attr_destroy(&attr);
}

/* Waits until every complete_later thread has completed its token and let go of its data. */
static inline void wait_later_done(void) {
  pthread_mutex_lock(&g_later_lock);
  while (g_later_running > 0) pthread_cond_wait(&g_later_cond, &g_later_lock);
  pthread_mutex_unlock(&g_later_lock);
}

/* ---- waiting for an async call's `done` ---- */

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int fired, status;
  char *json;
} waiter_t;

static inline void on_done(void *user_data, int32_t status, const char *json) {
  waiter_t *w = user_data;
  pthread_mutex_lock(&w->lock);
  w->fired++;
  w->status = status;
  w->json = strdup(json);
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

static inline void wait_done(waiter_t *w) {
  pthread_mutex_lock(&w->lock);
  while (w->fired == 0) pthread_cond_wait(&w->cond, &w->lock);
  pthread_mutex_unlock(&w->lock);
}

#endif
