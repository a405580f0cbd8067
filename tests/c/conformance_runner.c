/* Replays every scenario in tests/conformance/ through the C ABI: the tools, wait_for and the
 * model (a transport callback serving the scenario's replies) are C callbacks. See
 * tests/conformance/README.md for the format. Usage: conformance_runner DIR */
#include "support.h" /* first: it sets the feature macros */

#include <dirent.h>

typedef struct {
  pthread_mutex_t lock;
  tj *tools;         /* the scenario's tool specs */
  tj *calls;         /* name -> count, this step */
  tj *answers;       /* wait_for answers left, or NULL */
  const tj *gates;   /* before_tool: tool name -> the Request its hook suspends with */
  const char *llm_failure; /* before_llm's message, or NULL */
  const char *tier;  /* on_error's answer, or NULL */
  tj *wait_requests; /* Requests wait_for received, this step */
  tj *error_calls;   /* what on_error was told, this step */
  tj *replies;       /* this step's replies */
  int next_reply;
  tj *requests;      /* requests the model received, this step */
  const char *style;
} scenario_t;

static char *read_file(const char *path) {
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

static const tj *tool_spec(scenario_t *sc, const char *name) {
  const tj *t;
  tj_each(t, sc->tools) {
    if (strcmp(jstr(t, "name"), name) == 0) return t;
  }
  return NULL;
}

static void count_call(scenario_t *sc, const char *name) {
  pthread_mutex_lock(&sc->lock);
  tj *n = tj_get(sc->calls, name);
  if (n) tj_set_number(n, tj_num(n) + 1);
  else tj_add(sc->calls, name, tj_number(1));
  pthread_mutex_unlock(&sc->lock);
}

static char *result_json(const char *output, int is_error) {
  tj *r = tj_object();
  tj_add(r, "output", tj_string(output));
  tj_add(r, "is_error", tj_bool(is_error));
  char *s = tj_print(r);
  tj_free(r);
  return s;
}

/* `template` with every "{output}" replaced by `value`. */
static char *fill(const char *template, const char *value) {
  size_t cap = strlen(template) * 2 + strlen(value) * 4 + 1;
  char *out = calloc(cap, 1);
  const char *p = template;
  const char *hit;
  while ((hit = strstr(p, "{output}")) != NULL) {
    strncat(out, p, (size_t)(hit - p));
    strcat(out, value);
    p = hit + strlen("{output}");
  }
  strcat(out, p);
  return out;
}

static void tool(void *user_data, const char *call_json, uint64_t token) {
  scenario_t *sc = user_data;
  tj *call = tj_parse(call_json);
  const char *name = jstr(call, "name");
  const tj *b = tj_get(tool_spec(sc, name), "behavior");
  count_call(sc, name);
  const char *type = jstr(b, "type");
  int status = TN_OK;
  char *payload = NULL;
  if (strcmp(type, "text") == 0 || strcmp(type, "error_result") == 0) {
    payload = result_json(jstr(b, "output"), strcmp(type, "error_result") == 0);
  } else if (strcmp(type, "fail") == 0) {
    status = TN_ERR_HOST;
    payload = strdup(jstr(b, "message"));
  } else if (strcmp(type, "suspend") == 0) {
    const tj *answer = tj_get(call, "answer");
    if (answer == NULL || tj_is(tj_get(b, "always"), TJ_TRUE)) {
      char *req = tj_print(tj_get(b, "request"));
      char *pending = NULL;
      tn_pending(req, &pending, NULL);
      payload = strdup(pending); /* payload is ours (free); the library's is tn_string_free'd */
      tn_string_free(pending);
      free(req);
    } else {
      const char *out = jstr(tj_get(answer, "data"), "output");
      char *text = fill(jstr(b, "on_answer"), out ? out : "");
      payload = result_json(text, 0);
      free(text);
    }
  }
  const tj *delay = tj_get(b, "delay_ms");
  if (tj_is(delay, TJ_NUMBER)) {
    complete_later(token, status, payload, (int)tj_num(delay));
  } else {
    tn_complete(token, status, payload, NULL);
  }
  free(payload);
  tj_free(call);
}

/* The index of the answer `for` the Request `id`, else of the first answer naming none. */
static int answer_for(const tj *answers, const char *id) {
  int free_at = -1;
  for (int i = 0; i < tj_size(answers); i++) {
    const char *named = jstr(tj_at(answers, i), "for");
    if (named != NULL && id != NULL && strcmp(named, id) == 0) return i;
    if (named == NULL && free_at < 0) free_at = i;
  }
  return free_at;
}

static void wait_for(void *user_data, const char *request_json, uint64_t token) {
  scenario_t *sc = user_data;
  tj *req = tj_parse(request_json);
  pthread_mutex_lock(&sc->lock);
  tj *next = tj_take(sc->answers, answer_for(sc->answers, jstr(req, "id")));
  tj_push(sc->wait_requests, tj_copy(req));
  pthread_mutex_unlock(&sc->lock);
  char *answer;
  if (next == NULL || tj_is(next, TJ_NULL)) {
    answer = strdup("null");
  } else {
    /* The Answer: the entry's own members but `for`, and the Request's id. */
    tj *a = tj_object();
    tj_add(a, "id", tj_string(jstr(req, "id")));
    const char *keep[] = {"ok", "data", "reason", NULL};
    for (const char **k = keep; *k; k++) tj_add(a, *k, tj_copy(tj_get(next, *k)));
    answer = tj_print(a);
    tj_free(a);
  }
  tn_complete(token, TN_OK, answer, NULL);
  free(answer);
  tj_free(next);
  tj_free(req);
}

/* The scenario's on_error: records what it is told (but a network error's text) and answers
 * the scenario's tier. */
static void on_error(void *user_data, const char *info_json, uint64_t token) {
  scenario_t *sc = user_data;
  tj *info = tj_parse(info_json), *call = tj_object();
  const char *keep[] = {"status", "attempt", "retryable", NULL};
  for (const char **k = keep; *k; k++) {
    const tj *v = tj_get(info, *k);
    if (v) tj_add(call, *k, tj_copy(v));
  }
  pthread_mutex_lock(&sc->lock);
  tj_push(sc->error_calls, call);
  pthread_mutex_unlock(&sc->lock);
  tj *tier = tj_string(sc->tier);
  char *answer = tj_print(tier);
  tn_complete(token, TN_OK, answer, NULL);
  free(answer);
  tj_free(tier);
  tj_free(info);
}

/* The scenario's hooks: before_llm fails with its message; before_tool answers a gated tool
 * with its Request's suspension. */
static void hook(void *user_data, const char *hook_name, const char *event_json, uint64_t token) {
  scenario_t *sc = user_data;
  if (strcmp(hook_name, "before_llm") == 0) {
    tn_complete(token, TN_ERR_HOST, sc->llm_failure, NULL);
    return;
  }
  tj *ev = tj_parse(event_json);
  const tj *gate = strcmp(hook_name, "before_tool") == 0 ? tj_get(sc->gates, jstr(ev, "name")) : NULL;
  if (gate == NULL) {
    tn_complete(token, TN_OK, "null", NULL);
  } else {
    char *request = tj_print(gate), *pending = NULL;
    tn_pending(request, &pending, NULL);
    tj *override = tj_object();
    tj_add(override, "result", tj_parse(pending));
    char *payload = tj_print(override);
    tn_complete(token, TN_OK, payload, NULL);
    free(payload);
    tj_free(override);
    tn_string_free(pending);
    free(request);
  }
  tj_free(ev);
}

static void transport(void *user_data, const char *request_json, uint64_t token) {
  scenario_t *sc = user_data;
  tj *req = tj_parse(request_json);
  const char *url = jstr(req, "url");
  const char *path = strchr(strstr(url, "://") + 3, '/');
  static const char *openai[] = {"authorization", "content-type", NULL};
  static const char *anthropic[] = {"x-api-key", "anthropic-version", "content-type", NULL};
  const char **pinned = strcmp(sc->style, "openai") == 0 ? openai : anthropic;
  tj *seen = tj_object();
  tj_add(seen, "path", tj_string(path ? path : "/"));
  tj *headers = tj_add(seen, "headers", tj_object());
  for (const char **h = pinned; *h; h++) {
    const char *v = jstr(tj_get(req, "headers"), *h);
    if (v) tj_add(headers, *h, tj_string(v));
  }
  tj_add(seen, "body", tj_parse(jstr(req, "body")));
  pthread_mutex_lock(&sc->lock);
  tj_push(sc->requests, seen);
  const tj *reply = tj_at(sc->replies, sc->next_reply++);
  pthread_mutex_unlock(&sc->lock);
  tj *resp = tj_object();
  const tj *status = tj_get(reply, "status");
  tj_add(resp, "status", tj_number(reply == NULL ? 599 : tj_is(status, TJ_NUMBER) ? tj_num(status) : 200));
  const tj *rh = tj_get(reply, "headers");
  tj_add(resp, "headers", rh ? tj_copy(rh) : tj_object());
  char *body = reply ? tj_print(tj_get(reply, "body"))
                     : strdup("{\"error\":{\"message\":\"no reply left\"}}");
  tj_add(resp, "body", tj_string(body));
  char *text = tj_print(resp);
  const tj *delay = tj_get(reply, "delay_ms");
  if (tj_is(delay, TJ_NUMBER)) {
    complete_later(token, TN_OK, text, (int)tj_num(delay)); /* the model answers late */
  } else {
    tn_complete(token, TN_OK, text, NULL);
  }
  free(text);
  free(body);
  tj_free(resp);
  tj_free(req);
}

static int differs(const char *name, int step, const char *what, const tj *want, const tj *got) {
  /* A missing expectation is a mismatch, not a match with a missing value. */
  if (want != NULL && got != NULL && tj_equal(want, got)) return 0;
  char *w = tj_print_pretty(want), *g = tj_print_pretty(got);
  fprintf(stderr, "%s step %d: `%s` differs\n--- expected\n%s\n--- got\n%s\n", name, step, what, w ? w : "null",
          g ? g : "null");
  free(w);
  free(g);
  return 1;
}

/* The client's Prometheus text as a list of lines, each duration sample's value (`_bucket`,
 * `_sum`) replaced by `*`: how long a call took is the one thing a replay cannot fix. */
static tj *masked_metrics(const tn_client *client) {
  char *text = NULL, *err = NULL;
  tj *lines = tj_array();
  if (tn_client_metrics(client, &text, &err) != TN_OK) {
    fprintf(stderr, "metrics: %s\n", err);
    tn_string_free(err);
    return lines;
  }
  for (char *line = text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    char *name_end = line + strcspn(line, "{ "), *space = strrchr(line, ' ');
    size_t n = (size_t)(name_end - line);
    int duration = line[0] != '#' && space &&
                   ((n > 15 && !strncmp(name_end - 15, "_seconds_bucket", 15)) ||
                    (n > 12 && !strncmp(name_end - 12, "_seconds_sum", 12)));
    if (duration) strcpy(space + 1, "*");
    tj_push(lines, tj_string(line));
  }
  tn_string_free(text);
  return lines;
}

/* Whether `want` and `got` hold equal elements, in any order (one turn's suspensions are
 * waited for concurrently). */
static int same_set(const tj *want, const tj *got) {
  int n = tj_size(want);
  if (!tj_is(want, TJ_ARRAY) || !tj_is(got, TJ_ARRAY) || n != tj_size(got)) return 0;
  char *used = calloc((size_t)n + 1, 1);
  int all = 1;
  for (int i = 0; i < n && all; i++) {
    int found = 0;
    for (int j = 0; j < n && !found; j++) {
      if (!used[j] && tj_equal(tj_at(want, i), tj_at(got, j))) used[j] = found = 1;
    }
    all = found;
  }
  free(used);
  return all;
}

static char *client_options(const tj *sc_json) {
  const tj *c = tj_get(sc_json, "client");
  const char *style = jstr(sc_json, "style");
  tj *o = tj_object();
  tj_add(o, "base_url", tj_string(strcmp(style, "openai") == 0 ? "http://mock.invalid/v1" : "http://mock.invalid"));
  tj_add(o, "style", tj_string(style));
  tj_add(o, "model", tj_string(jstr(c, "model")));
  tj_add(o, "api_key", tj_string(jstr(c, "api_key") ? jstr(c, "api_key") : "test-key"));
  const char *copy[] = {"system_prompt", "max_turns", "retries", "timeout_ms", "request_params", NULL};
  for (const char **k = copy; *k; k++) {
    const tj *v = tj_get(c, *k);
    if (v) tj_add(o, *k, tj_copy(v));
  }
  const tj *base = tj_get(c, "retry_base_ms");
  tj_add(o, "retry_base_ms", tj_number(tj_is(base, TJ_NUMBER) ? tj_num(base) : 1));
  char *s = tj_print(o);
  tj_free(o);
  return s;
}

/* Replays one scenario; returns the number of mismatches. */
static int replay(const char *path) {
  char *text = read_file(path);
  tj *doc = tj_parse(text);
  free(text);
  const char *name = jstr(doc, "name");
  scenario_t sc;
  memset(&sc, 0, sizeof sc);
  pthread_mutex_init(&sc.lock, NULL);
  sc.style = jstr(doc, "style");
  sc.tools = tj_get(doc, "tools");
  const tj *answers = tj_get(doc, "wait_for");
  int has_wait_for = tj_is(answers, TJ_ARRAY);
  sc.answers = has_wait_for ? tj_copy(answers) : NULL;

  tn_toolkit *tk = NULL;
  const tj *sources = tj_get(doc, "sources");
  if (tj_is(sc.tools, TJ_ARRAY) || tj_is(sources, TJ_OBJECT)) {
    tj *decl = tj_array();
    const tj *t;
    tj_each(t, sc.tools) {
      tj *d = tj_object();
      tj_add(d, "name", tj_string(jstr(t, "name")));
      tj_add(d, "description", tj_string(jstr(t, "description")));
      tj_add(d, "input_schema", tj_copy(tj_get(t, "input_schema")));
      const char *type = jstr(tj_get(t, "behavior"), "type");
      tj_add(d, "relay", tj_bool(strcmp(type, "relay") == 0));
      tj_push(decl, d);
    }
    char *err = NULL;
    int rc;
    if (tj_is(sources, TJ_OBJECT)) {
      /* Built from its sources by the engine's factory, the file's tools as the host's own. */
      tj *spec = tj_copy(sources);
      tj_add(spec, "tools", decl);
      char *spec_json = tj_print(spec);
      rc = tn_toolkit_create(spec_json, tool, &sc, NULL, NULL, &tk, &err);
      free(spec_json);
      tj_free(spec);
    } else {
      char *decl_json = tj_print(decl);
      rc = tn_toolkit_new(decl_json, tool, &sc, NULL, &tk, &err);
      free(decl_json);
      tj_free(decl);
    }
    if (rc != TN_OK) fprintf(stderr, "%s: toolkit: %s\n", name, err);
    tn_string_free(err);
  }
  tn_callbacks cb = {0};
  cb.user_data = &sc;
  cb.transport = transport;
  cb.wait_for = has_wait_for ? wait_for : NULL;
  sc.gates = tj_get(doc, "before_tool");
  sc.llm_failure = jstr(tj_get(doc, "before_llm"), "fail");
  if (tj_is(sc.gates, TJ_OBJECT) || sc.llm_failure) {
    cb.hook = hook;
    cb.hook_mask = (tj_is(sc.gates, TJ_OBJECT) ? TN_HOOK_BEFORE_TOOL : 0) | (sc.llm_failure ? TN_HOOK_BEFORE_LLM : 0);
  }
  sc.tier = jstr(doc, "on_error");
  if (sc.tier) cb.on_error = on_error;
  char *opts = client_options(doc);
  tn_client *client = NULL;
  char *err = NULL;
  if (tn_client_new(opts, &cb, &client, &err) != TN_OK) fprintf(stderr, "%s: client: %s\n", name, err);
  tn_string_free(err);
  free(opts);

  int mismatches = 0;
  tj *previous = NULL; /* the previous step's RunResult */
  const tj *step;
  int i = 0;
  tj_each(step, tj_get(doc, "steps")) {
    sc.calls = tj_object();
    sc.wait_requests = tj_array();
    sc.error_calls = tj_array();
    sc.requests = tj_array();
    sc.replies = tj_get(step, "replies");
    sc.next_reply = 0;
    tj *input = tj_object();
    const tj *run = tj_get(step, "run");
    if (run) {
      tj_add(input, "prompt", tj_string(jstr(run, "prompt")));
      const tj *h = tj_get(run, "history");
      if (h) tj_add(input, "history", tj_copy(h));
    } else {
      /* The previous step's transcript and Request, unless the step gives its own. */
      const tj *resume = tj_get(step, "resume");
      const tj *h = tj_get(resume, "history") ? tj_get(resume, "history") : tj_get(previous, "messages");
      const tj *p = tj_get(resume, "pending") ? tj_get(resume, "pending") : tj_get(previous, "pending");
      tj_add(input, "history", h ? tj_copy(h) : tj_array());
      tj_add(input, "pending", p ? tj_copy(p) : tj_parse("{\"id\":\"\",\"kind\":\"\",\"prompt\":\"\"}"));
      tj_add(input, "answer", tj_copy(tj_get(resume, "answer")));
    }
    char *input_json = tj_print(input);
    char *result = NULL;
    err = NULL;
    int status = tn_client_run(client, tk, input_json, NULL, &result, &err);
    const tj *expect = tj_get(step, "expect");
    mismatches += differs(name, i, "requests", tj_get(expect, "requests"), sc.requests);
    tj_free(previous);
    previous = NULL;
    if (status == TN_OK) {
      previous = tj_parse(result);
      mismatches += differs(name, i, "result", tj_get(expect, "result"), previous);
    } else {
      tj *e = tj_parse(err), *got = tj_object();
      tj_add(got, "kind", tj_string(jstr(e, "kind")));
      const tj *st = tj_get(e, "status");
      if (st) tj_add(got, "status", tj_copy(st));
      mismatches += differs(name, i, "error", tj_get(expect, "error"), got);
      tj_free(got);
      tj_free(e);
    }
    const tj *calls = tj_get(expect, "calls");
    tj *none = tj_object();
    mismatches += differs(name, i, "calls", calls ? calls : none, sc.calls);
    tj_free(none);
    if (has_wait_for)
      mismatches += same_set(tj_get(expect, "wait_for_requests"), sc.wait_requests)
                        ? 0
                        : differs(name, i, "wait_for_requests", tj_get(expect, "wait_for_requests"), sc.wait_requests);
    if (sc.tier) mismatches += differs(name, i, "on_error_calls", tj_get(expect, "on_error_calls"), sc.error_calls);
    if (tj_get(expect, "metrics")) {
      tj *metrics = masked_metrics(client);
      mismatches += differs(name, i, "metrics", tj_get(expect, "metrics"), metrics);
      tj_free(metrics);
    }
    if (sc.next_reply != tj_size(sc.replies)) {
      fprintf(stderr, "%s step %d: %d scripted replies were never requested\n", name, i, tj_size(sc.replies) - sc.next_reply);
      mismatches++;
    }
    tn_string_free(result);
    tn_string_free(err);
    free(input_json);
    tj_free(input);
    tj_free(sc.calls);
    tj_free(sc.wait_requests);
    tj_free(sc.error_calls);
    tj_free(sc.requests);
    i++;
  }
  wait_later_done(); /* a tool answering later may outlive its run: let it finish first */
  tj_free(previous);
  tn_client_free(client);
  tn_toolkit_free(tk);
  tj_free(sc.answers);
  tj_free(doc);
  pthread_mutex_destroy(&sc.lock);
  return mismatches;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "tests/conformance";
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "cannot open %s\n", dir);
    return 2;
  }
  char *names[512];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < 512) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof(char *), by_name);
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    int m = replay(path);
    CHECK(m == 0, "%s: %d mismatches", names[i], m);
    free(names[i]);
  }
  if (n < 15) CHECK(0, "expected at least 15 scenarios, found %d", n);
  return summary();
}
