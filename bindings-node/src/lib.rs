//! The Node.js binding of toolnexus: the JS port's API (`createClient`, `createToolkit`,
//! `defineTool`, the Request/Answer helpers) over the Rust engine.
//!
//! The engine does the work; this crate converts values at the edge, wraps each JS callback
//! (tool `run`, `waitFor`, hooks, `onError`, `fetch`) as the engine trait it plays through a
//! weak `ThreadsafeFunction` (`call.rs`), settles runs as Promises that keep the process alive
//! only while the engine works (`keepalive.rs`), and maps errors once (`error.rs`). `index.js`
//! loads the addon, registers the error classes of `errors.js` and the JS helpers the addon
//! calls (`helpers.rs`), and is the package's CommonJS entry; `index.mjs` is the ESM one.
#![deny(clippy::all)]
// The JS API is documented in index.d.ts and the README.
#![allow(missing_docs)]
// napi's macros register nothing under cfg(test), so `clippy --all-targets` sees the exports unused.
#![cfg_attr(test, allow(dead_code))]

mod answer;
mod args;
mod awaiter;
mod call;
mod callbacks;
mod client;
mod content;
mod convert;
mod error;
mod fetch;
mod helpers;
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

// The engine's mimalloc (DECISIONS.md, "The bindings allocate with mimalloc").
#[global_allocator]
static ALLOCATOR: engine::Allocator = engine::Allocator;

/// The engine version.
#[napi]
pub fn version() -> String {
    engine::VERSION.to_string()
}
