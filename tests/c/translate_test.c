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

/* A user image and a tool's image, canonical parts, go out as Anthropic blocks (the tool's inside
 * its tool_result): the engine's encoding, the C ABI only passes the JSON through. */
static const char *WITH_PARTS =
    "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"what is this\"},"
    "{\"type\":\"image\",\"mimeType\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]},"
    "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"shot\","
    "\"arguments\":\"{}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":[{\"type\":\"image\","
    "\"mimeType\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]}]}";

static void check_parts_sent(const tj *sent) {
  const tj *msgs = tj_get(sent, "messages");
  const tj *user_image = tj_at(tj_get(tj_at(msgs, 0), "content"), 1);
  const tj *result = tj_at(tj_get(tj_at(msgs, 2), "content"), 0);
  /* The tool's output text would come first; an empty one is left out (Anthropic refuses it). */
  const tj *tool_image = tj_at(tj_get(result, "content"), 0);
  CHECK(strcmp(jstr(user_image, "type"), "image") == 0 &&
            strcmp(jstr(tj_get(user_image, "source"), "media_type"), "image/png") == 0 &&
            strcmp(jstr(tj_get(user_image, "source"), "data"), "iVBORw0KGgo=") == 0,
        "the user's image is an Anthropic image block");
  CHECK(strcmp(jstr(result, "type"), "tool_result") == 0 && strcmp(jstr(tool_image, "type"), "image") == 0 &&
            strcmp(jstr(tj_get(tool_image, "source"), "type"), "base64") == 0 &&
            tj_size(tj_get(result, "content")) == 1,
        "the tool's image is inside its tool_result");
}

int main(void) {
  const char *replies[] = {TOOL_USE, TOOL_USE, TOOL_USE};
  script_t s;
  script_init(&s, replies, 3);
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

  CHECK(tn_client_translate(c, NULL, WITH_PARTS, NULL, &out, &err) == TN_OK, "translate parts: %s", err ? err : "");
  tn_string_free(out);
  check_parts_sent(s.last_request);

  int requests = s.requests;
  char *bad = NULL;
  CHECK(tn_client_translate(c, NULL,
                            "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"mimeType\":\"image/png\","
                            "\"data\":\"AA==\",\"url\":\"https://x.test/a.png\"}]}]}",
                            NULL, &out, &bad) == TN_ERR_CONTENT_PART,
        "a part with both data and url: %s", bad ? bad : "");
  tn_string_free(bad);
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
