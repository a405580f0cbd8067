/* Content parts (ABI version 4): parts made by tn_part_build from a path, bytes, a read file and
 * URLs, a prompt of parts, a tool's parts moved into one user message for an OpenAI-style
 * provider, a part over max_part_bytes refused before any request, and a placeholder warned
 * about once through on_warning. Run under valgrind and ASan/UBSan by
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

/* tn_part_build's status for spec and bytes; on TN_OK *part is the part, else *err the error. */
static int build(const char *spec, const char *bytes, size_t len, tj **part, char **err) {
  char *out = NULL;
  *err = NULL;
  int st = tn_part_build(spec, (const uint8_t *)bytes, len, &out, err);
  *part = st == TN_OK ? tj_parse(out) : NULL;
  tn_string_free(out);
  return st;
}

static void part_builds(void) {
  tj *p = NULL;
  char *err = NULL;
  char path[] = "/tmp/tn_parts_XXXXXX.png";
  int fd = mkstemps(path, 4);
  static const char png[] = {(char)0x89, 'P', 'N', 'G'};
  CHECK(fd >= 0 && write(fd, png, sizeof png) == (ssize_t)sizeof png, "fixture written");
  close(fd);

  char spec[256];
  snprintf(spec, sizeof spec, "{\"source\":\"%s\"}", path);
  CHECK(build(spec, NULL, 0, &p, &err) == TN_OK && strcmp(jstr(p, "type"), "image") == 0 &&
            strcmp(jstr(p, "mimeType"), "image/png") == 0 && strcmp(jstr(p, "data"), "iVBORw==") == 0 &&
            strcmp(jstr(p, "name"), path + 5) == 0 && tj_get(p, "url") == NULL,
        "a path is read and never kept: %s", err ? err : "");
  tj_free(p);
  unlink(path);
  CHECK(build(spec, NULL, 0, &p, &err) == TN_ERR_CONTENT_PART && strstr(err, "cannot read"), "a missing file: %s",
        err ? err : "");
  tn_string_free(err);

  CHECK(build("{\"mimeType\":\"audio/ogg\"}", "foo", 3, &p, &err) == TN_OK && strcmp(jstr(p, "type"), "audio") == 0 &&
            strcmp(jstr(p, "data"), "Zm9v") == 0 && tj_get(p, "name") == NULL,
        "bytes, typed by their mime: %s", err ? err : "");
  tj_free(p);
  CHECK(build("{\"file_name\":\"/x/report.pdf\"}", "foo", 3, &p, &err) == TN_OK &&
            strcmp(jstr(p, "type"), "file") == 0 && strcmp(jstr(p, "mimeType"), "application/pdf") == 0 &&
            strcmp(jstr(p, "name"), "report.pdf") == 0,
        "bytes read from a named file: %s", err ? err : "");
  tj_free(p);
  CHECK(build("{\"type\":\"image\",\"source\":\"data:image/gif;base64,Zm9v\",\"name\":\"g\"}", NULL, 0, &p, &err) ==
                TN_OK &&
            strcmp(jstr(p, "mimeType"), "image/gif") == 0 && strcmp(jstr(p, "data"), "Zm9v") == 0 &&
            strcmp(jstr(p, "name"), "g") == 0,
        "a data: URL is parsed: %s", err ? err : "");
  tj_free(p);
  CHECK(build("{\"source\":\"https://x.test/a.pdf\"}", NULL, 0, &p, &err) == TN_OK &&
            strcmp(jstr(p, "url"), "https://x.test/a.pdf") == 0 && tj_get(p, "data") == NULL,
        "an https URL is kept: %s", err ? err : "");
  tj_free(p);

  struct {
    const char *spec, *bytes;
    size_t len;
    int status;
    const char *message;
  } refused[] = {
      {"{\"mime_type\":\"image/png\",\"max_part_bytes\":2}", "foo", 3, TN_ERR_CONTENT_PART,
       "content part is 3 decoded bytes, over the maxPartBytes limit of 2"},
      {"{}", "foo", 3, TN_ERR_CONTENT_PART, "mime_type is required when building a part from bytes"},
      {"{\"source\":\"thing.xyz\"}", NULL, 0, TN_ERR_CONTENT_PART, "unknown file extension \".xyz\""},
      {"{\"source\":\"data:image/png,abc\"}", NULL, 0, TN_ERR_CONTENT_PART, "only base64 data: URLs are supported"},
      {"{\"type\":\"video\",\"mime_type\":\"video/mp4\"}", "x", 1, TN_ERR_CONTENT_PART,
       "unknown content part type \"video\""},
      {"{\"source\":\"a.png\"}", "x", 1, TN_ERR_INVALID_ARGUMENT, "not both"},
      {"{\"mime\":\"image/png\"}", "x", 1, TN_ERR_INVALID_ARGUMENT, "unknown part key \"mime\""},
      {"[]", NULL, 0, TN_ERR_INVALID_ARGUMENT, "part must be an object"},
      {"{\"mime_type\":\"image/png\"}", NULL, 4, TN_ERR_INVALID_ARGUMENT, "bytes is NULL but bytes_len is not 0"},
      {"not json", NULL, 0, TN_ERR_INVALID_ARGUMENT, "spec_json is not valid JSON"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    int st = build(refused[i].spec, refused[i].bytes, refused[i].len, &p, &err);
    tj *e = tj_parse(err ? err : "{}");
    const char *message = jstr(e, "message");
    CHECK(st == refused[i].status && message && strstr(message, refused[i].message), "%s: status %d, %s",
          refused[i].spec, st, err ? err : "");
    tj_free(e);
    tn_string_free(err);
  }
  CHECK(tn_part_build("{\"mime_type\":\"image/png\"}", (const uint8_t *)"x", 1, NULL, &err) == TN_ERR_INVALID_ARGUMENT, "part_out NULL");
  tn_string_free(err);
  CHECK(tn_part_build(NULL, NULL, 0, NULL, NULL) == TN_ERR_INVALID_ARGUMENT, "spec_json NULL, no error_out");
}

/* What the ports ask of a part, answered by the engine: checks, a description, the provider's
 * block; and a host that knows it holds a path or a URL says so. */
static void part_questions(void) {
  char *err = NULL, *out = NULL;
  const char *image = "{\"type\":\"image\",\"mimeType\":\"image/png\",\"data\":\"" PNG "\"}";
  CHECK(tn_part_validate(image, -1, &err) == TN_OK, "a valid part: %s", err ? err : "");
  CHECK(tn_part_validate(image, 10, &err) == TN_ERR_CONTENT_PART && strstr(err, "over the maxPartBytes limit of 10"),
        "over the limit: %s", err ? err : "");
  tn_string_free(err);
  err = NULL;
  CHECK(tn_part_validate("{\"type\":\"image\",\"mimeType\":\"image/png\"}", -1, &err) == TN_ERR_CONTENT_PART &&
            strstr(err, "neither data nor url"),
        "neither: %s", err ? err : "");
  tn_string_free(err);
  err = NULL;
  CHECK(tn_part_inspect(image, &out, &err) == TN_OK, "inspect: %s", err ? err : "");
  tj *info = tj_parse(out);
  CHECK(strcmp(jstr(info, "description"), "image (image/png, 82 bytes)") == 0 && tj_num(tj_get(info, "bytes")) == 82 &&
            tj_num(tj_get(info, "estimated_tokens")) == 85 &&
            strcmp(jstr(info, "placeholder"), "[unsupported image part (image/png, 82 bytes)]") == 0 &&
            strstr(out, PNG) == NULL,
        "the part described, never its data: %s", out);
  tj_free(info);
  tn_string_free(out);
  CHECK(tn_part_encode(image, "anthropic", &out, &err) == TN_OK && strstr(out, "\"media_type\":\"image/png\""),
        "an Anthropic block: %s", out ? out : err);
  tn_string_free(out);
  out = NULL;
  const char *audio = "{\"type\":\"audio\",\"mimeType\":\"audio/mpeg\",\"data\":\"AA==\"}";
  CHECK(tn_part_encode(audio, "anthropic", &out, &err) == TN_ERR_UNSUPPORTED_PART && out == NULL,
        "Anthropic has no audio block: %s", err ? err : "");
  tn_string_free(err);
  err = NULL;
  CHECK(tn_part_encode(image, "gemini", &out, &err) == TN_ERR_INVALID_ARGUMENT, "an unknown style");
  tn_string_free(err);
  err = NULL;

  tj *part = NULL;
  CHECK(build("{\"url\":\"https://x.test/a.png\"}", NULL, 0, &part, &err) == TN_OK &&
            strcmp(jstr(part, "url"), "https://x.test/a.png") == 0,
        "a URL kept: %s", err ? err : "");
  tj_free(part);
  part = NULL;
  CHECK(build("{\"path\":\"https://x.test/a.png\"}", NULL, 0, &part, &err) == TN_ERR_CONTENT_PART,
        "a path is read, never fetched: %s", err ? err : "");
  tn_string_free(err);
  err = NULL;
  CHECK(build("{\"path\":\"a.png\",\"url\":\"https://x.test/a.png\"}", NULL, 0, &part, &err) ==
            TN_ERR_INVALID_ARGUMENT,
        "two sources");
  tn_string_free(err);
}

int main(void) {
  part_builds();
  part_questions();
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
