//! The Model Context Protocol, both ways, on the official Rust SDK (`rmcp`):
//!
//! - the **MCP source** (SPEC §2): [`McpConfig`] reads the config file format every port
//!   shares; [`load_mcp`] starts each server (stdio child or streamable HTTP), lists its tools
//!   and turns them into [`crate::Tool`]s; [`list_mcp_tools`] only lists. A server's questions
//!   to the user (elicitation) go through the host's [`crate::WaitFor`].
//! - **MCP serve** (SPEC §7C): [`serve_mcp`] exposes a toolkit as an MCP server over
//!   streamable HTTP, guarded (loopback by default, bearer token, `Origin` check, the shell and
//!   file built-ins only on request).
//!
//! Behind the default-on cargo feature `mcp`: without it the engine builds without rmcp,
//! reqwest, an HTTP server or child processes.

mod child;
mod client;
mod config;
mod elicit;
mod result;
mod serve;

pub use client::{list_mcp_tools, load_mcp, McpInventory, McpSource, McpStatus, ToolInfo, MAX_LIST_PAGES};
pub use config::{
    HttpServer, McpConfig, ServerConfig, ServerTransport, StdioServer, DEFAULT_TIMEOUT_MS, RESERVED_KEYS, WRAPPER_KEYS,
};
pub use elicit::{elicit_action, elicitation_request, ElicitAction};
pub use result::{call_result, describe_part, filter_tools, input_schema, NO_ERROR_TEXT};
pub use serve::{exposed_tools, serve_mcp, McpServeOptions, McpServer, GATED_BUILTINS, MCP_PATH, MCP_SERVE_KEYS};
