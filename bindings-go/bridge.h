/* The C side of the Go binding: fixed trampolines that carry a cgo.Handle (as uintptr_t)
 * between libtoolnexus callbacks and the exported Go functions in callbacks.go. Go never
 * turns an integer into a pointer: the casts happen here. */
#ifndef TOOLNEXUS_GO_BRIDGE_H
#define TOOLNEXUS_GO_BRIDGE_H

#include <stdint.h>
#include <stdlib.h>
#include "toolnexus.h"

/* Which client callbacks tn_go_client_new wires (hooks are wired by a non-zero hook_mask). */
#define TN_GO_WAIT_FOR 1u
#define TN_GO_TRANSPORT 2u
#define TN_GO_ON_ERROR 4u

/* tn_toolkit_new with the Go tool trampoline; handle 0 means "no tools run through it" (no
 * finalizer is registered for it). */
int32_t tn_go_toolkit_new(const char *tools_json, uintptr_t handle, tn_toolkit **out, char **error_out);

/* tn_client_new with the Go trampolines named in `wired` and, when hook_mask is not 0, the
 * hook trampoline. The handle is released through goRelease when the client is done with it
 * (handle 0: a client that is only checked; nothing to release). */
int32_t tn_go_client_new(const char *options_json, uintptr_t handle, uint32_t wired, uint32_t hook_mask,
                         tn_client **out, char **error_out);

/* tn_client_run_async whose done callback hands the outcome to goRunDone(handle, ...). */
int32_t tn_go_run_async(const tn_client *client, const tn_toolkit *toolkit, const char *input_json,
                        const tn_cancel *cancel, uintptr_t handle, char **error_out);

#endif
