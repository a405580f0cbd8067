/* Trampolines from libtoolnexus callbacks to the exported Go functions (see bridge.h). Each
 * one looks up the run its token serves while the token is pending, on the library's thread,
 * and posts the callback to the pump (pump.h); the Go function is called right here only when
 * it cannot be posted. Metric events, warnings and finalizers stay direct calls: the first
 * two are promised synchronous, and a finalizer may run on the caller's own thread. */
#include "bridge.h"
#include "pump.h"
#include "_cgo_export.h"

static uintptr_t run_of(uint64_t token) { return (uintptr_t)tn_token_run_data(token); }

static void tool_tr(void *ud, const char *call_json, uint64_t token) {
  uintptr_t run = run_of(token);
  if (!tn_go_post(TN_GO_CB_TOOL, (uintptr_t)ud, run, call_json, NULL, token, 0))
    goTool((uintptr_t)ud, run, (char *)call_json, token);
}

static void wait_for_tr(void *ud, const char *request_json, uint64_t token) {
  (void)ud;
  uintptr_t run = run_of(token);
  if (!tn_go_post(TN_GO_CB_WAIT_FOR, 0, run, request_json, NULL, token, 0)) goWaitFor(run, (char *)request_json, token);
}

/* A toolkit's wait_for (MCP elicitation): the toolkit's handle, and the run of the token when
 * there is one, as for tools. */
static void toolkit_wait_for_tr(void *ud, const char *request_json, uint64_t token) {
  uintptr_t run = run_of(token);
  if (!tn_go_post(TN_GO_CB_TOOLKIT_WAIT_FOR, (uintptr_t)ud, run, request_json, NULL, token, 0))
    goToolkitWaitFor((uintptr_t)ud, run, (char *)request_json, token);
}

/* A toolkit's skill provider: called while the toolkit is built, by no run. */
static void skill_provider_tr(void *ud, const char *request_json, uint64_t token) {
  if (!tn_go_post(TN_GO_CB_SKILL_PROVIDER, (uintptr_t)ud, 0, request_json, NULL, token, 0))
    goSkillProvider((uintptr_t)ud, (char *)request_json, token);
}

static void transport_tr(void *ud, const char *request_json, uint64_t token) {
  (void)ud;
  uintptr_t run = run_of(token);
  if (!tn_go_post(TN_GO_CB_TRANSPORT, 0, run, request_json, NULL, token, 0)) goTransport(run, (char *)request_json, token);
}

static void hook_tr(void *ud, const char *hook, const char *event_json, uint64_t token) {
  (void)ud;
  uintptr_t run = run_of(token);
  if (!tn_go_post(TN_GO_CB_HOOK, 0, run, hook, event_json, token, 0)) goHook(run, (char *)hook, (char *)event_json, token);
}

static void on_error_tr(void *ud, const char *info_json, uint64_t token) {
  (void)ud;
  uintptr_t run = run_of(token);
  if (!tn_go_post(TN_GO_CB_ON_ERROR, 0, run, info_json, NULL, token, 0)) goOnError(run, (char *)info_json, token);
}

static void body_transform_tr(void *ud, const char *body_json, uint64_t token) {
  (void)ud;
  uintptr_t run = run_of(token);
  if (!tn_go_post(TN_GO_CB_BODY_TRANSFORM, 0, run, body_json, NULL, token, 0))
    goBodyTransform(run, (char *)body_json, token);
}

static void generate_tr(void *ud, const char *request_json, uint64_t token) {
  (void)ud;
  uintptr_t run = run_of(token);
  if (!tn_go_post(TN_GO_CB_GENERATE, 0, run, request_json, NULL, token, 0)) goGenerate(run, (char *)request_json, token);
}

/* Metric events go to the client's own handle (its OnMetric), not to a run. */
static void on_metric_tr(void *ud, const char *event_json) { goOnMetric((uintptr_t)ud, (char *)event_json); }

/* Warnings go to Go's standard logger, which belongs to no client or run. */
static void on_warning_tr(void *ud, const char *warning_json) {
  (void)ud;
  goOnWarning((char *)warning_json);
}

static void done_tr(void *ud, int32_t status, const char *json) {
  if (!tn_go_post(TN_GO_CB_DONE, 0, (uintptr_t)ud, json, NULL, 0, status)) goRunDone((uintptr_t)ud, status, (char *)json);
}

static void release_tr(void *ud) { goRelease((uintptr_t)ud); }

int32_t tn_go_toolkit_new(const char *tools_json, uintptr_t tools, tn_toolkit **out, char **error_out) {
  return tn_toolkit_new(tools_json, tool_tr, (void *)tools, release_tr, out, error_out);
}

int32_t tn_go_toolkit_create(const char *spec_json, uintptr_t tools, uint32_t wired, const tn_cancel *cancel,
                             tn_toolkit **out, char **error_out) {
  tn_toolkit_callbacks cb = {0};
  cb.user_data = (void *)tools;
  cb.free_user_data = release_tr;
  cb.tool = tool_tr;
  cb.wait_for = (wired & TN_GO_WAIT_FOR) ? toolkit_wait_for_tr : NULL;
  cb.skill_provider = (wired & TN_GO_SKILL_PROVIDER) ? skill_provider_tr : NULL;
  return tn_toolkit_create_with(spec_json, &cb, cancel, out, error_out);
}

static tn_callbacks client_callbacks(uint32_t wired, uint32_t hook_mask, uintptr_t on_metric) {
  tn_callbacks cb = {0};
  if (on_metric) {
    cb.user_data = (void *)on_metric;
    cb.free_user_data = release_tr;
    cb.on_metric = on_metric_tr;
  }
  cb.wait_for = (wired & TN_GO_WAIT_FOR) ? wait_for_tr : NULL;
  cb.transport = (wired & TN_GO_TRANSPORT) ? transport_tr : NULL;
  cb.on_error = (wired & TN_GO_ON_ERROR) ? on_error_tr : NULL;
  cb.body_transform = (wired & TN_GO_BODY_TRANSFORM) ? body_transform_tr : NULL;
  cb.hook = hook_mask ? hook_tr : NULL;
  cb.hook_mask = hook_mask;
  cb.on_warning = on_warning_tr;
  return cb;
}

int32_t tn_go_client_new(const char *options_json, uint32_t wired, uint32_t hook_mask, uintptr_t on_metric,
                         tn_client **out, char **error_out) {
  tn_callbacks cb = client_callbacks(wired, hook_mask, on_metric);
  return tn_client_new(options_json, &cb, out, error_out);
}

int32_t tn_go_client_new_in_process(const char *options_json, uint32_t wired, uint32_t hook_mask, uintptr_t on_metric,
                                    tn_client **out, char **error_out) {
  tn_callbacks cb = client_callbacks(wired, hook_mask, on_metric);
  return tn_client_new_in_process(options_json, &cb, (wired & TN_GO_GENERATE) ? generate_tr : NULL, out, error_out);
}

int32_t tn_go_run_async(const tn_client *client, const tn_toolkit *toolkit, const char *input_json,
                        const tn_cancel *cancel, uintptr_t scope, char **error_out) {
  return tn_client_run_async(client, toolkit, input_json, cancel, done_tr, (void *)scope, error_out);
}

/* The run driven on this thread, a Go thread in a cgo call: its callbacks, done included,
 * reach Go directly (see tn_go_driving). */
int32_t tn_go_run_here(const tn_client *client, const tn_toolkit *toolkit, const char *input_json,
                       const tn_cancel *cancel, uintptr_t scope, char **error_out) {
  int before = tn_go_driving(1);
  int32_t st = tn_client_run_here(client, toolkit, input_json, cancel, done_tr, (void *)scope, error_out);
  tn_go_driving(before);
  return st;
}

/* A streamed run's events: user_data is the run's own scope, as for done. */
static void stream_event_tr(void *ud, const char *event_json) {
  if (!tn_go_post(TN_GO_CB_STREAM_EVENT, 0, (uintptr_t)ud, event_json, NULL, 0, 0))
    goStreamEvent((uintptr_t)ud, (char *)event_json);
}

int32_t tn_go_stream_async(const tn_client *client, const tn_toolkit *toolkit, const char *input_json,
                           const tn_cancel *cancel, uintptr_t scope, char **error_out) {
  return tn_client_stream_async(client, toolkit, input_json, cancel, stream_event_tr, done_tr, (void *)scope, error_out);
}

/* A streamed run driven on this thread, as tn_go_run_here drives a run. */
int32_t tn_go_stream_here(const tn_client *client, const tn_toolkit *toolkit, const char *input_json,
                          const tn_cancel *cancel, uintptr_t scope, char **error_out) {
  int before = tn_go_driving(1);
  int32_t st = tn_client_stream_here(client, toolkit, input_json, cancel, stream_event_tr, done_tr, (void *)scope,
                                     error_out);
  tn_go_driving(before);
  return st;
}

int32_t tn_go_translate_async(const tn_client *client, const tn_toolkit *toolkit, const char *request_json,
                              const tn_cancel *cancel, uintptr_t scope, char **error_out) {
  return tn_client_translate_async(client, toolkit, request_json, cancel, done_tr, (void *)scope, error_out);
}

int32_t tn_go_execute_async(const tn_toolkit *toolkit, const char *call_json, const tn_cancel *cancel,
                            uintptr_t scope, char **error_out) {
  return tn_toolkit_execute_call_async(toolkit, call_json, cancel, done_tr, (void *)scope, error_out);
}

/* A host conversation store: its own handle, and the run of the token when there is one. */
static void store_tr(void *ud, const char *op, const char *request_json, uint64_t token) {
  uintptr_t run = run_of(token);
  if (!tn_go_post(TN_GO_CB_STORE, (uintptr_t)ud, run, op, request_json, token, 0))
    goStore((uintptr_t)ud, run, (char *)op, (char *)request_json, token);
}

int32_t tn_go_store_new_host(uintptr_t store, tn_store **out, char **error_out) {
  tn_store_callbacks cb = {0};
  cb.user_data = (void *)store;
  cb.free_user_data = release_tr;
  cb.store = store_tr;
  return tn_store_new_host(&cb, out, error_out);
}
