/* tn_client_run_here (ABI version 4): the run is driven on the calling thread, its callbacks
 * are made there (or completed from elsewhere, later), `done` has fired once when it returns; a
 * callback made there may make a blocking call (a nested run). `elide_history` leaves the
 * caller's own history out of the result.
 * Run under valgrind and ASan/UBSan by `make c-tests`. */
#include "support.h" /* first: it sets the feature macros */

#define CALLS1(id, name) \
  "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"" id \
  "\",\"type\":\"function\",\"function\":{\"name\":\"" name "\",\"arguments\":\"{}\"}}]}}]}"
#define TEXT1(t) "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"" t "\"}}]}"

static pthread_t g_caller;
static int g_on_caller, g_calls, g_last_to_start, g_nested_status, g_nested_ok;
static tn_client *g_client;

/* Answers on the caller's thread the first time, from another thread later the second. */
static void tool(void *user_data, const char *call_json, uint64_t token) {
  (void)user_data;
  g_calls++;
  g_on_caller += pthread_equal(pthread_self(), g_caller) != 0;
  g_last_to_start += strncmp(call_json, "{\"last_to_start\":true,", 22) == 0;
  if (g_calls == 1) {
    char *out = NULL, *err = NULL;
    g_nested_status = tn_client_run(g_client, NULL, "{\"prompt\":\"x\"}", NULL, &out, &err);
    tj *nested = tj_parse(out);
    g_nested_ok = nested && strcmp(jstr(nested, "text"), "nested") == 0;
    tj_free(nested);
    tn_string_free(out);
    tn_string_free(err);
    tn_complete(token, TN_OK, "{\"output\":\"here\",\"is_error\":false}", NULL);
  } else {
    complete_later(token, TN_OK, "{\"output\":\"later\",\"is_error\":false}", 20);
  }
}

int main(void) {
  const char *replies[] = {CALLS1("c1", "probe"), TEXT1("nested"), CALLS1("c2", "probe"), TEXT1("done"),
                           TEXT1("again")};
  script_t s;
  script_init(&s, replies, 5);
  tn_callbacks cb = {0};
  cb.user_data = &s;
  cb.transport = script_transport;
  char *err = NULL;
  CHECK(tn_client_new("{\"base_url\":\"http://model.invalid/v1\",\"style\":\"openai\",\"model\":\"m\",\"api_key\":\"k\"}",
                      &cb, &g_client, &err) == TN_OK,
        "client: %s", err ? err : "");
  tn_toolkit *tk = NULL;
  CHECK(tn_toolkit_new("[{\"name\":\"probe\"}]", tool, NULL, NULL, &tk, &err) == TN_OK, "toolkit");
  g_caller = pthread_self();

  waiter_t w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL};
  int st = tn_client_run_here(g_client, tk, "{\"prompt\":\"go\"}", NULL, on_done, &w, &err);
  CHECK(st == TN_OK && w.fired == 1 && w.status == TN_OK, "done fired before it returned: %d %d", st, w.fired);
  tj *r = tj_parse(w.json);
  CHECK(r && strcmp(jstr(r, "text"), "done") == 0 && tj_size(tj_get(r, "messages")) == 6, "the result: %s", w.json);
  CHECK(tj_get(r, "history_kept") == NULL, "no history_kept without elide_history");
  CHECK(g_calls == 2 && g_on_caller == 2, "the tool was called on the caller's thread (%d of %d)", g_on_caller, g_calls);
  CHECK(g_last_to_start == 2, "a lone call is the last of its turn to start (%d)", g_last_to_start);
  CHECK(g_nested_status == TN_OK && g_nested_ok, "a blocking call inside a callback made here runs (%d)",
        g_nested_status);

  /* The same transcript as history, elided: only what the run added comes back. */
  tj *input = tj_object();
  tj_add(input, "prompt", tj_string("more"));
  tj_add(input, "history", tj_copy(tj_get(r, "messages")));
  tj_add(input, "elide_history", tj_bool(1));
  char *input_json = tj_print(input);
  waiter_t w2 = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL};
  st = tn_client_run_here(g_client, tk, input_json, NULL, on_done, &w2, &err);
  tj *r2 = tj_parse(w2.json);
  CHECK(st == TN_OK && r2 && tj_num(tj_get(r2, "history_kept")) == 6 && tj_size(tj_get(r2, "messages")) == 2,
        "history elided: %s", w2.json ? w2.json : "");

  /* Bad input is the return status, and done is not called. */
  waiter_t w3 = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL};
  CHECK(tn_client_run_here(g_client, tk, "{\"prompt\":\"x\",\"elide_history\":1}", NULL, on_done, &w3, &err) ==
                TN_ERR_INVALID_ARGUMENT &&
            w3.fired == 0 && err && strstr(err, "elide_history"),
        "a non-boolean elide_history is refused: %s", err ? err : "");
  tn_string_free(err);
  err = NULL;
  CHECK(tn_client_run_here(g_client, tk, "{\"prompt\":\"x\"}", NULL, NULL, NULL, &err) == TN_ERR_INVALID_ARGUMENT,
        "done is required");
  tn_string_free(err);

  wait_later_done();
  tj_free(r2);
  free(w2.json);
  free(input_json);
  tj_free(input);
  tj_free(r);
  free(w.json);
  tn_toolkit_free(tk);
  tn_client_free(g_client);
  script_done(&s);
  return summary();
}
