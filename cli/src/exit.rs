//! Exit codes: one table, printed by `--help` and documented in cli/README.md, and the one
//! mapping from the engine's error kinds to it.

use toolnexus::{Error, ErrorKind};

/// The run finished (status `done`), or the command did what it was asked.
pub const OK: u8 = 0;
/// An error no other code covers (a tool source failed to load, an engine bug).
pub const FAILED: u8 = 1;
/// A bad command line or option value, or a missing API key.
pub const USAGE: u8 = 2;
/// The run halted on a suspension and waits in the --durable store (`toolnexus resume`).
pub const PENDING: u8 = 3;
/// The model could not be reached or answered with an error (HTTP, network, timeout,
/// a malformed reply).
pub const MODEL: u8 = 4;
/// A tool asked a question, but there is no terminal to ask it on and no --durable store.
pub const NO_TERMINAL: u8 = 5;
/// The run stopped at --max-turns while the model was still calling tools.
pub const INCOMPLETE: u8 = 6;
/// The store failed, or the conversation is not in a state to do this (in use by another
/// run, resumed already, never halted, unknown id).
pub const STORE: u8 = 7;
/// Interrupted (Ctrl-C).
pub const INTERRUPTED: u8 = 130;

/// The table `--help` shows.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0    done
  1    other error (a tool source failed to load, an engine bug)
  2    bad command line or option value, or no API key
  3    the run halted and waits in the --durable store: toolnexus resume ID ...
  4    model error: HTTP status, network, timeout, malformed reply
  5    a tool asked, but stdin is not a terminal and there is no --durable store
  6    incomplete: --max-turns reached
  7    store error, or the conversation is in use, resumed already or unknown
  130  interrupted";

/// The exit code for an engine error.
pub fn for_error(e: &Error) -> u8 {
    match e.kind() {
        ErrorKind::InvalidArgument | ErrorKind::Config => USAGE,
        ErrorKind::Http | ErrorKind::Network | ErrorKind::Timeout | ErrorKind::Protocol => MODEL,
        ErrorKind::Conflict | ErrorKind::Store | ErrorKind::AnswerMismatch => STORE,
        ErrorKind::Cancelled => INTERRUPTED,
        ErrorKind::Host
        | ErrorKind::Internal
        | ErrorKind::Reentrant
        | ErrorKind::ContentPart
        | ErrorKind::UnsupportedPart => FAILED,
    }
}
