//! Library warnings: something the host should hear about that does not stop the call (an
//! option accepted but not implemented yet, a request parameter dropped). The engine never
//! prints them; the call that noticed returns them, and each binding hands them to its
//! language's own channel (Python `warnings`, Node `process.emitWarning`, a Go logger, a C
//! callback).

use std::fmt;

/// One warning: a stable code for programs, a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Stable, snake_case: `unimplemented_option`, `ignored_request_param`, `duplicate_tool`.
    pub code: &'static str,
    /// What happened and what the engine did about it. Never holds a secret.
    pub message: String,
}

impl Warning {
    /// An option that is accepted so code written for upstream runs, but does nothing yet.
    pub fn unimplemented_option(name: &str) -> Warning {
        Warning {
            code: "unimplemented_option",
            message: format!("[toolnexus] option {name:?} is not implemented in this build yet — ignored"),
        }
    }

    /// A tool dropped because another of its toolkit has the same (sanitised) name.
    pub fn duplicate_tool(name: &str, kept: &str) -> Warning {
        Warning {
            code: "duplicate_tool",
            message: format!("[toolnexus] duplicate tool name \"{name}\" — keeping {kept}"),
        }
    }

    /// A `request_params` key the engine owns: dropped, as upstream does. `option` is the
    /// option as its user wrote it (`request_params` or `requestParams`), and the text names
    /// the body transform in the same spelling.
    pub fn ignored_request_param(option: &str, key: &str) -> Warning {
        let transform = if option.contains('_') { "body_transform" } else { "bodyTransform" };
        Warning {
            code: "ignored_request_param",
            message: format!("[toolnexus] {option} key \"{key}\" is not allowed — ignored (use {transform})"),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A value read from host input, with the warnings reading it raised.
#[derive(Debug)]
pub struct Parsed<T> {
    /// The value.
    pub value: T,
    /// What the host should be told, in the order noticed.
    pub warnings: Vec<Warning>,
}
