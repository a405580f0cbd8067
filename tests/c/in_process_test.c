/* In-process models (ABI version 3): the host's generate callback is the model. It sees the
 * assembled request; its answer ends the turn; its failure ends the run at once; wire options
 * are refused. Run under valgrind and ASan/UBSan by `make c-tests`. */
#include "support.h" /* first: it sets the feature macros */

static int g_calls;
static int g_fail;
static char g_model[32];

static void generate(void *user_data, const char *request_json, uint64_t token) {
  (void)user_data;
  g_calls++;
  tj *req = tj_parse(request_json);
  snprintf(g_model, sizeof g_model, "%s", req && jstr(req, "model") ? jstr(req, "model") : "?");
  CHECK(req && tj_size(tj_get(req, "messages")) == 2 && tj_get(req, "body") != NULL, "the assembled request: %s",
        request_json);
  tj_free(req);
  if (g_fail) {
    tn_complete(token, TN_ERR_HOST, "my model blew up", NULL);
  } else {
    tn_complete(token, TN_OK, "{\"content\":\"hello from here\",\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}",
                NULL);
  }
}

static tn_client *make(const char *options, int with_transport, int *status, char **err) {
  tn_callbacks cb = {0};
  if (with_transport) cb.transport = script_transport;
  tn_client *c = NULL;
  *status = tn_client_new_in_process(options, &cb, generate, &c, err);
  return c;
}

int main(void) {
  int st = 0;
  char *err = NULL, *out = NULL;
  tn_client *c = make("{\"model\":\"local\",\"system_prompt\":\"Terse.\"}", 0, &st, &err);
  CHECK(st == TN_OK && c, "tn_client_new_in_process: %s", err ? err : "");
  CHECK(tn_client_run(c, NULL, "{\"prompt\":\"hi\"}", NULL, &out, &err) == TN_OK, "run: %s", err ? err : "");
  tj *r = tj_parse(out);
  CHECK(r && strcmp(jstr(r, "text"), "hello from here") == 0 && strcmp(g_model, "local") == 0, "the answer: %s", out);
  CHECK(tj_num(tj_get(tj_get(r, "usage"), "total_tokens")) == 5, "usage derived");
  tj_free(r);
  tn_string_free(out);

  g_fail = 1;
  g_calls = 0;
  CHECK(tn_client_run(c, NULL, "{\"prompt\":\"hi\"}", NULL, &out, &err) == TN_ERR_HOST && err &&
            strstr(err, "my model blew up"),
        "a failure ends the run: %s", err ? err : "");
  CHECK(g_calls == 1, "once (%d)", g_calls);
  tn_string_free(err);
  err = NULL;
  tn_client_free(c);

  c = make("{\"model\":\"m\",\"base_url\":\"http://x\"}", 0, &st, &err);
  CHECK(st == TN_ERR_INVALID_ARGUMENT && !c && err && strstr(err, "no wire to configure"), "base_url refused: %s",
        err ? err : "");
  tn_string_free(err);
  err = NULL;
  c = make("{\"model\":\"m\",\"retries\":2}", 0, &st, &err);
  CHECK(st == TN_ERR_INVALID_ARGUMENT && !c && err && strstr(err, "nothing is retried"), "retries refused: %s",
        err ? err : "");
  tn_string_free(err);
  err = NULL;
  c = make("{\"model\":\"m\"}", 1, &st, &err);
  CHECK(st == TN_ERR_INVALID_ARGUMENT && !c && err && strstr(err, "`transport`"), "a transport refused: %s",
        err ? err : "");
  tn_string_free(err);
  return summary();
}
