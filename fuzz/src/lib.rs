//! What the fuzz targets share: the properties a parsed reply must have, and the C-string
//! plumbing of the C ABI targets. A target panics when a property fails; libFuzzer records
//! the input as a crash.

pub mod abi;
pub mod reply;
pub mod scenario;
pub mod stream;
