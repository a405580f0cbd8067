/* The body-transform callback (ABI version 2): each request body goes through it before it is
 * sent; `null` sends it unchanged, an object replaces it, anything else or an error status ends
 * the run. Run under valgrind and ASan/UBSan by `make c-tests`. */
#include "support.h" /* first: it sets the feature macros */

static const char *REPLY = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\"}}]}";

/* What the transform answers: 0 null, 1 a body with "temperature": 0, 2 a number, 3 an error. */
static int g_mode;
static int g_seen;

static void transform(void *user_data, const char *body_json, uint64_t token) {
  (void)user_data;
  tj *body = tj_parse(body_json);
  g_seen += jstr(body, "model") != NULL && strcmp(jstr(body, "model"), "m") == 0;
  if (g_mode == 1) {
    tj_add(body, "temperature", tj_number(0));
    char *text = tj_print(body);
    tn_complete(token, TN_OK, text, NULL);
    free(text);
  } else {
    tn_complete(token, g_mode == 3 ? TN_ERR_HOST : TN_OK, g_mode == 0 ? "null" : g_mode == 2 ? "3" : "no body today",
                NULL);
  }
  tj_free(body);
}

static int run_once(script_t *s, int mode, char **err) {
  g_mode = mode;
  tn_callbacks cb = {0};
  cb.user_data = s;
  cb.transport = script_transport;
  cb.body_transform = transform;
  tn_client *c = NULL;
  CHECK(tn_client_new("{\"base_url\":\"http://model.invalid/v1\",\"style\":\"openai\",\"model\":\"m\",\"api_key\":\"k\"}",
                      &cb, &c, NULL) == TN_OK,
        "tn_client_new");
  char *result = NULL;
  int status = tn_client_run(c, NULL, "{\"prompt\":\"hello\"}", NULL, &result, err);
  tn_string_free(result);
  tn_client_free(c);
  return status;
}

int main(void) {
  CHECK(tn_abi_version() == TN_ABI_VERSION && TN_ABI_VERSION >= 2, "ABI version 2 or later");
  const char *replies[] = {REPLY, REPLY, REPLY, REPLY};
  script_t s;
  script_init(&s, replies, 4);
  char *err = NULL;

  CHECK(run_once(&s, 0, &err) == TN_OK, "null sends the body as built");
  CHECK(g_seen == 1 && s.last_request && tj_get(s.last_request, "temperature") == NULL, "unchanged");
  CHECK(run_once(&s, 1, &err) == TN_OK, "an object replaces the body");
  CHECK(s.last_request && tj_num(tj_get(s.last_request, "temperature")) == 0, "the replacement was sent");
  int requests = s.requests;
  CHECK(run_once(&s, 2, &err) == TN_ERR_INVALID_ARGUMENT && err && strstr(err, "JSON object or null"),
        "a non-object answer ends the run: %s", err ? err : "");
  tn_string_free(err);
  err = NULL;
  CHECK(run_once(&s, 3, &err) == TN_ERR_HOST && err && strstr(err, "no body today"), "an error ends the run: %s",
        err ? err : "");
  tn_string_free(err);
  CHECK(s.requests == requests, "nothing was sent by the failed transforms");
  script_done(&s);
  return summary();
}
