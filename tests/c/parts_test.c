/* Content parts (ABI version 4): a prompt of parts, a tool's parts moved into one user message
 * for an OpenAI-style provider, a part over max_part_bytes refused before any request, and a
 * placeholder warned about once through on_warning. Run under valgrind and ASan/UBSan by
 * `make c-tests`. */
#include "support.h" /* first: it sets the feature macros */

#define PNG "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAGUlEQVR42mP4z8AARwyrkBAVJZClkAEVJQBm3VpRJDtqMQAAAABJRU5ErkJggg=="

static int g_warnings;
static char g_warning[256];

static void on_warning(void *user_data, const char *warning_json) {
  (void)user_data;
  g_warnings++;
  tj *w = tj_parse(warning_json);
  snprintf(g_warning, sizeof g_warning, "%s", jstr(w, "message") ? jstr(w, "message") : "?");
  tj_free(w);
}

/* Returns its name's part: an image for `shot`, audio for `mic`. */
static void tool(void *user_data, const char *call_json, uint64_t token) {
  (void)user_data;
  tj *call = tj_parse(call_json);
  int mic = strcmp(jstr(call, "name"), "mic") == 0;
  tj_free(call);
  tn_complete(token, TN_OK,
              mic ? "{\"output\":\"heard\",\"is_error\":false,\"parts\":[{\"type\":\"audio\",\"mimeType\":\"audio/mpeg\","
                    "\"data\":\"" PNG "\"}]}"
                  : "{\"output\":\"shot output\",\"is_error\":false,\"parts\":[{\"type\":\"image\",\"mimeType\":"
                    "\"image/png\",\"data\":\"" PNG "\"}]}",
              NULL);
}

static tn_client *client_on(script_t *s, const char *style, const char *extra) {
  tn_callbacks cb = {0};
  cb.user_data = s;
  cb.transport = script_transport;
  cb.on_warning = on_warning;
  char options[256];
  snprintf(options, sizeof options,
           "{\"base_url\":\"http://model.invalid/v1\",\"style\":\"%s\",\"model\":\"m\",\"api_key\":\"k\"%s}", style,
           extra);
  tn_client *c = NULL;
  tn_client_new(options, &cb, &c, NULL);
  return c;
}

static int run(tn_client *c, tn_toolkit *tk, const char *input, char **err) {
  char *out = NULL;
  int st = tn_client_run(c, tk, input, NULL, &out, err);
  tn_string_free(out);
  return st;
}

int main(void) {
  char *err = NULL;
  tn_toolkit *tk = NULL;
  tn_toolkit_new("[{\"name\":\"shot\"},{\"name\":\"mic\"}]", tool, NULL, NULL, &tk, NULL);

  /* OpenAI: the tool's image moves into one user message after the tool message. */
  const char *openai[] = {"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\","
                          "\"type\":\"function\",\"function\":{\"name\":\"shot\",\"arguments\":\"{}\"}}]},\"finish_reason\":"
                          "\"tool_calls\"}]}",
                          "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"seen\"},\"finish_reason\":\"stop\"}]}"};
  script_t s;
  script_init(&s, openai, 2);
  tn_client *c = client_on(&s, "openai", "");
  CHECK(run(c, tk, "{\"prompt\":[\"look\",{\"type\":\"image\",\"mimeType\":\"image/png\",\"data\":\"" PNG "\"}]}", &err) ==
            TN_OK,
        "a prompt of parts: %s", err ? err : "");
  tj *msgs = tj_get(s.last_request, "messages");
  int n = tj_size(msgs);
  tj *moved = tj_at(msgs, n - 1);
  CHECK(strcmp(jstr(moved, "role"), "user") == 0 &&
            strcmp(jstr(tj_at(tj_get(moved, "content"), 0), "text"), "Output of tool shot (c1):") == 0 &&
            strcmp(jstr(tj_at(tj_get(moved, "content"), 1), "type"), "image_url") == 0,
        "the image follows the tool message");
  CHECK(strcmp(jstr(tj_at(tj_get(tj_at(msgs, 0), "content"), 1), "type"), "image_url") == 0, "the prompt's image");
  tn_client_free(c);
  script_done(&s);

  /* Over max_part_bytes: a prompt's part is refused before any request. */
  script_init(&s, openai, 2);
  c = client_on(&s, "openai", ",\"max_part_bytes\":10");
  CHECK(run(c, NULL, "{\"prompt\":[{\"type\":\"image\",\"mimeType\":\"image/png\",\"data\":\"" PNG "\"}]}", &err) ==
                TN_ERR_CONTENT_PART &&
            strstr(err, "over the maxPartBytes limit of 10") && s.requests == 0,
        "oversized prompt part: %s", err ? err : "");
  tn_string_free(err);
  err = NULL;
  tn_client_free(c);
  script_done(&s);

  /* Anthropic has no audio block: a tool's audio is a placeholder, warned about once. */
  const char *anthropic[] = {
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"u1\",\"name\":\"mic\",\"input\":{}}],"
      "\"stop_reason\":\"tool_use\"}",
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"u2\",\"name\":\"mic\",\"input\":{}}],"
      "\"stop_reason\":\"tool_use\"}",
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\"}"};
  script_init(&s, anthropic, 3);
  c = client_on(&s, "anthropic", "");
  CHECK(run(c, tk, "{\"prompt\":\"listen\"}", &err) == TN_OK, "audio degrades: %s", err ? err : "");
  CHECK(g_warnings == 1 && strstr(g_warning, "sent as a text placeholder"), "warned once (%d): %s", g_warnings,
        g_warning);
  char *sent = tj_print(s.last_request);
  CHECK(strstr(sent, "[unsupported audio part (audio/mpeg, 82 bytes)]") != NULL, "the placeholder is sent");
  free(sent);
  tn_client_free(c);
  script_done(&s);

  /* on_unsupported_part "error": the same audio fails the run. */
  script_init(&s, anthropic, 3);
  c = client_on(&s, "anthropic", ",\"on_unsupported_part\":\"error\"");
  CHECK(run(c, tk, "{\"prompt\":\"listen\"}", &err) == TN_ERR_UNSUPPORTED_PART, "strict: %s", err ? err : "");
  tn_string_free(err);
  tn_client_free(c);
  script_done(&s);
  tn_toolkit_free(tk);
  return summary();
}
