/* A toolkit from its sources through the C ABI: the built-ins on by default and confined to a
 * root, an HTTP tool declared, a skill folder and its prompt, an MCP server that cannot start
 * isolated as `failed`, close, and MCP serve (the info, the gated built-ins, the refusal off
 * loopback without a token). Run from the repository root under valgrind and ASan/UBSan by
 * `make c-tests`. */
#include "support.h" /* first: it sets the feature macros */

static tn_toolkit *create(const char *spec) {
  tn_toolkit *tk = NULL;
  char *err = NULL;
  int rc = tn_toolkit_create(spec, NULL, NULL, NULL, NULL, &tk, &err);
  CHECK(rc == TN_OK, "tn_toolkit_create(%s): %s", spec, err ? err : "");
  tn_string_free(err);
  return tk;
}

static int tool_count(tn_toolkit *tk) {
  char *decls = NULL;
  CHECK(tn_toolkit_declarations(tk, "anthropic", &decls, NULL) == TN_OK, "declarations");
  tj *v = tj_parse(decls);
  int n = tj_size(v);
  tj_free(v);
  tn_string_free(decls);
  return n;
}

/* Runs a tool; returns its output (caller frees) and sets *is_error. */
static char *execute(tn_toolkit *tk, const char *name, const char *args, int *is_error) {
  char *result = NULL;
  CHECK(tn_toolkit_execute(tk, name, args, &result, NULL) == TN_OK, "execute %s", name);
  tj *r = tj_parse(result);
  char *out = strdup(jstr(r, "output") ? jstr(r, "output") : "");
  *is_error = tj_is(tj_get(r, "is_error"), TJ_TRUE);
  tj_free(r);
  tn_string_free(result);
  return out;
}

static void test_builtins_by_default_and_confined(void) {
  tn_toolkit *tk = create("{}");
  CHECK(tool_count(tk) == 10, "the ten built-ins by default");
  tn_toolkit_free(tk);
  tk = create("{\"builtins\": false}");
  CHECK(tool_count(tk) == 0, "builtins false: none");
  tn_toolkit_free(tk);

  char root[] = "/tmp/tn-sources-XXXXXX";
  CHECK(mkdtemp(root) != NULL, "mkdtemp");
  char spec[512];
  snprintf(spec, sizeof spec,
           "{\"builtins\": {\"root\": \"%s\", \"tools\": {\"bash\": false}}, \"tools\": [{\"http\": {\"name\": "
           "\"get_post\", \"description\": \"d\", \"method\": \"GET\", \"url\": \"http://127.0.0.1:9/{id}\"}}]}",
           root);
  tk = create(spec);
  CHECK(tool_count(tk) == 10, "nine built-ins and the HTTP tool");
  char *tools = NULL;
  CHECK(tn_toolkit_tools(tk, &tools, NULL) == TN_OK, "tn_toolkit_tools");
  tj *t = tj_parse(tools);
  CHECK(tj_size(t) == 10 && strcmp(jstr(tj_at(t, 0), "name"), "read") == 0 &&
            strcmp(jstr(tj_at(t, 0), "source"), "builtin") == 0 && strcmp(jstr(tj_at(t, 9), "source"), "http") == 0 &&
            tj_is(tj_get(tj_at(t, 9), "host_ref"), TJ_NULL),
        "each tool with its source: %s", tools);
  tj_free(t);
  tn_string_free(tools);
  int is_error = 0;
  char *out = execute(tk, "write", "{\"path\": \"a.txt\", \"content\": \"hello\"}", &is_error);
  CHECK(!is_error, "write inside the root: %s", out);
  free(out);
  out = execute(tk, "read", "{\"path\": \"a.txt\"}", &is_error);
  CHECK(!is_error && strstr(out, "hello") != NULL, "read it back: %s", out);
  free(out);
  out = execute(tk, "read", "{\"path\": \"../../etc/passwd\"}", &is_error);
  CHECK(is_error && strstr(out, "outside") != NULL, "an escape is refused: %s", out);
  free(out);
  char path[600];
  snprintf(path, sizeof path, "%s/a.txt", root);
  unlink(path);
  rmdir(root);
  tn_toolkit_free(tk);
}

static void test_skills_and_prompt(void) {
  tn_toolkit *tk = create("{\"skills_dir\": \"core/tests/fixtures/skills/hello-world\", \"builtins\": false}");
  char *prompt = NULL;
  CHECK(tn_toolkit_skills_prompt(tk, &prompt, NULL) == TN_OK, "skills prompt");
  CHECK(prompt && strstr(prompt, "hello-world") != NULL, "the catalog names the skill: %s", prompt);
  tn_string_free(prompt);
  int is_error = 0;
  char *out = execute(tk, "skill", "{\"name\": \"hello-world\"}", &is_error);
  CHECK(!is_error && strstr(out, "# Hello World") != NULL, "the skill tool loads it: %s", out);
  free(out);
  tn_toolkit_free(tk);
}

static void test_a_failed_mcp_server_is_isolated(void) {
  tn_toolkit *tk = create(
      "{\"builtins\": false, \"mcp_config\": {\"mcpServers\": {\"gone\": {\"command\": "
      "[\"/nonexistent/mcp-server\"]}, \"off\": {\"command\": [\"x\"], \"disabled\": true}}}}");
  char *status = NULL, *warnings = NULL;
  CHECK(tn_toolkit_mcp_status(tk, &status, NULL) == TN_OK, "mcp status");
  tj *s = tj_parse(status);
  CHECK(jstr(s, "gone") && strcmp(jstr(s, "gone"), "failed") == 0, "failed: %s", status);
  CHECK(jstr(s, "off") && strcmp(jstr(s, "off"), "disabled") == 0, "disabled: %s", status);
  tj_free(s);
  tn_string_free(status);
  CHECK(tn_toolkit_warnings(tk, &warnings, NULL) == TN_OK && strstr(warnings, "gone") != NULL,
        "a warning says why: %s", warnings);
  tn_string_free(warnings);
  CHECK(tn_toolkit_close(tk, NULL) == TN_OK, "close");
  CHECK(tn_toolkit_close(tk, NULL) == TN_OK, "close again does nothing");
  tn_toolkit_free(tk);
}

static void test_bad_specs(void) {
  tn_toolkit *tk = NULL;
  char *err = NULL;
  CHECK(tn_toolkit_create("{\"skils_dir\": \"x\"}", NULL, NULL, NULL, NULL, &tk, &err) == TN_ERR_INVALID_ARGUMENT,
        "an unknown option is refused");
  CHECK(err && strstr(err, "skils_dir") != NULL, "naming it: %s", err);
  tn_string_free(err);
  err = NULL;
  CHECK(tn_toolkit_create("[]", NULL, NULL, NULL, NULL, &tk, &err) == TN_ERR_INVALID_ARGUMENT, "not an object");
  tn_string_free(err);
  err = NULL;
  CHECK(tn_toolkit_create("{\"tools\": [{\"name\": \"t\"}]}", NULL, NULL, NULL, NULL, &tk, &err) ==
            TN_ERR_INVALID_ARGUMENT,
        "a host tool without tool_fn is refused");
  tn_string_free(err);
  CHECK(tk == NULL, "no toolkit on failure");
}

static void test_mcp_serve(void) {
  tn_toolkit *tk = create("{}");
  tn_mcp_server *server = NULL;
  char *err = NULL;
  CHECK(tn_mcp_serve(tk, NULL, NULL, &server, &err) == TN_ERR_INVALID_ARGUMENT, "no options and no profile");
  tn_string_free(err);
  err = NULL;
  CHECK(tn_mcp_serve(tk, "{}", NULL, &server, &err) == TN_OK, "serve with the defaults: %s", err ? err : "");
  char *info = NULL;
  CHECK(tn_mcp_server_info(server, &info, NULL) == TN_OK, "info");
  tj *i = tj_parse(info);
  CHECK(jstr(i, "url") && strncmp(jstr(i, "url"), "http://127.0.0.1:", 17) == 0, "loopback: %s", info);
  int has_bash = 0, has_question = 0;
  tj *tools = tj_get(i, "tools");
  for (int k = 0; k < tj_size(tools); k++) {
    has_bash |= strcmp(tj_str(tj_at(tools, k)), "bash") == 0;
    has_question |= strcmp(tj_str(tj_at(tools, k)), "question") == 0;
  }
  CHECK(!has_bash && has_question, "bash left out unless named: %s", info);
  tj_free(i);
  tn_string_free(info);
  tn_mcp_server_free(server);
  tn_mcp_server_free(NULL);

  server = NULL;
  CHECK(tn_mcp_serve(tk, "{}", "0.0.0.0:0", &server, &err) == TN_ERR_INVALID_ARGUMENT,
        "off loopback without a token is refused");
  CHECK(err && strstr(err, "token") != NULL, "saying why: %s", err);
  tn_string_free(err);
  tn_toolkit_free(tk);

  /* Without options, the config's mcpServer block. */
  tk = create("{\"builtins\": false, \"mcp_config\": {\"mcpServer\": {\"name\": \"from-config\", \"tools\": []}}}");
  server = NULL;
  CHECK(tn_mcp_serve(tk, NULL, "127.0.0.1:0", &server, NULL) == TN_OK, "serve the config's profile");
  info = NULL;
  CHECK(tn_mcp_server_info(server, &info, NULL) == TN_OK && strstr(info, "\"tools\":[]"), "its tools: %s", info);
  tn_string_free(info);
  tn_mcp_server_free(server);
  tn_toolkit_free(tk);
}

/* A skill provider answering on its own thread; the second call fails. */
static int g_provider_calls;
static void *provide_later(void *arg) {
  uint64_t token = *(uint64_t *)arg;
  free(arg);
  usleep(20000);
  tn_complete(token, TN_OK, "[{\"name\": \"provided\", \"description\": \"From C.\", \"content\": \"Do it.\"}]", NULL);
  return NULL;
}
static void provider(void *user_data, const char *request_json, uint64_t token) {
  (void)user_data;
  (void)request_json;
  if (g_provider_calls++ > 0) {
    tn_complete(token, TN_ERR_HOST, "no skills today", NULL);
    return;
  }
  uint64_t *t = malloc(sizeof *t);
  *t = token;
  pthread_t th;
  pthread_create(&th, NULL, provide_later, t);
  pthread_detach(th);
}

static void test_skill_provider(void) {
  tn_toolkit_callbacks cb = {0};
  cb.skill_provider = provider;
  tn_toolkit *tk = NULL;
  char *err = NULL;
  CHECK(tn_toolkit_create_with("{\"builtins\": false}", &cb, NULL, &tk, &err) == TN_OK, "create_with: %s", err ? err : "");
  char *prompt = NULL;
  CHECK(tn_toolkit_skills_prompt(tk, &prompt, NULL) == TN_OK && strstr(prompt, "provided"), "the provided skill: %s", prompt);
  tn_string_free(prompt);
  tn_toolkit_free(tk);
  tk = NULL;
  CHECK(tn_toolkit_create_with("{\"builtins\": false}", &cb, NULL, &tk, NULL) == TN_OK, "a failing provider");
  char *warnings = NULL;
  CHECK(tn_toolkit_warnings(tk, &warnings, NULL) == TN_OK && strstr(warnings, "no skills today"),
        "is a warning: %s", warnings);
  tn_string_free(warnings);
  tn_toolkit_free(tk);
  CHECK(tn_toolkit_create_with("{}", NULL, NULL, NULL, NULL) == TN_ERR_INVALID_ARGUMENT, "a NULL out is refused");
}

/* Checks an entry's status (its out-params written by then) and returns its out string. */
static char *out_of(int rc, char **out, char **err, const char *what) {
  CHECK(rc == TN_OK, "%s: %s", what, *err ? *err : "");
  tn_string_free(*err);
  *err = NULL;
  return *out;
}

static void test_source_parts(void) {
  char *out = NULL, *err = NULL;
  out = out_of(tn_skills_list("{\"dirs\": \"core/tests/fixtures/skills\"}", &out, &err), &out, &err, "tn_skills_list");
  CHECK(out && strstr(out, "\"hello-world\"") && strstr(out, "\"skipped\""), "skills and refusals: %.200s", out);
  tn_string_free(out);
  out = NULL;
  err = NULL;
  CHECK(tn_skills_list("{\"skills_dir\": \"x\"}", &out, &err) == TN_ERR_INVALID_ARGUMENT && err &&
            strstr(err, "skills_dir"),
        "upstream's option names only: %s", err);
  tn_string_free(err);
  err = NULL;

  out = out_of(tn_mcp_config_servers("{\"mcpServers\": {\"a\": {\"command\": [\"x\"]}}}", 0, &out, &err), &out, &err,
               "tn_mcp_config_servers");
  CHECK(out && strcmp(out, "{\"a\":{\"command\":[\"x\"]}}") == 0, "the entries as written: %s", out);
  tn_string_free(out);
  out = NULL;
  out = out_of(tn_mcp_list_tools("{\"gone\": {\"command\": [\"/nonexistent/mcp\"]}}", 0, NULL, &out, &err), &out, &err,
               "tn_mcp_list_tools");
  CHECK(out && strstr(out, "\"gone\":\"failed\""), "a failed server listed as failed: %s", out);
  tn_string_free(out);
  out = NULL;

  setenv("TN_C_TEST_TOKEN", "tok-123456789", 1);
  out = out_of(tn_expand_env_headers("{\"A\": \"Bearer ${TN_C_TEST_TOKEN}\", \"B\": \"x${TN_UNSET_VAR}y\"}", &out, &err),
               &out, &err, "tn_expand_env_headers");
  CHECK(out && strcmp(out, "{\"A\":\"Bearer tok-123456789\",\"B\":\"xy\"}") == 0, "expanded: %s", out);
  tn_string_free(out);
  out = NULL;

  out = out_of(tn_elicitation_request("{\"mode\": \"url\", \"url\": \"https://x/login\", \"message\": \"Sign in\"}",
                                      &out, &err),
               &out, &err, "tn_elicitation_request");
  CHECK(out && strstr(out, "\"kind\":\"authorization\""), "a URL elicitation is an authorization: %s", out);
  tn_string_free(out);
  out = NULL;
  out = out_of(tn_elicit_result("null", &out, &err), &out, &err, "tn_elicit_result");
  CHECK(out && strcmp(out, "{\"action\":\"cancel\"}") == 0, "no answer cancels: %s", out);
  tn_string_free(out);
  out = NULL;

  out = out_of(tn_skill_texts(&out, &err), &out, &err, "tn_skill_texts");
  CHECK(out && strstr(out, "\"preamble\"") && strstr(out, "\"tool_description\""), "the skill texts: %.100s", out);
  tn_string_free(out);
  out = NULL;

  tn_toolkit *tk = create("{\"skills_dir\": \"core/tests/fixtures/skills/hello-world\"}");
  out = out_of(tn_toolkit_skills(tk, &out, &err), &out, &err, "tn_toolkit_skills");
  CHECK(out && strstr(out, "\"origin\":\"fs\""), "the toolkit's skills: %.200s", out);
  tn_string_free(out);
  out = NULL;
  out = out_of(tn_mcp_exposed_tools(tk, "null", &out, &err), &out, &err, "tn_mcp_exposed_tools");
  CHECK(out && !strstr(out, "\"bash\"") && strstr(out, "\"skill\""), "the default exposure: %s", out);
  tn_string_free(out);
  tn_toolkit_free(tk);
}

int main(void) {
  test_source_parts();
  test_skill_provider();
  test_builtins_by_default_and_confined();
  test_skills_and_prompt();
  test_a_failed_mcp_server_is_isolated();
  test_bad_specs();
  test_mcp_serve();
  return summary();
}
