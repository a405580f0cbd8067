/* Streaming (ABI version 3): a run whose replies are server-sent events. A host transport
 * answers with the whole event stream at once (it cannot stream); the events still come in
 * order, and the result is the run's. Run under valgrind and ASan/UBSan by `make c-tests`. */
#include "support.h" /* first: it sets the feature macros */

static const char *CALL_SSE =
    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"nope\","
    "\"arguments\":\"{}\"}}]}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
static const char *TEXT_SSE =
    "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":2,"
    "\"completion_tokens\":1,\"total_tokens\":3}}\n\ndata: [DONE]\n\n";

static char g_kinds[128];
static char g_text[64];

static void record(const char *event_json) {
  tj *ev = tj_parse(event_json);
  const char *type = ev ? jstr(ev, "type") : NULL;
  if (type) {
    strncat(g_kinds, type, sizeof g_kinds - strlen(g_kinds) - 2);
    strcat(g_kinds, ",");
  }
  if (type && strcmp(type, "text") == 0) strncat(g_text, jstr(ev, "delta"), sizeof g_text - strlen(g_text) - 1);
  tj_free(ev);
}

static void on_event(void *user_data, const char *event_json) {
  CHECK(user_data == (void *)g_kinds, "on_event gets its own user_data");
  record(event_json);
}

static pthread_t g_main;
static int g_off_main;

/* Driven on the caller's thread (tn_client_stream_here, ABI version 4): events come there. */
static void on_event_here(void *user_data, const char *event_json) {
  waiter_t *w = user_data;
  CHECK(w->fired == 0, "every event before done");
  g_off_main += !pthread_equal(pthread_self(), g_main);
  record(event_json);
}

/* The async variant hands on_event the run's user_data, as done gets it. */
static void on_event_async(void *user_data, const char *event_json) {
  waiter_t *w = user_data;
  CHECK(w->fired == 0, "every event before done");
  record(event_json);
}

int main(void) {
  const char *replies[] = {CALL_SSE, TEXT_SSE, TEXT_SSE, TEXT_SSE, "data: {garbage\n\n"};
  script_t s;
  script_init(&s, replies, 5);
  g_main = pthread_self();
  tn_callbacks cb = {0};
  cb.user_data = &s;
  cb.transport = script_transport;
  tn_client *c = NULL;
  CHECK(tn_client_new("{\"base_url\":\"http://model.invalid/v1\",\"style\":\"openai\",\"model\":\"m\",\"api_key\":\"k\"}",
                      &cb, &c, NULL) == TN_OK,
        "tn_client_new");
  char *out = NULL, *err = NULL;
  CHECK(tn_client_stream(c, NULL, "{\"prompt\":\"hi\"}", NULL, on_event, g_kinds, &out, &err) == TN_OK, "stream: %s",
        err ? err : "");
  CHECK(strcmp(g_kinds, "tool_call,tool_result,text,text,usage,") == 0, "events in order: %s", g_kinds);
  CHECK(strcmp(g_text, "Hello") == 0, "the deltas: %s", g_text);
  tj *r = tj_parse(out);
  CHECK(r && strcmp(jstr(r, "text"), "Hello") == 0 && strcmp(jstr(r, "status"), "done") == 0, "the result: %s", out);
  tj_free(r);
  tn_string_free(out);
  CHECK(s.last_request && tj_get(s.last_request, "stream") && tj_get(s.last_request, "stream_options"),
        "the request asked for a stream");

  g_kinds[0] = g_text[0] = '\0';
  waiter_t w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL};
  CHECK(tn_client_stream_async(c, NULL, "{\"prompt\":\"hi\"}", NULL, on_event_async, on_done, &w, NULL) == TN_OK,
        "async start");
  wait_done(&w);
  CHECK(w.status == TN_OK && strcmp(g_kinds, "text,text,usage,") == 0, "async: %d %s", w.status, g_kinds);
  free(w.json);
  g_kinds[0] = '\0';
  waiter_t wh = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL};
  CHECK(tn_client_stream_here(c, NULL, "{\"prompt\":\"hi\"}", NULL, on_event_here, on_done, &wh, NULL) == TN_OK &&
            wh.fired == 1 && wh.status == TN_OK,
        "here: done before it returned");
  CHECK(strcmp(g_kinds, "text,text,usage,") == 0 && g_off_main == 0, "here: %s, %d off the caller's thread", g_kinds,
        g_off_main);
  free(wh.json);
  g_kinds[0] = '\0';
  CHECK(tn_client_stream(c, NULL, "{\"prompt\":\"hi\"}", NULL, on_event, g_kinds, &out, &err) == TN_ERR_PROTOCOL && err,
        "a garbled stream is a protocol error: %s", err ? err : "");
  tn_string_free(err);
  err = NULL;
  CHECK(tn_client_stream(c, NULL, "{\"prompt\":\"hi\"}", NULL, NULL, NULL, &out, &err) == TN_ERR_INVALID_ARGUMENT,
        "on_event is required");
  tn_string_free(err);
  tn_client_free(c);
  script_done(&s);
  return summary();
}
