/* The C side of the Go binding: fixed trampolines that carry cgo.Handles (as uintptr_t)
 * between libtoolnexus callbacks and the exported Go functions in callbacks.go. Go never
 * turns an integer into a pointer: the casts happen here.
 *
 * One engine client per Client and one engine toolkit per Toolkit serve every run: each run
 * (or Toolkit.Execute) passes a handle to its own scope as its user_data, and every
 * trampoline hands the Go side the scope of the run its token belongs to
 * (tn_token_run_data), beside the toolkit's own handle for tools. */
#ifndef TOOLNEXUS_GO_BRIDGE_H
#define TOOLNEXUS_GO_BRIDGE_H

#include <stdint.h>
#include <stdlib.h>
#include "toolnexus.h"

/* Which client callbacks tn_go_client_new wires (hooks are wired by a non-zero hook_mask). */
#define TN_GO_WAIT_FOR 1u
#define TN_GO_TRANSPORT 2u
#define TN_GO_ON_ERROR 4u
#define TN_GO_BODY_TRANSFORM 16u
/* The generate trampoline of tn_go_client_new_in_process. */
#define TN_GO_GENERATE 32u
/* Which toolkit callbacks tn_go_toolkit_create wires, beside the tool trampoline: TN_GO_WAIT_FOR
 * (MCP elicitation) and this one. */
#define TN_GO_SKILL_PROVIDER 8u

/* tn_toolkit_new with the Go tool trampoline; `tools` is a handle to the toolkit's tools,
 * released through goRelease when the engine is done with them. */
int32_t tn_go_toolkit_new(const char *tools_json, uintptr_t tools, tn_toolkit **out, char **error_out);

/* tn_toolkit_create_with the Go tool trampoline, as tn_go_toolkit_new, and the toolkit
 * trampolines named in `wired` (TN_GO_WAIT_FOR, TN_GO_SKILL_PROVIDER), all handed `tools`;
 * `cancel` may be NULL. */
int32_t tn_go_toolkit_create(const char *spec_json, uintptr_t tools, uint32_t wired, const tn_cancel *cancel,
                             tn_toolkit **out, char **error_out);

/* tn_client_new with the Go trampolines named in `wired` and, when hook_mask is not 0, the
 * hook trampoline. Its callbacks serve the run of their token; only metric events, which
 * belong to the client, go to `on_metric` (a handle to its OnMetric, released through
 * goRelease with the client; 0: no sink). Warnings always go to goOnWarning. */
int32_t tn_go_client_new(const char *options_json, uint32_t wired, uint32_t hook_mask, uintptr_t on_metric,
                         tn_client **out, char **error_out);

/* tn_client_new_in_process: as tn_go_client_new, the model being the generate trampoline. */
int32_t tn_go_client_new_in_process(const char *options_json, uint32_t wired, uint32_t hook_mask, uintptr_t on_metric,
                                    tn_client **out, char **error_out);

/* tn_client_run_async with `scope` as the run's user_data; done hands the outcome to
 * goRunDone(scope, ...). */
int32_t tn_go_run_async(const tn_client *client, const tn_toolkit *toolkit, const char *input_json,
                        const tn_cancel *cancel, uintptr_t scope, char **error_out);

/* tn_client_run_here, as tn_go_run_async but driven on the calling thread: goRunDone has had
 * the outcome when it returns TN_OK. */
int32_t tn_go_run_here(const tn_client *client, const tn_toolkit *toolkit, const char *input_json,
                       const tn_cancel *cancel, uintptr_t scope, char **error_out);

/* tn_client_stream_async, as tn_go_run_async; the run's events go to goStreamEvent(scope, ...). */
int32_t tn_go_stream_async(const tn_client *client, const tn_toolkit *toolkit, const char *input_json,
                           const tn_cancel *cancel, uintptr_t scope, char **error_out);

/* tn_client_stream_here, as tn_go_run_here for a streamed run. */
int32_t tn_go_stream_here(const tn_client *client, const tn_toolkit *toolkit, const char *input_json,
                          const tn_cancel *cancel, uintptr_t scope, char **error_out);

/* tn_client_translate_async, as tn_go_run_async. */
int32_t tn_go_translate_async(const tn_client *client, const tn_toolkit *toolkit, const char *request_json,
                              const tn_cancel *cancel, uintptr_t scope, char **error_out);

/* tn_toolkit_execute_call_async, as tn_go_run_async. */
int32_t tn_go_execute_async(const tn_toolkit *toolkit, const char *call_json, const tn_cancel *cancel,
                            uintptr_t scope, char **error_out);

/* tn_store_new_host with the Go store trampoline; `store` is a handle to the host's
 * ConversationStore, released through goRelease when the engine is done with it. */
int32_t tn_go_store_new_host(uintptr_t store, tn_store **out, char **error_out);

#endif
