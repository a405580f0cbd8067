/* The engine's tables and the calls a binding makes instead of copying a rule: the error kinds
 * and hook bits against the header's constants, the shared bad-option cases, a relay tool
 * executed directly, and a tool call run async with its run data and cancellation. Run under
 * valgrind and ASan/UBSan by `make c-tests`. Usage: vocab_test tests/options/bad-client-options.json */
#include "support.h" /* first: it sets the feature macros */

/* What a binding checks its own constants against: every TN_ERR_* of the header is in the
 * engine's table under its name, in code order, and the table has nothing else. */
static void test_error_kinds(void) {
  static const struct {
    const char *name;
    int code;
  } header[] = {{"invalid_argument", TN_ERR_INVALID_ARGUMENT}, {"config", TN_ERR_CONFIG},
                {"http", TN_ERR_HTTP},
                {"network", TN_ERR_NETWORK},
                {"timeout", TN_ERR_TIMEOUT},
                {"cancelled", TN_ERR_CANCELLED},
                {"protocol", TN_ERR_PROTOCOL},
                {"answer_mismatch", TN_ERR_ANSWER_MISMATCH},
                {"host", TN_ERR_HOST},
                {"internal", TN_ERR_INTERNAL},
                {"reentrant", TN_ERR_REENTRANT},
                {"conflict", TN_ERR_CONFLICT},
                {"store", TN_ERR_STORE},
                {"content_part", TN_ERR_CONTENT_PART},
                {"unsupported_part", TN_ERR_UNSUPPORTED_PART}};
  char *out = NULL;
  CHECK(tn_error_kinds(&out, NULL) == TN_OK, "tn_error_kinds");
  tj *kinds = tj_parse(out);
  int n = (int)(sizeof header / sizeof header[0]);
  CHECK(tj_size(kinds) == n, "one kind per TN_ERR_ constant: %s", out);
  for (int i = 0; i < n; i++) {
    tj *k = tj_at(kinds, i);
    CHECK(jstr(k, "name") != NULL && strcmp(jstr(k, "name"), header[i].name) == 0 &&
              tj_num(tj_get(k, "code")) == header[i].code,
          "kind %d is %s = %d", i, header[i].name, header[i].code);
    CHECK(tj_is(tj_get(k, "retryable"), strcmp(header[i].name, "network") == 0 ? TJ_TRUE : TJ_FALSE),
          "%s retryable", header[i].name);
  }
  tj_free(kinds);
  tn_string_free(out);
  CHECK(tn_error_kinds(NULL, NULL) == TN_ERR_INVALID_ARGUMENT, "a NULL out-param is refused");
}

static void test_hook_bits(void) {
  static const struct {
    const char *name;
    unsigned bit;
  } header[] = {{"before_llm", TN_HOOK_BEFORE_LLM},
                {"after_llm", TN_HOOK_AFTER_LLM},
                {"before_tool", TN_HOOK_BEFORE_TOOL},
                {"after_tool", TN_HOOK_AFTER_TOOL}};
  char *out = NULL;
  CHECK(tn_hook_bits(&out, NULL) == TN_OK, "tn_hook_bits");
  tj *hooks = tj_parse(out);
  int n = (int)(sizeof header / sizeof header[0]);
  CHECK(tj_size(hooks) == n, "one entry per TN_HOOK_ bit: %s", out);
  for (int i = 0; i < n; i++) {
    tj *h = tj_at(hooks, i);
    CHECK(jstr(h, "name") != NULL && strcmp(jstr(h, "name"), header[i].name) == 0 &&
              tj_num(tj_get(h, "bit")) == header[i].bit,
          "hook %d is %s = %u", i, header[i].name, header[i].bit);
  }
  tj_free(hooks);
  tn_string_free(out);
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, f);
  buf[got] = 0;
  fclose(f);
  return buf;
}

/* The cases every binding runs: each is invalid_argument, naming the option. */
static void test_bad_options(const char *path) {
  char *text = read_text(path);
  tj *doc = tj_parse(text);
  tj *cases = tj_get(doc, "cases");
  CHECK(tj_size(cases) > 0, "bad options from %s", path);
  const tj *c;
  tj_each(c, cases) {
    tj *opts = tj_copy(tj_get(doc, "base"));
    tj_add(opts, jstr(c, "option"), tj_copy(tj_get(c, "value")));
    char *json = tj_print(opts), *err = NULL;
    tn_client *client = NULL;
    int st = tn_client_new(json, NULL, &client, &err);
    tj *e = tj_parse(err);
    const char *message = jstr(e, "message");
    CHECK(st == TN_ERR_INVALID_ARGUMENT && client == NULL && strcmp(jstr(e, "kind"), "invalid_argument") == 0 &&
              message != NULL && strstr(message, jstr(c, "option")) != NULL,
          "%s: %d %s", json, st, err ? err : "");
    tn_client_free(client);
    tj_free(e);
    tn_string_free(err);
    free(json);
    tj_free(opts);
  }
  tj_free(doc);
  free(text);
}

static tj *relay(const char *call_json, int *status) {
  char *out = NULL, *err = NULL;
  *status = tn_relay_execute("refund", call_json, &out, &err);
  tj *r = tj_parse(*status == TN_OK ? out : err);
  tn_string_free(out);
  tn_string_free(err);
  return r;
}

/* A relay tool executed by the host itself: the run's Request for one call, and the run's
 * reading of an answer. */
static void test_relay_execute(void) {
  int st;
  tj *r = relay("{\"args\":{\"amount\":20},\"call_id\":\"c1\"}", &st);
  tj *req = tj_get(tj_get(r, "metadata"), "pending");
  tj *call0 = tj_at(tj_get(tj_get(req, "data"), "calls"), 0);
  CHECK(st == TN_OK && tj_is(tj_get(r, "is_error"), TJ_TRUE) && strcmp(jstr(req, "kind"), "tool_call") == 0 &&
            strcmp(jstr(req, "id"), "relay-c1") == 0 &&
            strcmp(jstr(req, "prompt"), "relay tool call refund to the caller for execution") == 0 &&
            strcmp(jstr(r, "output"), jstr(req, "prompt")) == 0 && strcmp(jstr(call0, "id"), "c1") == 0 &&
            strcmp(jstr(call0, "arguments"), "{\"amount\":20}") == 0,
        "the suspension a run would relay");
  tj_free(r);
  r = relay("{}", &st);
  req = tj_get(tj_get(r, "metadata"), "pending");
  CHECK(st == TN_OK && strncmp(jstr(req, "id"), "pnd-", 4) == 0 &&
            strcmp(jstr(tj_at(tj_get(tj_get(req, "data"), "calls"), 0), "arguments"), "{}") == 0,
        "without a call id the Request gets a fresh id");
  tj_free(r);
  static const char *answered[][2] = {
      {"{\"call_id\":\"c1\",\"answer\":{\"id\":\"r\",\"ok\":true,\"data\":{\"results\":[{\"id\":\"c1\",\"output\":\"x\"}]}}}",
       "x"},
      {"{\"answer\":{\"id\":\"r\",\"ok\":true,\"data\":{\"output\":\"done\",\"isError\":true}}}", "done"},
      {"{\"answer\":{\"id\":\"r\",\"ok\":false}}", "relay declined for refund: declined"},
      {"{\"answer\":{\"id\":\"r\",\"ok\":true,\"data\":{\"results\":[]}}}", "no result supplied on resume for refund"},
  };
  for (size_t i = 0; i < sizeof answered / sizeof answered[0]; i++) {
    r = relay(answered[i][0], &st);
    CHECK(st == TN_OK && strcmp(jstr(r, "output"), answered[i][1]) == 0 && tj_get(r, "metadata") == NULL,
          "answer %zu reads %s", i, answered[i][1]);
    tj_free(r);
  }
  static const char *bad[] = {"[]", "{\"args\":[1]}", "{\"call_id\":7}", "{\"answer\":{\"id\":\"r\"}}", "not json"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    r = relay(bad[i], &st);
    CHECK(st == TN_ERR_INVALID_ARGUMENT, "bad call_json %s: %d", bad[i], st);
    tj_free(r);
  }
}

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int fired, status;
  char *json;
  const char *label;
  uint64_t held; /* the token a holding tool keeps, unanswered */
} call_t;

static void call_done(void *user_data, int32_t status, const char *json) {
  call_t *c = user_data;
  pthread_mutex_lock(&c->lock);
  c->fired++;
  c->status = status;
  free(c->json);
  c->json = strdup(json);
  pthread_cond_signal(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

static void call_wait(call_t *c) {
  pthread_mutex_lock(&c->lock);
  while (c->fired == 0) pthread_cond_wait(&c->cond, &c->lock);
  pthread_mutex_unlock(&c->lock);
}

/* `label` answers with the label of the call it serves, found from its token; `hold` keeps
 * its token until the call is cancelled. */
static void labelled_tool(void *user_data, const char *call_json, uint64_t token) {
  (void)user_data;
  call_t *c = tn_token_run_data(token);
  if (strstr(call_json, "\"hold\"") != NULL) {
    pthread_mutex_lock(&c->lock);
    c->held = token;
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
    return;
  }
  char result[96];
  snprintf(result, sizeof result, "{\"output\":\"%s\",\"is_error\":false}", c ? c->label : "no call");
  tn_complete(token, TN_OK, result, NULL);
}

static void test_execute_call_async(void) {
  tn_toolkit *tk = NULL;
  tn_toolkit_new("[{\"name\":\"label\"},{\"name\":\"hold\"}]", labelled_tool, NULL, NULL, &tk, NULL);
  call_t a = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL, "call-a", 0};
  CHECK(tn_toolkit_execute_call_async(tk, "{\"name\":\"label\"}", NULL, call_done, &a, NULL) == TN_OK, "start");
  call_wait(&a);
  CHECK(a.status == TN_OK && strstr(a.json, "\"output\":\"call-a\"") != NULL, "the tool saw its call: %s", a.json);

  tn_cancel *cancel = NULL;
  tn_cancel_new(&cancel, NULL);
  call_t h = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL, "call-h", 0};
  CHECK(tn_toolkit_execute_call_async(tk, "{\"name\":\"hold\"}", cancel, call_done, &h, NULL) == TN_OK, "start hold");
  pthread_mutex_lock(&h.lock);
  while (h.held == 0) pthread_cond_wait(&h.cond, &h.lock);
  pthread_mutex_unlock(&h.lock);
  tn_cancel_fire(cancel, NULL);
  call_wait(&h);
  CHECK(h.status == TN_ERR_CANCELLED, "a cancelled call ends cancelled: %d %s", h.status, h.json);
  char *err = NULL;
  CHECK(tn_complete(h.held, TN_OK, "{\"output\":\"late\",\"is_error\":false}", &err) == TN_ERR_INVALID_ARGUMENT,
        "its token is refused afterwards");
  tn_string_free(err);
  CHECK(tn_toolkit_execute_call_async(tk, "{\"args\":{}}", NULL, call_done, &a, &err) == TN_ERR_INVALID_ARGUMENT &&
            err != NULL,
        "a call without a name is refused, and done is not called");
  tn_string_free(err);
  err = NULL;
  CHECK(tn_toolkit_execute_call_async(tk, "{\"name\":\"label\"}", NULL, NULL, &a, &err) == TN_ERR_INVALID_ARGUMENT,
        "a NULL done is refused");
  tn_string_free(err);
  usleep(50 * 1000);
  CHECK(a.fired == 1 && h.fired == 1, "done fired once per started call (%d, %d)", a.fired, h.fired);
  free(a.json);
  free(h.json);
  tn_cancel_free(cancel);
  tn_toolkit_free(tk);
}

int main(int argc, char **argv) {
  test_error_kinds();
  test_hook_bits();
  test_bad_options(argc > 1 ? argv[1] : "tests/options/bad-client-options.json");
  test_relay_execute();
  test_execute_call_async();
  return summary();
}
