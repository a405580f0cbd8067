/* The C ABI end to end, with C tools and a C scripted model: an inline suspension, a durable
 * halt and its resume, a relay call, an async run, cancellation, completions refused for their
 * text, and bad input of every kind. Run under valgrind and under ASan/UBSan by
 * `make c-tests`: it must leave no definite or indirect leaks. */
#include <sys/wait.h>

#include "support.h"

#define CALLS(...) "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[" __VA_ARGS__ "]}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}"
#define CALL(id, name, args) "{\"id\":\"" id "\",\"type\":\"function\",\"function\":{\"name\":\"" name "\",\"arguments\":\"" args "\"}}"
#define TEXT(t) "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"" t "\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}"

static const char *TOOLS =
    "[{\"name\":\"deploy\",\"description\":\"Deploy.\",\"input_schema\":{\"type\":\"object\"}},"
    " {\"name\":\"add\",\"description\":\"Add.\",\"input_schema\":{\"type\":\"object\"}},"
    " {\"name\":\"nested\",\"description\":\"Calls back in.\",\"input_schema\":{\"type\":\"object\"}},"
    " {\"name\":\"twice\",\"description\":\"Answers twice.\",\"input_schema\":{\"type\":\"object\"}},"
    " {\"name\":\"latin1\",\"description\":\"Answers in Latin-1.\",\"input_schema\":{\"type\":\"object\"}},"
    " {\"name\":\"refund\",\"description\":\"Refund.\",\"relay\":true}]";

typedef struct {
  pthread_mutex_t lock;
  int deploy_calls, add_calls, freed;
  int nested_status; /* what a blocking call made inside a callback returned */
  int second_status;  /* what completing a token a second time returned */
  char *second_error;
  /* latin1's refused completions, by mode: 0 an error message, 1 a result, 2 a host error */
  int refused_status[3];
  char *refused_error[3];
  uint64_t refused_token[3];
  tn_client *client;
} host_t;

static void host_free(void *user_data) {
  host_t *h = user_data;
  pthread_mutex_lock(&h->lock);
  h->freed++;
  pthread_mutex_unlock(&h->lock);
}

static void tool(void *user_data, const char *call_json, uint64_t token) {
  host_t *h = user_data;
  tj *call = tj_parse(call_json);
  const char *name = jstr(call, "name");
  tj *args = tj_get(call, "args");
  if (strcmp(name, "deploy") == 0) {
    pthread_mutex_lock(&h->lock);
    h->deploy_calls++;
    pthread_mutex_unlock(&h->lock);
    if (tj_get(call, "answer") != NULL) {
      tn_complete(token, TN_OK, "{\"output\":\"deployed\",\"is_error\":false}", NULL);
    } else {
      char *pending = NULL;
      tn_pending("{\"id\":\"pnd-deploy\",\"kind\":\"approval\",\"prompt\":\"Deploy now?\"}", &pending, NULL);
      tn_complete(token, TN_OK, pending, NULL);
      tn_string_free(pending);
    }
  } else if (strcmp(name, "add") == 0) {
    pthread_mutex_lock(&h->lock);
    h->add_calls++;
    pthread_mutex_unlock(&h->lock);
    double a = tj_num(tj_get(args, "a"));
    double b = tj_num(tj_get(args, "b"));
    char out[128];
    snprintf(out, sizeof out, "{\"output\":\"%g\",\"is_error\":false}", a + b);
    complete_later(token, TN_OK, out, 20); /* answered later, from another thread */
  } else if (strcmp(name, "nested") == 0) {
    char *result = NULL, *err = NULL;
    h->nested_status = tn_client_run(h->client, NULL, "{\"prompt\":\"x\"}", NULL, &result, &err);
    tn_string_free(result);
    tn_string_free(err);
    tn_complete(token, TN_ERR_HOST, "nested runs are refused", NULL);
  } else if (strcmp(name, "twice") == 0) {
    tn_complete(token, TN_OK, "{\"output\":\"first\",\"is_error\":false}", NULL);
    h->second_status = tn_complete(token, TN_OK, "{\"output\":\"second\",\"is_error\":false}", &h->second_error);
  } else if (strcmp(name, "latin1") == 0) {
    /* Text straight from a host in a Latin-1 locale (strerror() in French): not UTF-8. */
    double m = tj_num(tj_get(args, "mode"));
    int mode = m == 1 ? 1 : m == 2 ? 2 : 0;
    char **err = &h->refused_error[mode];
    h->refused_token[mode] = token;
    h->refused_status[mode] =
        mode == 0   ? tn_complete(token, TN_ERR_HOST, "Permission non accord\xe9" "e", err)
        : mode == 1 ? tn_complete(token, TN_OK, "{\"output\":\"caf\xe9\",\"is_error\":false}", err)
                    : tn_complete_host_error(token, "Acc\xe8s refus\xe9", 7, err);
  } else {
    tn_complete(token, TN_ERR_HOST, "no such tool", NULL);
  }
  tj_free(call);
}

static void approve(void *user_data, const char *request_json, uint64_t token) {
  (void)user_data;
  tj *req = tj_parse(request_json);
  char *answer = NULL;
  tn_answer_output(jstr(req, "id"), "yes", &answer, NULL);
  tn_complete(token, TN_OK, answer, NULL);
  tn_string_free(answer);
  tj_free(req);
}

static tn_client *make_client(script_t *s, tn_wait_for_fn wait_for) {
  tn_callbacks cb = {0};
  cb.user_data = s;
  cb.transport = script_transport;
  cb.wait_for = wait_for;
  tn_client *c = NULL;
  char *err = NULL;
  int st = tn_client_new("{\"base_url\":\"http://model.invalid/v1\",\"style\":\"openai\",\"model\":\"m\",\"api_key\":\"k\"}",
                         &cb, &c, &err);
  CHECK(st == TN_OK, "tn_client_new: %d %s", st, err ? err : "");
  tn_string_free(err);
  return c;
}

static tj *run(tn_client *c, tn_toolkit *tk, const char *input, int *status) {
  char *result = NULL, *err = NULL;
  *status = tn_client_run(c, tk, input, NULL, &result, &err);
  tj *r = tj_parse(*status == TN_OK ? result : err);
  tn_string_free(result);
  tn_string_free(err);
  return r;
}

/* Whether the error JSON in *err has a message containing `needle`; frees it either way. */
static int expect_message(char **err, const char *needle) {
  tj *e = *err ? tj_parse(*err) : NULL;
  const char *message = e ? jstr(e, "message") : NULL;
  int found = message != NULL && strstr(message, needle) != NULL;
  if (!found) fprintf(stderr, "  expected a message containing \"%s\", got %s\n", needle, *err ? *err : "(none)");
  tj_free(e);
  tn_string_free(*err);
  *err = NULL;
  return found;
}

static void test_inline_suspension(tn_toolkit *tk, host_t *h) {
  const char *replies[] = {CALLS(CALL("c1", "deploy", "{}") "," CALL("c2", "add", "{\\\"a\\\":2,\\\"b\\\":3}")),
                           TEXT("done")};
  script_t s;
  script_init(&s, replies, 2);
  tn_client *c = make_client(&s, approve);
  h->deploy_calls = h->add_calls = 0;
  int st;
  tj *r = run(c, tk, "{\"prompt\":\"deploy and add\"}", &st);
  CHECK(st == TN_OK, "inline run status %d", st);
  CHECK(strcmp(jstr(r, "status"), "done") == 0, "inline status %s", jstr(r, "status"));
  tj *calls = tj_get(r, "tool_calls");
  CHECK(strcmp(jstr(tj_at(calls, 0), "output"), "deployed") == 0, "deploy re-ran with the answer");
  CHECK(strcmp(jstr(tj_at(calls, 1), "output"), "5") == 0, "add completed later");
  CHECK(h->deploy_calls == 2 && h->add_calls == 1, "calls %d %d", h->deploy_calls, h->add_calls);
  tj_free(r);
  tn_client_free(c);
  script_done(&s);
}

static void test_durable_halt_and_resume(tn_toolkit *tk) {
  const char *replies[] = {CALLS(CALL("c1", "deploy", "{}")), TEXT("deployed it")};
  script_t s;
  script_init(&s, replies, 2);
  tn_client *c = make_client(&s, NULL);
  int st;
  tj *r = run(c, tk, "{\"prompt\":\"deploy\"}", &st);
  CHECK(st == TN_OK && strcmp(jstr(r, "status"), "pending") == 0, "halt: %d %s", st, jstr(r, "status"));
  tj *pending = tj_get(r, "pending");
  CHECK(strcmp(jstr(pending, "id"), "pnd-deploy") == 0, "pending id");
  char *history = tj_print(tj_get(r, "messages"));
  char *pending_json = tj_print(pending);
  char *answer = NULL, *result = NULL, *err = NULL;
  tn_answer_output("wrong-id", "yes", &answer, NULL);
  st = tn_client_run_with_answer(c, tk, history, pending_json, answer, NULL, &result, &err);
  CHECK(st == TN_ERR_ANSWER_MISMATCH && result == NULL && err != NULL, "mismatched answer: %d", st);
  tn_string_free(answer);
  tn_string_free(err);
  err = NULL;
  tn_answer_output("pnd-deploy", "yes", &answer, NULL);
  st = tn_client_run_with_answer(c, tk, history, pending_json, answer, NULL, &result, &err);
  tj *done = tj_parse(result);
  CHECK(st == TN_OK && strcmp(jstr(done, "status"), "done") == 0, "resume: %d %s", st, err ? err : "");
  CHECK(strcmp(jstr(done, "text"), "deployed it") == 0, "resume text");
  tj_free(done);
  tn_string_free(result);
  tn_string_free(answer);
  tn_string_free(err);
  free(history);
  free(pending_json);
  tj_free(r);
  tn_client_free(c);
  script_done(&s);
}

static void test_relay(tn_toolkit *tk) {
  const char *replies[] = {CALLS(CALL("c9", "refund", "{\\\"amount\\\":20}")), TEXT("refunded")};
  script_t s;
  script_init(&s, replies, 2);
  tn_client *c = make_client(&s, NULL);
  int st;
  tj *r = run(c, tk, "{\"prompt\":\"refund\"}", &st);
  tj *pending = tj_get(r, "pending");
  CHECK(st == TN_OK && strcmp(jstr(pending, "kind"), "tool_call") == 0, "relay halts with a tool_call request");
  tj *call0 = tj_at(tj_get(tj_get(pending, "data"), "calls"), 0);
  CHECK(strcmp(jstr(call0, "id"), "c9") == 0 && strcmp(jstr(call0, "arguments"), "{\"amount\":20}") == 0, "relay call data");
  char *answer = NULL, *result = NULL;
  int ast = tn_relay_answer(jstr(pending, "id"), "[{\"id\":\"c9\",\"output\":\"refunded 20\",\"isError\":false}]", &answer, NULL);
  CHECK(ast == TN_OK, "tn_relay_answer");
  tj *input = tj_object();
  tj_add(input, "history", tj_copy(tj_get(r, "messages")));
  tj_add(input, "pending", tj_copy(pending));
  tj_add(input, "answer", tj_parse(answer));
  char *input_json = tj_print(input);
  tj *done = run(c, tk, input_json, &st);
  CHECK(st == TN_OK && strcmp(jstr(done, "status"), "done") == 0, "relay resume via tn_client_run");
  tj *rec = tj_at(tj_get(done, "tool_calls"), 0);
  CHECK(strcmp(jstr(rec, "output"), "refunded 20") == 0, "relay output reached the model");
  tj *sent = tj_at(tj_get(s.last_request, "messages"), 2);
  CHECK(strcmp(jstr(sent, "content"), "refunded 20") == 0, "the tool message carries the host's output");
  tj_free(done);
  free(input_json);
  tj_free(input);
  tn_string_free(answer);
  tn_string_free(result);
  tj_free(r);
  tn_client_free(c);
  script_done(&s);
}

static void test_async_run(tn_toolkit *tk) {
  const char *replies[] = {CALLS(CALL("c1", "add", "{\\\"a\\\":1,\\\"b\\\":1}")), TEXT("two")};
  script_t s;
  script_init(&s, replies, 2);
  tn_client *c = make_client(&s, NULL);
  waiter_t w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL};
  int st = tn_client_run_async(c, tk, "{\"prompt\":\"1+1\"}", NULL, on_done, &w, NULL);
  CHECK(st == TN_OK, "async start");
  wait_done(&w);
  tj *r = tj_parse(w.json);
  CHECK(w.status == TN_OK && strcmp(jstr(r, "text"), "two") == 0, "async result %d", w.status);
  usleep(50 * 1000);
  CHECK(w.fired == 1, "done fired once (%d)", w.fired);
  tj_free(r);
  free(w.json);
  tn_client_free(c);
  script_done(&s);
}

/* A model that calls `whoami` until the transcript has its result, then answers. */
static void whoami_model(void *user_data, const char *request_json, uint64_t token) {
  (void)user_data;
  tj *req = tj_parse(request_json);
  int answered = strstr(jstr(req, "body"), "\"role\":\"tool\"") != NULL;
  tj *resp = tj_object();
  tj_add(resp, "status", tj_number(200));
  tj_add(resp, "body", tj_string(answered ? TEXT("done") : CALLS(CALL("c1", "whoami", "{}"))));
  char *text = tj_print(resp);
  tn_complete(token, TN_OK, text, NULL);
  free(text);
  tj_free(resp);
  tj_free(req);
}

typedef struct {
  waiter_t w; /* first: on_done reads the run's user_data as a waiter_t */
  const char *label;
} labelled_run_t;

/* The tool answers with the label of the run it serves, found from its token alone. */
static void whoami(void *user_data, const char *call_json, uint64_t token) {
  (void)user_data;
  (void)call_json;
  labelled_run_t *run = tn_token_run_data(token);
  char result[96];
  snprintf(result, sizeof result, "{\"output\":\"%s\",\"is_error\":false}", run ? run->label : "no run");
  tn_complete(token, TN_OK, result, NULL);
}

/* One client and one toolkit serve concurrent async runs; each callback learns its run from
 * its token (tn_token_run_data: the run's own user_data). */
static void test_token_run_data(void) {
  tn_callbacks cb = {0};
  cb.transport = whoami_model;
  tn_client *c = NULL;
  tn_client_new("{\"base_url\":\"http://model.invalid/v1\",\"style\":\"openai\",\"model\":\"m\",\"api_key\":\"k\"}", &cb,
                &c, NULL);
  tn_toolkit *tk = NULL;
  tn_toolkit_new("[{\"name\":\"whoami\"}]", whoami, NULL, NULL, &tk, NULL);
  labelled_run_t runs[4];
  const char *labels[4] = {"run-a", "run-b", "run-c", "run-d"};
  for (int i = 0; i < 4; i++) {
    memset(&runs[i], 0, sizeof runs[i]);
    pthread_mutex_init(&runs[i].w.lock, NULL);
    pthread_cond_init(&runs[i].w.cond, NULL);
    runs[i].label = labels[i];
    CHECK(tn_client_run_async(c, tk, "{\"prompt\":\"who?\"}", NULL, on_done, &runs[i], NULL) == TN_OK, "start %d", i);
  }
  for (int i = 0; i < 4; i++) {
    wait_done(&runs[i].w);
    tj *r = tj_parse(runs[i].w.json);
    const char *output = jstr(tj_at(tj_get(r, "tool_calls"), 0), "output");
    CHECK(output != NULL && strcmp(output, labels[i]) == 0, "run %d's tool saw its own run: %s", i, output ? output : "?");
    tj_free(r);
    free(runs[i].w.json);
    pthread_mutex_destroy(&runs[i].w.lock);
    pthread_cond_destroy(&runs[i].w.cond);
  }
  char *out = NULL;
  CHECK(tn_toolkit_execute(tk, "whoami", "{}", &out, NULL) == TN_OK && strstr(out, "no run") != NULL,
        "a blocking call has no run data: %s", out);
  tn_string_free(out);
  CHECK(tn_token_run_data(0) == NULL && tn_token_run_data(UINT64_MAX) == NULL, "an unknown token has none");
  tn_toolkit_free(tk);
  tn_client_free(c);
}

/* max_turns 0: no request at all, the run ends incomplete. */
static void test_max_turns_zero(void) {
  script_t s;
  script_init(&s, NULL, 0);
  tn_callbacks cb = {0};
  cb.user_data = &s;
  cb.transport = script_transport;
  tn_client *c = NULL;
  tn_client_new("{\"base_url\":\"http://model.invalid/v1\",\"style\":\"openai\",\"model\":\"m\",\"api_key\":\"k\",\"max_turns\":0}",
                &cb, &c, NULL);
  int st;
  tj *r = run(c, NULL, "{\"prompt\":\"hi\"}", &st);
  CHECK(st == TN_OK && strcmp(jstr(r, "status"), "incomplete") == 0 && strcmp(jstr(r, "limit"), "maxTurns") == 0 &&
            s.requests == 0,
        "max_turns 0 ends incomplete without a request");
  tj_free(r);
  tn_client_free(c);
  script_done(&s);
}

/* A client freed while its async run is in flight: done comes first, then its finalizer. */
typedef struct {
  script_t s; /* first: the scripted transport reads the user_data as a script_t */
  pthread_mutex_t lock;
  char order[3];
  int n;
} ordered_t;

static void note(ordered_t *o, char what) {
  pthread_mutex_lock(&o->lock);
  if (o->n < 2) o->order[o->n++] = what;
  pthread_mutex_unlock(&o->lock);
}

static void ordered_free(void *user_data) { note(user_data, 'F'); }

static void ordered_done(void *user_data, int32_t status, const char *json) {
  (void)status;
  (void)json;
  note(user_data, 'D');
}

static void test_done_before_finalizer(tn_toolkit *tk) {
  const char *replies[] = {CALLS(CALL("c1", "add", "{\\\"a\\\":1,\\\"b\\\":2}")), TEXT("three")};
  ordered_t o;
  memset(&o, 0, sizeof o);
  pthread_mutex_init(&o.lock, NULL);
  script_init(&o.s, replies, 2);
  tn_callbacks cb = {0};
  cb.user_data = &o;
  cb.transport = script_transport;
  cb.free_user_data = ordered_free;
  tn_client *c = NULL;
  tn_client_new("{\"base_url\":\"http://model.invalid/v1\",\"style\":\"openai\",\"model\":\"m\",\"api_key\":\"k\"}", &cb, &c, NULL);
  CHECK(tn_client_run_async(c, tk, "{\"prompt\":\"1+2\"}", NULL, ordered_done, &o, NULL) == TN_OK, "async start");
  tn_client_free(c); /* the add tool answers 20 ms later: the run is still going */
  for (int i = 0; i < 200 && o.n < 2; i++) usleep(10 * 1000);
  CHECK(o.n == 2 && o.order[0] == 'D' && o.order[1] == 'F', "done before the finalizer: %.2s", o.order);
  script_done(&o.s);
  pthread_mutex_destroy(&o.lock);
}

/* The async resume: a mismatched answer and the right one both arrive through done. */
static void test_async_resume(tn_toolkit *tk) {
  const char *replies[] = {CALLS(CALL("c1", "deploy", "{}")), TEXT("deployed async")};
  script_t s;
  script_init(&s, replies, 2);
  tn_client *c = make_client(&s, NULL);
  int st;
  tj *r = run(c, tk, "{\"prompt\":\"deploy\"}", &st);
  CHECK(st == TN_OK && strcmp(jstr(r, "status"), "pending") == 0, "async resume: halted first");
  char *history = tj_print(tj_get(r, "messages"));
  char *pending = tj_print(tj_get(r, "pending"));
  const char *answers[] = {"wrong-id", "pnd-deploy"};
  int statuses[2];
  char *texts[2];
  for (int i = 0; i < 2; i++) {
    waiter_t w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL};
    char *answer = NULL;
    tn_answer_output(answers[i], "yes", &answer, NULL);
    CHECK(tn_client_run_with_answer_async(c, tk, history, pending, answer, NULL, on_done, &w, NULL) == TN_OK,
          "async resume %d starts", i);
    wait_done(&w);
    statuses[i] = w.status;
    tj *out = tj_parse(w.json);
    texts[i] = strdup(jstr(out, i == 0 ? "kind" : "text"));
    tj_free(out);
    free(w.json);
    tn_string_free(answer);
  }
  CHECK(statuses[0] == TN_ERR_ANSWER_MISMATCH && strcmp(texts[0], "answer_mismatch") == 0,
        "a mismatched async resume reports through done: %d %s", statuses[0], texts[0]);
  CHECK(statuses[1] == TN_OK && strcmp(texts[1], "deployed async") == 0, "async resume: %d %s", statuses[1], texts[1]);
  waiter_t never = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL};
  char *err = NULL;
  CHECK(tn_client_run_with_answer_async(c, tk, history, "{\"id\":", "{}", NULL, on_done, &never, &err) ==
            TN_ERR_INVALID_ARGUMENT && err != NULL && strstr(err, "pending_json") != NULL,
        "bad input is the return status, with a message naming the argument: %s", err ? err : "");
  usleep(20 * 1000);
  CHECK(never.fired == 0, "and done is not called");
  tn_string_free(err);
  free(texts[0]);
  free(texts[1]);
  free(history);
  free(pending);
  tj_free(r);
  tn_client_free(c);
  script_done(&s);
}

static uint64_t g_held_token;

static void hold_transport(void *user_data, const char *request_json, uint64_t token) {
  (void)user_data;
  (void)request_json;
  g_held_token = token; /* never answered: only cancellation ends this run */
}

static void *fire_later(void *arg) {
  usleep(100 * 1000);
  tn_cancel_fire(arg, NULL);
  return NULL;
}

static void test_cancel_and_late_completion(void) {
  tn_callbacks cb = {0};
  cb.transport = hold_transport;
  tn_client *c = NULL;
  tn_client_new("{\"base_url\":\"http://x.invalid\",\"style\":\"anthropic\",\"model\":\"m\",\"api_key\":\"k\"}", &cb, &c, NULL);
  tn_cancel *cancel = NULL;
  CHECK(tn_cancel_new(&cancel, NULL) == TN_OK, "tn_cancel_new");
  pthread_t t;
  pthread_create(&t, NULL, fire_later, cancel);
  char *result = NULL, *err = NULL;
  int st = tn_client_run(c, NULL, "{\"prompt\":\"hi\"}", cancel, &result, &err);
  pthread_join(t, NULL);
  CHECK(st == TN_ERR_CANCELLED && result == NULL, "cancelled run: %d", st);
  tj *e = tj_parse(err);
  CHECK(e != NULL && strcmp(jstr(e, "kind"), "cancelled") == 0, "error JSON names the kind");
  tj_free(e);
  tn_string_free(err);
  CHECK(tn_complete(g_held_token, TN_OK, "{}", NULL) == TN_ERR_INVALID_ARGUMENT, "a late completion is refused");
  tn_cancel_free(cancel);
  tn_client_free(c);
}

static void test_bad_input(tn_toolkit *tk, host_t *h) {
  char *out = NULL, *err = NULL;
  CHECK(tn_toolkit_new(NULL, tool, NULL, NULL, NULL, &err) == TN_ERR_INVALID_ARGUMENT && err, "NULL tools");
  tn_string_free(err);
  err = NULL;
  tn_toolkit *bad = NULL;
  CHECK(tn_toolkit_new("[{\"name\":", tool, NULL, NULL, &bad, &err) == TN_ERR_INVALID_ARGUMENT, "malformed JSON");
  CHECK(bad == NULL, "out untouched on failure");
  tn_string_free(err);
  CHECK(tn_toolkit_new("[{\"name\":\"bash\",\"relay\":true}]", NULL, NULL, NULL, &bad, NULL) == TN_ERR_INVALID_ARGUMENT,
        "a relay tool named like a built-in is refused");
  const char invalid_utf8[] = {'{', '"', 'p', 'r', 'o', 'm', 'p', 't', '"', ':', '"', (char)0xff, '"', '}', 0};
  tn_client *c = NULL;
  tn_client_new("{\"base_url\":\"http://x.invalid\",\"style\":\"openai\",\"model\":\"m\",\"api_key\":\"k\"}", NULL, &c, NULL);
  err = NULL;
  CHECK(tn_client_run(c, NULL, invalid_utf8, NULL, &out, &err) == TN_ERR_INVALID_ARGUMENT && expect_message(&err, "UTF-8"),
        "invalid UTF-8");
  CHECK(tn_client_run(c, NULL, "{\"prompt\":1}", NULL, &out, &err) == TN_ERR_INVALID_ARGUMENT && expect_message(&err, "prompt"),
        "bad input shape");
  CHECK(tn_client_run(c, NULL, NULL, NULL, &out, &err) == TN_ERR_INVALID_ARGUMENT && expect_message(&err, "input_json"),
        "NULL input");
  CHECK(tn_client_new("{\"base_url\":\"http://x\",\"style\":\"openai\",\"model\":\"m\",\"typo\":1}", NULL, &c, &err) ==
                TN_ERR_INVALID_ARGUMENT &&
            expect_message(&err, "typo"),
        "an unknown option is an error");
  CHECK(tn_client_run((tn_client *)tk, NULL, "{\"prompt\":\"x\"}", NULL, &out, &err) == TN_ERR_INVALID_ARGUMENT &&
            expect_message(&err, "expected a tn_client, got a tn_toolkit"),
        "a toolkit is not a client");
  tn_client_free(c);
  err = NULL;
  CHECK(tn_client_run(c, NULL, "{\"prompt\":\"x\"}", NULL, &out, &err) == TN_ERR_INVALID_ARGUMENT &&
            expect_message(&err, "not a live handle"),
        "a freed handle");
  tn_client_free(c); /* double free is ignored */
  int local = 0;
  CHECK(tn_client_run((tn_client *)&local, NULL, "{\"prompt\":\"x\"}", NULL, &out, &err) == TN_ERR_INVALID_ARGUMENT &&
            expect_message(&err, "not a live handle"),
        "a foreign pointer");
  CHECK(tn_complete(987654321, TN_OK, "{}", &err) == TN_ERR_INVALID_ARGUMENT && expect_message(&err, "token"),
        "an unknown token");

  /* A stale handle never reaches a handle made after it was freed (an allocator would reuse
   * the freed address at once). */
  tn_cancel *old = NULL, *fresh = NULL;
  tn_cancel_new(&old, NULL);
  tn_cancel_free(old);
  tn_cancel_new(&fresh, NULL);
  CHECK(old != fresh, "handles are not reused");
  CHECK(tn_cancel_fire(old, &err) == TN_ERR_INVALID_ARGUMENT && expect_message(&err, "tn_cancel is not a live handle"),
        "a stale cancel handle is refused");
  tn_cancel_free(old); /* must not free `fresh` */
  CHECK(tn_cancel_fire(fresh, NULL) == TN_OK, "the fresh handle is still live");
  tn_cancel_free(fresh);
  CHECK(tn_answer_normalize("{\"id\":\"x\",\"ok\":\"yes\"}", &out, NULL) == TN_ERR_INVALID_ARGUMENT, "a malformed answer");
  CHECK(tn_answer_normalize("{\"id\":\"x\",\"ok\":false,\"reason\":null}", &out, NULL) == TN_OK &&
            strcmp(out, "{\"id\":\"x\",\"ok\":false}") == 0,
        "normalised answer %s", out ? out : "");
  tn_string_free(out);
  out = NULL;
  CHECK(tn_answer_declined("p", NULL, &out, NULL) == TN_OK && strcmp(out, "{\"id\":\"p\",\"ok\":false,\"reason\":\"declined\"}") == 0,
        "declined defaults its reason");
  tn_string_free(out);
  tn_toolkit_free(NULL);
  tn_client_free(NULL);
  tn_cancel_free(NULL);
  tn_string_free(NULL);

  /* A blocking call from inside a callback is refused, not a deadlock. */
  const char *replies[] = {CALLS(CALL("c1", "nested", "{}")), TEXT("ok")};
  script_t s;
  script_init(&s, replies, 2);
  h->client = make_client(&s, NULL);
  int st;
  tj *r = run(h->client, tk, "{\"prompt\":\"nest\"}", &st);
  CHECK(st == TN_OK && h->nested_status == TN_ERR_REENTRANT, "reentrant call: %d", h->nested_status);
  CHECK(strcmp(jstr(tj_at(tj_get(r, "tool_calls"), 0), "output"), "nested runs are refused") == 0,
        "a failing tool is an error result with its message");
  tj_free(r);
  tn_client_free(h->client);
  script_done(&s);

  /* A completion token is good once: the second completion is refused and changes nothing. */
  const char *twice_replies[] = {CALLS(CALL("c1", "twice", "{}")), TEXT("ok")};
  script_init(&s, twice_replies, 2);
  c = make_client(&s, NULL);
  r = run(c, tk, "{\"prompt\":\"twice\"}", &st);
  CHECK(st == TN_OK && strcmp(jstr(tj_at(tj_get(r, "tool_calls"), 0), "output"), "first") == 0,
        "the first completion counts");
  CHECK(h->second_status == TN_ERR_INVALID_ARGUMENT && expect_message(&h->second_error, "token"),
        "a token used twice: %d", h->second_status);
  tj_free(r);
  tn_client_free(c);
  script_done(&s);
}

/* A completion refused for its text still ends the call: the run goes on, never waits. */
static void test_refused_completion(tn_toolkit *tk, host_t *h) {
  const char *replies[] = {CALLS(CALL("c1", "latin1", "{\\\"mode\\\":0}") "," CALL("c2", "latin1", "{\\\"mode\\\":1}") ","
                                 CALL("c3", "latin1", "{\\\"mode\\\":2}")),
                           TEXT("ok")};
  script_t s;
  script_init(&s, replies, 2);
  tn_callbacks cb = {0};
  cb.user_data = &s;
  cb.transport = script_transport;
  tn_client *c = NULL;
  /* Bounded, so that a token left open fails this test instead of hanging it. */
  tn_client_new("{\"base_url\":\"http://model.invalid/v1\",\"style\":\"openai\",\"model\":\"m\",\"api_key\":\"k\","
                "\"timeout_ms\":3000}",
                &cb, &c, NULL);
  int st;
  tj *r = run(c, tk, "{\"prompt\":\"latin1\"}", &st);
  CHECK(st == TN_OK && strcmp(jstr(r, "status"), "done") == 0, "the run ends after refused completions: %d", st);
  /* A message keeps its text, each bad byte a U+FFFD; a result says why it was refused. */
  const char *expected[3] = {"Permission non accord\xef\xbf\xbd" "e", "UTF-8", "Acc\xef\xbf\xbds refus\xef\xbf\xbd"};
  for (int mode = 0; mode < 3; mode++) {
    const tj *call = tj_at(tj_get(r, "tool_calls"), mode);
    const char *output = jstr(call, "output");
    CHECK(tj_is(tj_get(call, "is_error"), TJ_TRUE) && output && strstr(output, expected[mode]) != NULL,
          "refused completion %d is the tool's error result: %s", mode, output ? output : "(none)");
  }
  for (int mode = 0; mode < 3; mode++) {
    CHECK(h->refused_status[mode] == TN_ERR_INVALID_ARGUMENT && expect_message(&h->refused_error[mode], "UTF-8"),
          "the refused completion %d is reported to the host: %d", mode, h->refused_status[mode]);
    char *err = NULL;
    CHECK(tn_complete(h->refused_token[mode], TN_OK, "{\"output\":\"late\",\"is_error\":false}", &err) ==
                  TN_ERR_INVALID_ARGUMENT &&
              expect_message(&err, "already completed"),
          "and it used the token up");
  }
  const char *sent = jstr(tj_at(tj_get(s.last_request, "messages"), 2), "content");
  CHECK(s.requests == 2 && sent && strstr(sent, "Permission non accord") != NULL, "the model saw the error result");
  tj_free(r);
  tn_client_free(c);
  script_done(&s);
}

static void refuse(void *user_data, const char *request_json, uint64_t token) {
  (void)user_data;
  (void)request_json;
  tn_complete_host_error(token, "the approver is offline", 4242, NULL);
}

static void test_host_errors_sanitize_and_execute_call(tn_toolkit *tk, host_t *h) {
  char *out = NULL;
  CHECK(tn_sanitize("my tool/v2", &out, NULL) == TN_OK && strcmp(out, "my_tool_v2") == 0, "tn_sanitize");
  tn_string_free(out);
  out = NULL;
  CHECK(tn_auth_required("https://x/login", NULL, &out, NULL) == TN_OK, "tn_auth_required");
  tj *auth = tj_parse(out);
  tj *req = tj_get(tj_get(auth, "metadata"), "pending");
  CHECK(strcmp(jstr(auth, "output"), "Authorization required to continue\nhttps://x/login") == 0 &&
            strcmp(jstr(req, "kind"), "authorization") == 0 && strcmp(jstr(req, "url"), "https://x/login") == 0,
        "an authorization suspension with the default prompt: %s", out);
  tj_free(auth);
  tn_string_free(out);
  out = NULL;
  CHECK(tn_auth_required(NULL, "Log in", &out, NULL) == TN_ERR_INVALID_ARGUMENT && out == NULL, "a NULL url");

  /* A tool run directly with an answer sees it, as on a re-run after its suspension. */
  h->deploy_calls = 0;
  out = NULL;
  int st = tn_toolkit_execute_call(
      tk, "{\"name\":\"deploy\",\"args\":{},\"answer\":{\"id\":\"p\",\"ok\":true},\"timeout_ms\":5000}", &out, NULL);
  CHECK(st == TN_OK && strstr(out, "\"deployed\"") != NULL, "execute_call with an answer: %s", out ? out : "");
  tn_string_free(out);

  /* A host failure ends the run with the host's own reference in the error JSON. With no API
   * key anywhere a run fails before any request, a host transport or not, unless the client
   * says no key is required: then the engine sends no auth header of its own. */
  const char *replies[] = {CALLS(CALL("c1", "deploy", "{}"))};
  script_t s;
  script_init(&s, replies, 1);
  tn_callbacks cb = {0};
  cb.user_data = &s;
  cb.transport = script_transport;
  cb.wait_for = refuse;
  tn_client *c = NULL;
  const char *keyless = "{\"base_url\":\"http://model.invalid/v1\",\"style\":\"openai\",\"model\":\"m\"";
  char options[160];
  int no_env_key = !getenv("OPENAI_API_KEY") && !getenv("OPENROUTER_API_KEY") && !getenv("ANTHROPIC_API_KEY");
  if (no_env_key) {
    snprintf(options, sizeof options, "%s}", keyless);
    tn_client_new(options, &cb, &c, NULL);
    tj_free(run(c, tk, "{\"prompt\":\"deploy\"}", &st));
    CHECK(st == TN_ERR_CONFIG && s.requests == 0, "no API key: a config error before any request (%d)", st);
    tn_client_free(c);
  }
  snprintf(options, sizeof options, "%s,\"require_api_key\":false}", keyless);
  tn_client_new(options, &cb, &c, NULL);
  tj *e = run(c, tk, "{\"prompt\":\"deploy\"}", &st);
  CHECK(st == TN_ERR_HOST, "a failing wait_for ends the run: %d", st);
  const tj *ref = tj_get(e, "host_ref");
  CHECK(tj_is(ref, TJ_NUMBER) && tj_num(ref) == 4242, "the error carries the host's reference");
  CHECK(strcmp(jstr(e, "message"), "the approver is offline") == 0, "and its message");
  tj_free(e);
  tn_client_free(c);
  script_done(&s);
}

/* A request parameter the engine owns is dropped with a warning the host can read (the
 * library prints nothing). Bad options are the shared cases of vocab_test.c. */
static void test_options_and_warnings(void) {
  char *warnings = NULL;
  tn_client *c = NULL;
  CHECK(tn_client_new("{\"base_url\":\"http://x.invalid\",\"style\":\"openai\",\"model\":\"m\","
                      "\"request_params\":{\"tools\":[],\"seed\":1}}",
                      NULL, &c, NULL) == TN_OK,
        "an engine-owned request parameter is not an error");
  CHECK(tn_client_warnings(c, &warnings, NULL) == TN_OK && warnings != NULL, "tn_client_warnings");
  tj *w = tj_parse(warnings);
  CHECK(tj_size(w) == 1 && strcmp(jstr(tj_at(w, 0), "code"), "ignored_request_param") == 0 &&
            strstr(jstr(tj_at(w, 0), "message"), "\"tools\"") != NULL,
        "the dropped parameter is one warning: %s", warnings);
  tj_free(w);
  tn_string_free(warnings);
  tn_client_free(c);
  tn_client_new("{\"base_url\":\"http://x.invalid\",\"style\":\"openai\",\"model\":\"m\"}", NULL, &c, NULL);
  CHECK(tn_client_warnings(c, &warnings, NULL) == TN_OK && strcmp(warnings, "[]") == 0, "no warnings: []");
  tn_string_free(warnings);
  tn_client_free(c);
}

/* A tool that answers with the host_ref the engine handed back in its call. */
static void echo_ref(void *user_data, const char *call_json, uint64_t token) {
  (void)user_data;
  tj *call = tj_parse(call_json);
  char result[96];
  snprintf(result, sizeof result, "{\"output\":\"ref %g\",\"is_error\":false}", tj_num(tj_get(call, "host_ref")));
  tn_complete(token, TN_OK, result, NULL);
  tj_free(call);
}

/* Tools sharing a name: the first kept (or the last, on request), each dropped one a warning
 * the host reads; every call of a tool carries the host_ref it was declared with. */
static void test_duplicates_warnings_and_host_refs(void) {
  const char *tools = "[{\"name\":\"a\",\"host_ref\":7},{\"name\":\"b\",\"host_ref\":8},{\"name\":\"a\",\"host_ref\":9}]";
  tn_toolkit *tk = NULL;
  char *out = NULL;
  CHECK(tn_toolkit_new(tools, echo_ref, NULL, NULL, &tk, NULL) == TN_OK, "toolkit with a duplicate");
  CHECK(tn_toolkit_host_refs(tk, &out, NULL) == TN_OK && strcmp(out, "[7,8]") == 0, "the first a is kept: %s", out);
  tn_string_free(out);
  CHECK(tn_toolkit_warnings(tk, &out, NULL) == TN_OK && strstr(out, "\"duplicate_tool\"") != NULL &&
            strstr(out, "keeping first") != NULL,
        "the dropped one is a warning: %s", out);
  tn_string_free(out);
  CHECK(tn_toolkit_execute(tk, "a", "{}", &out, NULL) == TN_OK && strstr(out, "ref 7") != NULL, "a's call carries 7: %s",
        out);
  tn_string_free(out);
  tn_toolkit_free(tk);
  char keep_last[200];
  snprintf(keep_last, sizeof keep_last, "{\"tools\":%s,\"duplicates\":\"keep_last\"}", tools);
  CHECK(tn_toolkit_new(keep_last, echo_ref, NULL, NULL, &tk, NULL) == TN_OK, "keep_last");
  CHECK(tn_toolkit_host_refs(tk, &out, NULL) == TN_OK && strcmp(out, "[9,8]") == 0, "the last a, in the first's place: %s",
        out);
  tn_string_free(out);
  tn_toolkit_free(tk);
  char *err = NULL;
  CHECK(tn_toolkit_new("{\"tools\":[],\"duplicates\":\"random\"}", echo_ref, NULL, NULL, &tk, &err) ==
                TN_ERR_INVALID_ARGUMENT &&
            expect_message(&err, "keep_first"),
        "a bad duplicates rule is refused");
  CHECK(tn_toolkit_new("[{\"name\":\"a\",\"host_ref\":-1}]", echo_ref, NULL, NULL, &tk, &err) == TN_ERR_INVALID_ARGUMENT &&
            expect_message(&err, "host_ref"),
        "a bad host_ref is refused");
}

/* A client used before fork() runs in the child too: the child builds its own runtime (the
 * parent's threads do not exist there) instead of waiting on them forever. */
static void test_fork_after_use(void) {
  const char *replies[] = {"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"parent\"}}]}",
                           "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"child\"}}]}",
                           "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"again\"}}]}"};
  script_t s;
  script_init(&s, replies, 3);
  tn_client *c = make_client(&s, NULL);
  int st;
  tj *r = run(c, NULL, "{\"prompt\":\"hi\"}", &st);
  CHECK(st == TN_OK && strcmp(jstr(r, "text"), "parent") == 0, "the parent's run before fork");
  tj_free(r);
  fflush(NULL);
  /* The child reports through a pipe, not its exit status: a leak checker's verdict on the
   * child (whose inherited threads' memory is unreachable by nature) is not this test's. */
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe");
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20); /* a run that hangs in the child fails the test instead of hanging it */
    r = run(c, NULL, "{\"prompt\":\"hi\"}", &st);
    char verdict = st == TN_OK && strcmp(jstr(r, "text"), "child") == 0 ? 'y' : 'n';
    if (write(fds[1], &verdict, 1) != 1) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  char verdict = 0;
  ssize_t got = read(fds[0], &verdict, 1);
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  CHECK(got == 1 && verdict == 'y', "the child's run after fork (verdict %c, status %d)", verdict ? verdict : '-', wstatus);
  s.next = 2; /* the child consumed its reply in its own memory */
  r = run(c, NULL, "{\"prompt\":\"hi\"}", &st);
  CHECK(st == TN_OK && strcmp(jstr(r, "text"), "again") == 0, "the parent's run after fork");
  tj_free(r);
  tn_client_free(c);
  script_done(&s);
}

int main(void) {
  CHECK(tn_abi_version() == TN_ABI_VERSION, "ABI version");
  CHECK(tn_version() != NULL && strlen(tn_version()) > 0, "version string");
  host_t h;
  memset(&h, 0, sizeof h);
  pthread_mutex_init(&h.lock, NULL);
  tn_toolkit *tk = NULL;
  char *err = NULL;
  int st = tn_toolkit_new(TOOLS, tool, &h, host_free, &tk, &err);
  CHECK(st == TN_OK, "tn_toolkit_new: %s", err ? err : "");
  char *decls = NULL;
  CHECK(tn_toolkit_declarations(tk, "anthropic", &decls, NULL) == TN_OK && strstr(decls, "\"input_schema\""), "declarations");
  tn_string_free(decls);

  test_inline_suspension(tk, &h);
  test_durable_halt_and_resume(tk);
  test_relay(tk);
  test_async_run(tk);
  test_async_resume(tk);
  test_done_before_finalizer(tk);
  test_max_turns_zero();
  test_cancel_and_late_completion();
  test_bad_input(tk, &h);
  test_refused_completion(tk, &h);
  test_host_errors_sanitize_and_execute_call(tk, &h);
  test_options_and_warnings();
  test_token_run_data();
  test_duplicates_warnings_and_host_refs();
  test_fork_after_use();

  tn_toolkit_free(tk);
  usleep(50 * 1000); /* let runs still holding the toolkit let go */
  CHECK(h.freed == 1, "the toolkit's user_data was released once (%d)", h.freed);
  pthread_mutex_destroy(&h.lock);
  return summary();
}
