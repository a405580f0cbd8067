/* Replays every scenario in tests/conformance/ through the C ABI: the tools, wait_for and the
 * model (a transport callback serving the scenario's replies) are C callbacks. See
 * tests/conformance/README.md for the format. Usage: conformance_runner DIR */
#include "support.h" /* first: it sets the feature macros */

#include <dirent.h>

typedef struct {
  pthread_mutex_t lock;
  cJSON *tools;         /* the scenario's tool specs */
  cJSON *calls;         /* name -> count, this step */
  cJSON *answers;       /* wait_for answers left, or NULL */
  const cJSON *gates;   /* before_tool: tool name -> the Request its hook suspends with */
  cJSON *wait_requests; /* Requests wait_for received, this step */
  cJSON *replies;       /* this step's replies */
  int next_reply;
  cJSON *requests;      /* requests the model received, this step */
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

static const cJSON *tool_spec(scenario_t *sc, const char *name) {
  const cJSON *t;
  cJSON_ArrayForEach(t, sc->tools) {
    if (strcmp(jstr(t, "name"), name) == 0) return t;
  }
  return NULL;
}

static void count_call(scenario_t *sc, const char *name) {
  pthread_mutex_lock(&sc->lock);
  cJSON *n = cJSON_GetObjectItemCaseSensitive(sc->calls, name);
  if (n) cJSON_SetNumberValue(n, n->valuedouble + 1);
  else cJSON_AddNumberToObject(sc->calls, name, 1);
  pthread_mutex_unlock(&sc->lock);
}

static char *result_json(const char *output, int is_error) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "output", output);
  cJSON_AddBoolToObject(r, "is_error", is_error);
  char *s = cJSON_PrintUnformatted(r);
  cJSON_Delete(r);
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
  cJSON *call = cJSON_Parse(call_json);
  const char *name = jstr(call, "name");
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(tool_spec(sc, name), "behavior");
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
    const cJSON *answer = cJSON_GetObjectItemCaseSensitive(call, "answer");
    if (answer == NULL || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "always"))) {
      char *req = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(b, "request"));
      tn_pending(req, &payload, NULL);
      free(req);
    } else {
      const char *out = jstr(cJSON_GetObjectItemCaseSensitive(answer, "data"), "output");
      char *text = fill(jstr(b, "on_answer"), out ? out : "");
      payload = result_json(text, 0);
      free(text);
    }
  }
  const cJSON *delay = cJSON_GetObjectItemCaseSensitive(b, "delay_ms");
  if (cJSON_IsNumber(delay)) {
    complete_later(token, status, payload, (int)delay->valuedouble);
  } else {
    tn_complete(token, status, payload, NULL);
  }
  free(payload);
  cJSON_Delete(call);
}

static void wait_for(void *user_data, const char *request_json, uint64_t token) {
  scenario_t *sc = user_data;
  cJSON *req = cJSON_Parse(request_json);
  pthread_mutex_lock(&sc->lock);
  cJSON *next = cJSON_DetachItemFromArray(sc->answers, 0);
  cJSON_AddItemToArray(sc->wait_requests, cJSON_Duplicate(req, 1));
  pthread_mutex_unlock(&sc->lock);
  char *answer;
  if (next == NULL || cJSON_IsNull(next)) {
    answer = strdup("null");
  } else {
    cJSON_AddStringToObject(next, "id", jstr(req, "id"));
    answer = cJSON_PrintUnformatted(next);
  }
  tn_complete(token, TN_OK, answer, NULL);
  free(answer);
  cJSON_Delete(next);
  cJSON_Delete(req);
}

/* The scenario's before_tool hook: a gated tool is answered with its Request's suspension. */
static void hook(void *user_data, const char *hook_name, const char *event_json, uint64_t token) {
  scenario_t *sc = user_data;
  cJSON *ev = cJSON_Parse(event_json);
  const cJSON *gate = strcmp(hook_name, "before_tool") == 0 ? cJSON_GetObjectItemCaseSensitive(sc->gates, jstr(ev, "name")) : NULL;
  if (gate == NULL) {
    tn_complete(token, TN_OK, "null", NULL);
  } else {
    char *request = cJSON_PrintUnformatted(gate), *pending = NULL;
    tn_pending(request, &pending, NULL);
    cJSON *override = cJSON_CreateObject();
    cJSON_AddItemToObject(override, "result", cJSON_Parse(pending));
    char *payload = cJSON_PrintUnformatted(override);
    tn_complete(token, TN_OK, payload, NULL);
    free(payload);
    cJSON_Delete(override);
    tn_string_free(pending);
    free(request);
  }
  cJSON_Delete(ev);
}

static void transport(void *user_data, const char *request_json, uint64_t token) {
  scenario_t *sc = user_data;
  cJSON *req = cJSON_Parse(request_json);
  const char *url = jstr(req, "url");
  const char *path = strchr(strstr(url, "://") + 3, '/');
  static const char *openai[] = {"authorization", "content-type", NULL};
  static const char *anthropic[] = {"x-api-key", "anthropic-version", "content-type", NULL};
  const char **pinned = strcmp(sc->style, "openai") == 0 ? openai : anthropic;
  cJSON *seen = cJSON_CreateObject();
  cJSON_AddStringToObject(seen, "path", path ? path : "/");
  cJSON *headers = cJSON_AddObjectToObject(seen, "headers");
  for (const char **h = pinned; *h; h++) {
    const char *v = jstr(cJSON_GetObjectItemCaseSensitive(req, "headers"), *h);
    if (v) cJSON_AddStringToObject(headers, *h, v);
  }
  cJSON_AddItemToObject(seen, "body", cJSON_Parse(jstr(req, "body")));
  pthread_mutex_lock(&sc->lock);
  cJSON_AddItemToArray(sc->requests, seen);
  const cJSON *reply = cJSON_GetArrayItem(sc->replies, sc->next_reply++);
  pthread_mutex_unlock(&sc->lock);
  cJSON *resp = cJSON_CreateObject();
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(reply, "status");
  cJSON_AddNumberToObject(resp, "status", reply == NULL ? 599 : cJSON_IsNumber(status) ? status->valuedouble : 200);
  const cJSON *rh = cJSON_GetObjectItemCaseSensitive(reply, "headers");
  cJSON_AddItemToObject(resp, "headers", rh ? cJSON_Duplicate(rh, 1) : cJSON_CreateObject());
  char *body = reply ? cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(reply, "body"))
                     : strdup("{\"error\":{\"message\":\"no reply left\"}}");
  cJSON_AddStringToObject(resp, "body", body);
  char *text = cJSON_PrintUnformatted(resp);
  tn_complete(token, TN_OK, text, NULL);
  free(text);
  free(body);
  cJSON_Delete(resp);
  cJSON_Delete(req);
}

static int differs(const char *name, int step, const char *what, const cJSON *want, const cJSON *got) {
  if (cJSON_Compare(want, got, 1)) return 0;
  char *w = cJSON_Print(want), *g = cJSON_Print(got);
  fprintf(stderr, "%s step %d: `%s` differs\n--- expected\n%s\n--- got\n%s\n", name, step, what, w ? w : "null",
          g ? g : "null");
  free(w);
  free(g);
  return 1;
}

static char *client_options(const cJSON *sc_json) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(sc_json, "client");
  const char *style = jstr(sc_json, "style");
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "base_url", strcmp(style, "openai") == 0 ? "http://mock.invalid/v1" : "http://mock.invalid");
  cJSON_AddStringToObject(o, "style", style);
  cJSON_AddStringToObject(o, "model", jstr(c, "model"));
  cJSON_AddStringToObject(o, "api_key", jstr(c, "api_key") ? jstr(c, "api_key") : "test-key");
  const char *copy[] = {"system_prompt", "max_turns", "retries", "timeout_ms", NULL};
  for (const char **k = copy; *k; k++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, *k);
    if (v) cJSON_AddItemToObject(o, *k, cJSON_Duplicate(v, 1));
  }
  const cJSON *base = cJSON_GetObjectItemCaseSensitive(c, "retry_base_ms");
  cJSON_AddNumberToObject(o, "retry_base_ms", cJSON_IsNumber(base) ? base->valuedouble : 1);
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

/* Replays one scenario; returns the number of mismatches. */
static int replay(const char *path) {
  char *text = read_file(path);
  cJSON *doc = cJSON_Parse(text);
  free(text);
  const char *name = jstr(doc, "name");
  scenario_t sc;
  memset(&sc, 0, sizeof sc);
  pthread_mutex_init(&sc.lock, NULL);
  sc.style = jstr(doc, "style");
  sc.tools = cJSON_GetObjectItemCaseSensitive(doc, "tools");
  const cJSON *answers = cJSON_GetObjectItemCaseSensitive(doc, "wait_for");
  int has_wait_for = cJSON_IsArray(answers);
  sc.answers = has_wait_for ? cJSON_Duplicate(answers, 1) : NULL;

  tn_toolkit *tk = NULL;
  if (cJSON_IsArray(sc.tools)) {
    cJSON *decl = cJSON_CreateArray();
    const cJSON *t;
    cJSON_ArrayForEach(t, sc.tools) {
      cJSON *d = cJSON_CreateObject();
      cJSON_AddStringToObject(d, "name", jstr(t, "name"));
      cJSON_AddStringToObject(d, "description", jstr(t, "description"));
      cJSON_AddItemToObject(d, "input_schema", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "input_schema"), 1));
      const char *type = jstr(cJSON_GetObjectItemCaseSensitive(t, "behavior"), "type");
      cJSON_AddBoolToObject(d, "relay", strcmp(type, "relay") == 0);
      cJSON_AddItemToArray(decl, d);
    }
    char *decl_json = cJSON_PrintUnformatted(decl);
    char *err = NULL;
    if (tn_toolkit_new(decl_json, tool, &sc, NULL, &tk, &err) != TN_OK) fprintf(stderr, "%s: toolkit: %s\n", name, err);
    tn_string_free(err);
    free(decl_json);
    cJSON_Delete(decl);
  }
  tn_callbacks cb = {0};
  cb.user_data = &sc;
  cb.transport = transport;
  cb.wait_for = has_wait_for ? wait_for : NULL;
  sc.gates = cJSON_GetObjectItemCaseSensitive(doc, "before_tool");
  if (cJSON_IsObject(sc.gates)) {
    cb.hook = hook;
    cb.hook_mask = TN_HOOK_BEFORE_TOOL;
  }
  char *opts = client_options(doc);
  tn_client *client = NULL;
  char *err = NULL;
  if (tn_client_new(opts, &cb, &client, &err) != TN_OK) fprintf(stderr, "%s: client: %s\n", name, err);
  tn_string_free(err);
  free(opts);

  int mismatches = 0;
  cJSON *previous = NULL; /* the previous step's RunResult */
  const cJSON *step;
  int i = 0;
  cJSON_ArrayForEach(step, cJSON_GetObjectItemCaseSensitive(doc, "steps")) {
    sc.calls = cJSON_CreateObject();
    sc.wait_requests = cJSON_CreateArray();
    sc.requests = cJSON_CreateArray();
    sc.replies = cJSON_GetObjectItemCaseSensitive(step, "replies");
    sc.next_reply = 0;
    cJSON *input = cJSON_CreateObject();
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(step, "run");
    if (run) {
      cJSON_AddStringToObject(input, "prompt", jstr(run, "prompt"));
      const cJSON *h = cJSON_GetObjectItemCaseSensitive(run, "history");
      if (h) cJSON_AddItemToObject(input, "history", cJSON_Duplicate(h, 1));
    } else {
      const cJSON *p = cJSON_GetObjectItemCaseSensitive(previous, "pending");
      cJSON_AddItemToObject(input, "history", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(previous, "messages"), 1));
      cJSON_AddItemToObject(input, "pending", p ? cJSON_Duplicate(p, 1) : cJSON_Parse("{\"id\":\"\",\"kind\":\"\",\"prompt\":\"\"}"));
      cJSON_AddItemToObject(input, "answer",
                            cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(step, "resume"), "answer"), 1));
    }
    char *input_json = cJSON_PrintUnformatted(input);
    char *result = NULL;
    err = NULL;
    int status = tn_client_run(client, tk, input_json, NULL, &result, &err);
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(step, "expect");
    mismatches += differs(name, i, "requests", cJSON_GetObjectItemCaseSensitive(expect, "requests"), sc.requests);
    cJSON_Delete(previous);
    previous = NULL;
    if (status == TN_OK) {
      previous = cJSON_Parse(result);
      mismatches += differs(name, i, "result", cJSON_GetObjectItemCaseSensitive(expect, "result"), previous);
    } else {
      cJSON *e = cJSON_Parse(err), *got = cJSON_CreateObject();
      cJSON_AddStringToObject(got, "kind", jstr(e, "kind"));
      const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "status");
      if (st) cJSON_AddNumberToObject(got, "status", st->valuedouble);
      mismatches += differs(name, i, "error", cJSON_GetObjectItemCaseSensitive(expect, "error"), got);
      cJSON_Delete(got);
      cJSON_Delete(e);
    }
    const cJSON *calls = cJSON_GetObjectItemCaseSensitive(expect, "calls");
    cJSON *none = cJSON_CreateObject();
    mismatches += differs(name, i, "calls", calls ? calls : none, sc.calls);
    cJSON_Delete(none);
    if (has_wait_for)
      mismatches += differs(name, i, "wait_for_requests", cJSON_GetObjectItemCaseSensitive(expect, "wait_for_requests"),
                            sc.wait_requests);
    if (sc.next_reply != cJSON_GetArraySize(sc.replies)) {
      fprintf(stderr, "%s step %d: %d scripted replies were never requested\n", name, i,
              cJSON_GetArraySize(sc.replies) - sc.next_reply);
      mismatches++;
    }
    tn_string_free(result);
    tn_string_free(err);
    free(input_json);
    cJSON_Delete(input);
    cJSON_Delete(sc.calls);
    cJSON_Delete(sc.wait_requests);
    cJSON_Delete(sc.requests);
    i++;
  }
  usleep(100 * 1000); /* tools answering later may still hold the scenario */
  cJSON_Delete(previous);
  tn_client_free(client);
  tn_toolkit_free(tk);
  cJSON_Delete(sc.answers);
  cJSON_Delete(doc);
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
