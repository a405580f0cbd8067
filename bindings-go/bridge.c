/* Trampolines from libtoolnexus callbacks to the exported Go functions (see bridge.h). */
#include "bridge.h"
#include "_cgo_export.h"

static void tool_tr(void *ud, const char *call_json, uint64_t token) {
  goTool((uintptr_t)ud, (char *)call_json, token);
}

static void wait_for_tr(void *ud, const char *request_json, uint64_t token) {
  goWaitFor((uintptr_t)ud, (char *)request_json, token);
}

static void transport_tr(void *ud, const char *request_json, uint64_t token) {
  goTransport((uintptr_t)ud, (char *)request_json, token);
}

static void hook_tr(void *ud, const char *hook, const char *event_json, uint64_t token) {
  goHook((uintptr_t)ud, (char *)hook, (char *)event_json, token);
}

static void on_error_tr(void *ud, const char *info_json, uint64_t token) {
  goOnError((uintptr_t)ud, (char *)info_json, token);
}

static void done_tr(void *ud, int32_t status, const char *json) {
  goRunDone((uintptr_t)ud, status, (char *)json);
}

static void release_tr(void *ud) { goRelease((uintptr_t)ud); }

int32_t tn_go_toolkit_new(const char *tools_json, uintptr_t handle, tn_toolkit **out, char **error_out) {
  return tn_toolkit_new(tools_json, tool_tr, (void *)handle, handle ? release_tr : NULL, out, error_out);
}

int32_t tn_go_client_new(const char *options_json, uintptr_t handle, uint32_t wired, uint32_t hook_mask,
                         tn_client **out, char **error_out) {
  tn_callbacks cb = {0};
  cb.user_data = (void *)handle;
  cb.free_user_data = handle ? release_tr : NULL;
  cb.wait_for = (wired & TN_GO_WAIT_FOR) ? wait_for_tr : NULL;
  cb.transport = (wired & TN_GO_TRANSPORT) ? transport_tr : NULL;
  cb.on_error = (wired & TN_GO_ON_ERROR) ? on_error_tr : NULL;
  cb.hook = hook_mask ? hook_tr : NULL;
  cb.hook_mask = hook_mask;
  return tn_client_new(options_json, &cb, out, error_out);
}

int32_t tn_go_run_async(const tn_client *client, const tn_toolkit *toolkit, const char *input_json,
                        const tn_cancel *cancel, uintptr_t handle, char **error_out) {
  return tn_client_run_async(client, toolkit, input_json, cancel, done_tr, (void *)handle, error_out);
}
