//! The Node.js binding of toolnexus: the JS port's API over the Rust engine.
#![deny(clippy::all)]

use napi_derive::napi;

/// The engine version.
#[napi]
pub fn version() -> String {
    engine::VERSION.to_string()
}
