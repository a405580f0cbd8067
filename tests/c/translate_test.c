/* Translation (ABI version 3): one OpenAI-shaped turn through an Anthropic-style provider,
 * blocking and async; bad requests are errors before anything is sent. Run under valgrind
 * and ASan/UBSan by `make c-tests`. */
#include "support.h" /* first: it sets the feature macros */

static const char *TOOL_USE =
    "{\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{\"city\":\"Chennai\"}}],"
    "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}";

static const char *REQUEST =
    "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"weather?\"}],"
    "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\"}}}],"
    "\"tool_choice\":\"required\"}";

static void check_result(const char *json, const char *what) {
  tj *r = tj_parse(json);
  tj *call = tj_at(tj_get(r, "tool_calls"), 0);
  CHECK(r && strcmp(jstr(r, "finish_reason"), "tool_calls") == 0 && call &&
            strcmp(jstr(call, "id"), "toolu_1") == 0 && strcmp(jstr(call, "arguments"), "{\"city\":\"Chennai\"}") == 0,
        "%s: the tool_use is an OpenAI call: %s", what, json);
  CHECK(tj_num(tj_get(tj_get(r, "usage"), "total_tokens")) == 15, "%s: usage", what);
  tj_free(r);
}

int main(void) {
  const char *replies[] = {TOOL_USE, TOOL_USE};
  script_t s;
  script_init(&s, replies, 2);
  tn_callbacks cb = {0};
  cb.user_data = &s;
  cb.transport = script_transport;
  tn_client *c = NULL;
  CHECK(tn_client_new("{\"base_url\":\"http://model.invalid\",\"style\":\"anthropic\",\"model\":\"m\",\"api_key\":\"k\"}",
                      &cb, &c, NULL) == TN_OK,
        "tn_client_new");

  char *out = NULL, *err = NULL;
  CHECK(tn_client_translate(c, NULL, REQUEST, NULL, &out, &err) == TN_OK, "translate: %s", err ? err : "");
  check_result(out, "blocking");
  tn_string_free(out);
  tj *sent = s.last_request;
  CHECK(sent && strcmp(jstr(sent, "system"), "Be brief.") == 0 &&
            strcmp(jstr(tj_get(sent, "tool_choice"), "type"), "any") == 0 &&
            tj_get(tj_at(tj_get(sent, "tools"), 0), "input_schema") != NULL,
        "the request went out in Anthropic's shape");

  waiter_t w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL};
  CHECK(tn_client_translate_async(c, NULL, REQUEST, NULL, on_done, &w, NULL) == TN_OK, "async start");
  wait_done(&w);
  CHECK(w.status == TN_OK, "async status %d", w.status);
  check_result(w.json, "async");
  free(w.json);

  int requests = s.requests;
  CHECK(tn_client_translate(c, NULL, "{\"tools\":[]}", NULL, &out, &err) == TN_ERR_INVALID_ARGUMENT && err &&
            strstr(err, "messages") && strstr(err, "is required"),
        "a request without messages: %s", err ? err : "");
  tn_string_free(err);
  err = NULL;
  CHECK(tn_client_translate(c, NULL, "not json", NULL, &out, &err) == TN_ERR_INVALID_ARGUMENT, "not JSON");
  tn_string_free(err);
  CHECK(s.requests == requests, "nothing was sent for them");
  tn_client_free(c);
  script_done(&s);
  return summary();
}
