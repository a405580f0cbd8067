//! The Node.js binding of toolnexus: the JS port's API (`createClient`, `createToolkit`,
//! `defineTool`, the Request/Answer helpers) over the Rust engine.
//!
//! The engine does the work; this crate converts values at the edge, wraps each JS callback
//! (tool `run`, `waitFor`, hooks, `onError`, `fetch`) as the engine trait it plays through a
//! weak `ThreadsafeFunction` (`call.rs`), settles runs as Promises that keep the process alive
//! only while the engine works (`keepalive.rs`), and maps errors once (`error.rs`). `index.js`
//! loads the addon, registers the error classes of `errors.js`, and is the package's CommonJS
//! entry; `index.mjs` is the ESM one.
#![deny(clippy::all)]
// The JS API is documented in index.d.ts and the README.
#![allow(missing_docs)]
// napi's macros register nothing under cfg(test), so `clippy --all-targets` sees the exports unused.
#![cfg_attr(test, allow(dead_code))]

mod answer;
mod args;
mod call;
mod callbacks;
mod client;
mod content;
mod convert;
mod error;
mod fetch;
mod keepalive;
mod lazy;
mod mcp;
mod memory;
mod metrics;
mod options;
mod sources;
mod tool;
mod toolkit;
mod translate;
mod warning;

use napi_derive::napi;

/// mimalloc instead of glibc malloc: values are built on the JS thread and dropped on tokio's
/// workers (and back), a pattern glibc's per-thread arenas handle slowly (measured on the
/// history-200 bench: malloc, free and consolidation were a fifth of the addon's profile).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `arena_eager_commit` (index 4 of mimalloc.h's `mi_option_e`, mimalloc 3), whose
/// default is 2: commit each arena up front on systems that overcommit, as Linux does.
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Arena memory committed as it is used, not up front: up front, with transparent huge pages
/// on (madvise), the first touch of an arena made a Node process 4 MB bigger at load and
/// 7-13 MB bigger after a few thousand runs, for no measured speed (docs/benchmarks.md, peak
/// RSS; the same as `MIMALLOC_ARENA_EAGER_COMMIT=0`). Set when the addon is loaded, before
/// its first allocation. Only the default is changed: a host that set another value
/// (`MIMALLOC_ARENA_EAGER_COMMIT=1` commits up front) keeps it, and so would a mimalloc that
/// numbers its options otherwise.
#[ctor::ctor(unsafe)]
fn commit_arenas_lazily() {
    // SAFETY: plain calls into mimalloc's option table, before any thread of ours exists.
    unsafe {
        if libmimalloc_sys::mi_option_get(MI_OPTION_ARENA_EAGER_COMMIT) == 2 {
            libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
        }
    }
}

/// The engine version.
#[napi]
pub fn version() -> String {
    engine::VERSION.to_string()
}
