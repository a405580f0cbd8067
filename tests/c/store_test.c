/* Conversation stores (ABI version 4): runs with an "id" remember their conversation; a
 * halted run resumes by id alone, exactly once; SQLite keeps it across store handles; a host
 * store serves get and save. Run under valgrind and ASan/UBSan by `make c-tests`. */
#include "support.h" /* first: it sets the feature macros */

/* A tool that suspends on request gate-1 until answered. */
static void gated(void *user_data, const char *call_json, uint64_t token) {
  (void)user_data;
  tj *call = tj_parse(call_json);
  char *out = NULL;
  if (tj_get(call, "answer") != NULL) {
    tn_complete(token, TN_OK, "{\"output\":\"approved\",\"is_error\":false}", NULL);
  } else {
    tn_pending("{\"id\":\"gate-1\",\"kind\":\"approval\",\"prompt\":\"ok?\"}", &out, NULL);
    tn_complete(token, TN_OK, out, NULL);
    tn_string_free(out);
  }
  tj_free(call);
}

static const char *CALL = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
                          "\"c1\",\"type\":\"function\",\"function\":{\"name\":\"gated\",\"arguments\":\"{}\"}}]},"
                          "\"finish_reason\":\"tool_calls\"}]}";
static const char *TEXT = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"done\"},"
                          "\"finish_reason\":\"stop\"}]}";

static tn_client *client_on(script_t *s) {
  tn_callbacks cb = {0};
  cb.user_data = s;
  cb.transport = script_transport;
  tn_client *c = NULL;
  tn_client_new("{\"base_url\":\"http://model.invalid/v1\",\"style\":\"openai\",\"model\":\"m\",\"api_key\":\"k\"}",
                &cb, &c, NULL);
  return c;
}

/* Runs `input` and returns its status, the result's "status" copied to `status_out`. */
static int run(tn_client *c, tn_toolkit *tk, const char *input, char *status_out, size_t n, char **err) {
  char *out = NULL;
  int st = tn_client_run(c, tk, input, NULL, &out, err);
  if (st == TN_OK) {
    tj *r = tj_parse(out);
    snprintf(status_out, n, "%s", jstr(r, "status"));
    tj_free(r);
    tn_string_free(out);
  }
  return st;
}

static void free_err(char **err) {
  tn_string_free(*err);
  *err = NULL;
}

/* ---- a host store: one slot, counting its calls ---- */
static char *g_slot;
static int g_gets, g_saves;

static void host_store(void *user_data, const char *op, const char *request_json, uint64_t token) {
  (void)user_data;
  tj *req = tj_parse(request_json);
  if (strcmp(op, "get") == 0) {
    g_gets++;
    tn_complete(token, TN_OK, g_slot ? g_slot : "null", NULL);
  } else {
    g_saves++;
    free(g_slot);
    g_slot = tj_print(tj_get(req, "messages"));
    tn_complete(token, TN_OK, "null", NULL);
  }
  tj_free(req);
}

static void durable_by_id(tn_store *store, const char *what) {
  const char *replies[] = {CALL, TEXT};
  script_t s;
  script_init(&s, replies, 2);
  tn_client *base = client_on(&s), *c = NULL;
  char *err = NULL, *out = NULL, status[32] = "";
  CHECK(tn_client_with_store(base, store, &c, &err) == TN_OK && c, "%s: with_store: %s", what, err ? err : "");
  tn_toolkit *tk = NULL;
  tn_toolkit_new("[{\"name\":\"gated\"}]", gated, NULL, NULL, &tk, NULL);

  CHECK(run(c, tk, "{\"prompt\":\"go\",\"id\":\"r1\"}", status, sizeof status, &err) == TN_OK &&
            strcmp(status, "pending") == 0,
        "%s: halts: %s %s", what, status, err ? err : "");
  CHECK(tn_store_pending_runs(store, &out, &err) == TN_OK, "%s: pending_runs: %s", what, err ? err : "");
  tj *runs = tj_parse(out);
  CHECK(tj_size(runs) == 1 && strcmp(jstr(tj_at(runs, 0), "id"), "r1") == 0 &&
            strcmp(jstr(tj_get(tj_at(runs, 0), "request"), "id"), "gate-1") == 0,
        "%s: the queue: %s", what, out);
  tj_free(runs);
  tn_string_free(out);

  const char *resume = "{\"id\":\"r1\",\"answer\":{\"id\":\"gate-1\",\"ok\":true}}";
  CHECK(run(c, tk, resume, status, sizeof status, &err) == TN_OK && strcmp(status, "done") == 0,
        "%s: resumes by id alone: %s %s", what, status, err ? err : "");
  CHECK(run(c, tk, resume, status, sizeof status, &err) == TN_ERR_CONFLICT && err && strstr(err, "\"conflict\""),
        "%s: a second resume is a conflict: %s", what, err ? err : "");
  free_err(&err);
  CHECK(s.requests == 2, "%s: two model calls (%d)", what, s.requests);
  CHECK(tn_store_get(store, "r1", &out, &err) == TN_OK && out && out[0] == '[', "%s: get: %s", what,
        out ? out : "");
  tn_string_free(out);
  tn_toolkit_free(tk);
  tn_client_free(c);
  tn_client_free(base);
  script_done(&s);
}

int main(void) {
  CHECK(tn_abi_version() == TN_ABI_VERSION && TN_ABI_VERSION >= 4, "ABI version 4 or later");
  char *err = NULL, *out = NULL;
  tn_store *mem = NULL, *db = NULL, *again = NULL, *host = NULL;
  CHECK(tn_store_new_memory(&mem, &err) == TN_OK && mem, "new_memory");
  durable_by_id(mem, "memory");

  char path[96];
  snprintf(path, sizeof path, "/tmp/tn-store-test-%d.db", (int)getpid());
  CHECK(tn_store_open_sqlite(path, &db, &err) == TN_OK && db, "open_sqlite: %s", err ? err : "");
  durable_by_id(db, "sqlite");
  CHECK(tn_store_save(db, "kept", "[{\"role\":\"user\",\"content\":\"hi\"}]", &err) == TN_OK, "save");
  CHECK(tn_store_open_sqlite(path, &again, &err) == TN_OK, "reopen");
  CHECK(tn_store_get(again, "kept", &out, &err) == TN_OK && strstr(out, "\"hi\""), "a second handle reads it: %s",
        out ? out : "");
  tn_string_free(out);
  CHECK(tn_store_get(again, "none", &out, &err) == TN_OK && strcmp(out, "null") == 0, "absent is null");
  tn_string_free(out);
  CHECK(tn_store_save(db, "kept", "{}", &err) == TN_ERR_INVALID_ARGUMENT, "messages must be an array");
  free_err(&err);
  CHECK(tn_store_open_sqlite("/nonexistent-dir/x.db", &host, &err) == TN_ERR_STORE && err && !host,
        "an unopenable file: %s", err ? err : "");
  free_err(&err);

  /* The client's own store, and a host store. */
  script_t s;
  const char *replies[] = {TEXT, TEXT};
  script_init(&s, replies, 2);
  tn_client *c = client_on(&s), *hc = NULL;
  tn_store *own = NULL;
  CHECK(tn_client_store(c, &own, &err) == TN_OK && own, "client_store");
  char status[32];
  run(c, NULL, "{\"prompt\":\"hi\",\"id\":\"mine\"}", status, sizeof status, &err);
  CHECK(tn_store_get(own, "mine", &out, &err) == TN_OK && strstr(out, "\"done\""), "the default store: %s", out);
  tn_string_free(out);
  tn_store_callbacks cb = {0};
  cb.store = host_store;
  CHECK(tn_store_new_host(&cb, &host, &err) == TN_OK, "new_host");
  tn_client_with_store(c, host, &hc, &err);
  run(hc, NULL, "{\"prompt\":\"hi\",\"id\":\"h\"}", status, sizeof status, &err);
  CHECK(g_gets == 1 && g_saves == 1 && g_slot && strstr(g_slot, "\"done\""), "the host store: %d %d", g_gets,
        g_saves);
  CHECK(tn_store_pending_runs(host, &out, &err) == TN_ERR_INVALID_ARGUMENT, "a host store has no queue");
  free_err(&err);
  CHECK(run(hc, NULL, "{\"id\":\"h\",\"answer\":{\"id\":\"x\",\"ok\":true}}", status, sizeof status, &err) ==
            TN_ERR_INVALID_ARGUMENT,
        "resuming on a host store needs pending: %s", err ? err : "");
  free_err(&err);
  CHECK(run(c, NULL, "{\"prompt\":\"hi\",\"id\":7}", status, sizeof status, &err) == TN_ERR_INVALID_ARGUMENT,
        "a non-string id");
  free_err(&err);

  tn_client_free(hc);
  tn_client_free(c);
  script_done(&s);
  tn_store_free(own);
  tn_store_free(host);
  tn_store_free(again);
  tn_store_free(db);
  tn_store_free(mem);
  free(g_slot);
  char side[128];
  unlink(path);
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
  snprintf(side, sizeof side, "%s.lock", path);
  unlink(side);
  return summary();
}
