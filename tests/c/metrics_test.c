/* Metrics (ABI version 3): `on_metric` sees each event as JSON, in order, and
 * `tn_client_metrics` renders the client's registry as Prometheus text. Run under valgrind
 * and ASan/UBSan by `make c-tests`. */
#include "support.h" /* first: it sets the feature macros */

static const char *CALL =
    "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":"
    "\"function\",\"function\":{\"name\":\"nope\",\"arguments\":\"{}\"}}]}}],"
    "\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1}}";
static const char *TEXT = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\"}}],"
                          "\"usage\":{\"prompt_tokens\":6,\"completion_tokens\":2}}";

static char g_kinds[64];

static void on_metric(void *user_data, const char *event_json) {
  (void)user_data;
  tj *ev = tj_parse(event_json);
  const char *kind = ev ? jstr(ev, "event") : NULL;
  size_t n = strlen(g_kinds);
  if (kind && n + 2 < sizeof g_kinds) {
    g_kinds[n] = kind[0]; /* l(lm), t(ool), r(un) */
    g_kinds[n + 1] = '\0';
  }
  if (kind && strcmp(kind, "run") == 0) {
    CHECK(tj_num(tj_get(ev, "turns")) == 2 && tj_num(tj_get(ev, "tool_calls")) == 1 &&
              tj_num(tj_get(ev, "total_tokens")) == 13 && tj_get(ev, "error") == NULL,
          "the run event sums the run: %s", event_json);
  }
  tj_free(ev);
}

int main(void) {
  CHECK(tn_abi_version() == TN_ABI_VERSION && TN_ABI_VERSION >= 3, "ABI version 3 or later");
  const char *replies[] = {CALL, TEXT};
  script_t s;
  script_init(&s, replies, 2);
  tn_callbacks cb = {0};
  cb.user_data = &s;
  cb.transport = script_transport;
  cb.on_metric = on_metric;
  tn_client *c = NULL;
  CHECK(tn_client_new("{\"base_url\":\"http://model.invalid/v1\",\"style\":\"openai\",\"model\":\"m\",\"api_key\":\"k\"}",
                      &cb, &c, NULL) == TN_OK,
        "tn_client_new");
  char *text = NULL;
  CHECK(tn_client_metrics(c, &text, NULL) == TN_OK && text && strncmp(text, "# HELP ", 7) == 0 &&
            strstr(text, "\ntoolnexus_") == NULL,
        "before a run: HELP and TYPE lines only");
  tn_string_free(text);
  char *result = NULL;
  CHECK(tn_client_run(c, NULL, "{\"prompt\":\"hello\"}", NULL, &result, NULL) == TN_OK, "the run");
  tn_string_free(result);
  /* Without a toolkit nothing executes: the model's call is no tool event (its error result
   * still counts among the run's tool calls). */
  CHECK(strcmp(g_kinds, "llr") == 0, "llm, llm, run in order: %s", g_kinds);
  text = NULL;
  CHECK(tn_client_metrics(c, &text, NULL) == TN_OK, "tn_client_metrics");
  CHECK(text && strstr(text, "toolnexus_llm_requests_total{model=\"m\",status=\"ok\"} 2\n") &&
            strstr(text, "toolnexus_llm_tokens_total{type=\"prompt\"} 10\n") &&
            strstr(text, "toolnexus_tool_calls_total{") == NULL,
        "the registry counted the run:\n%s", text ? text : "");
  tn_string_free(text);
  CHECK(tn_client_metrics(NULL, &text, NULL) == TN_ERR_INVALID_ARGUMENT, "a NULL client is refused");
  tn_client_free(c);
  script_done(&s);
  return summary();
}
