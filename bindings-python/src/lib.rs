//! `toolnexus._native`: the private native module under the public `toolnexus` package.

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ENGINE_VERSION", engine::VERSION)?;
    Ok(())
}
