//! The command line, as clap reads it: the subcommands and their flags. Values are checked
//! by the engine's own readers (client and toolkit options) once they are handed over, so a
//! bad value is the same error text as in every binding.

use clap::{Args, Parser, Subcommand};

use crate::exit::EXIT_CODES_HELP;

/// toolnexus: drive an LLM through the tool-calling loop from the terminal.
#[derive(Debug, Parser)]
#[command(name = "toolnexus", version, after_help = EXIT_CODES_HELP)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an agent: one PROMPT, or a REPL reading prompts line by line when none is given.
    #[command(after_help = EXIT_CODES_HELP)]
    Run(RunArgs),
    /// List the tools a toolkit exposes (built-ins, --mcp servers, --skills).
    #[command(after_help = EXIT_CODES_HELP)]
    Tools(ToolsArgs),
    /// Run an agent against the built-in scripted model (no network, no API key).
    #[command(after_help = EXIT_CODES_HELP)]
    Demo(DemoArgs),
    /// Continue a run that halted in a --durable store, with the answer to what it asked.
    #[command(after_help = EXIT_CODES_HELP)]
    Resume(ResumeArgs),
    /// List the runs of a store that wait on an answer, oldest first.
    #[command(after_help = EXIT_CODES_HELP)]
    Pending(PendingArgs),
    /// Serve a local web page of the store's halted runs, each answered from the page
    /// (approve, decline, answer) and resumed with the model and tool flags given here.
    #[command(after_help = EXIT_CODES_HELP)]
    Inbox(InboxArgs),
}

/// Which model to talk to.
#[derive(Debug, Args, Clone, Default)]
pub struct ModelArgs {
    /// The provider's API base URL, e.g. https://api.openai.com/v1.
    #[arg(long, value_name = "URL", env = "TOOLNEXUS_BASE_URL")]
    pub base_url: Option<String>,
    /// The wire style: openai (/chat/completions) or anthropic (/messages).
    #[arg(long, value_name = "STYLE", env = "TOOLNEXUS_STYLE")]
    pub style: Option<String>,
    /// The model name.
    #[arg(long, value_name = "NAME", env = "TOOLNEXUS_MODEL")]
    pub model: Option<String>,
    /// The system prompt.
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,
    /// The environment variable holding the API key. Default: the engine's lookup
    /// (OPENROUTER_API_KEY, the style's own, OPENAI_API_KEY, ANTHROPIC_API_KEY).
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// At most this many model calls per run.
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
}

/// Where the tools come from.
#[derive(Debug, Args, Clone, Default)]
pub struct ToolArgs {
    /// MCP servers: the path of a JSON config ({"mcpServers": {...}}).
    #[arg(long, value_name = "CONFIG")]
    pub mcp: Option<String>,
    /// A folder of skills (SKILL.md files).
    #[arg(long, value_name = "DIR")]
    pub skills: Option<String>,
    /// No built-in tools (bash, read, write, edit, grep, glob, webfetch, question,
    /// apply_patch, todowrite).
    #[arg(long)]
    pub no_builtins: bool,
    /// Confine the built-in file tools to this folder (and start bash there).
    #[arg(long, value_name = "DIR")]
    pub root: Option<String>,
    /// Built-in tools that ask for approval before each call, comma-separated.
    #[arg(long, value_name = "TOOLS", value_delimiter = ',', default_value = "bash,write,edit,apply_patch")]
    pub confirm: Vec<String>,
    /// No tool asks for approval (--confirm is ignored).
    #[arg(long)]
    pub no_confirm: bool,
}

/// How results are printed.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct OutputArgs {
    /// Machine-readable output: one JSON object per line (see cli/README.md).
    #[arg(long)]
    pub json: bool,
}

/// Where a run's conversation is kept.
#[derive(Debug, Args, Clone, Default)]
pub struct ConversationArgs {
    /// Halt on a suspension instead of asking, keeping the run in STORE (a SQLite path or a
    /// postgres:// URL) for `toolnexus resume`.
    #[arg(long, value_name = "STORE")]
    pub durable: Option<String>,
    /// The conversation id (default: a fresh one, printed when the run halts).
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
}

/// `toolnexus run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt. Without one, prompts are read line by line (a REPL on a terminal).
    pub prompt: Option<String>,
    /// The model flags.
    #[command(flatten)]
    pub model: ModelArgs,
    /// The tool flags.
    #[command(flatten)]
    pub tools: ToolArgs,
    /// The conversation flags.
    #[command(flatten)]
    pub conversation: ConversationArgs,
    /// The output flags.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `toolnexus tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// The tool flags.
    #[command(flatten)]
    pub tools: ToolArgs,
    /// The output flags.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `toolnexus demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The prompt (default: "Ship build 42 to prod.").
    pub prompt: Option<String>,
    /// The conversation flags.
    #[command(flatten)]
    pub conversation: ConversationArgs,
    /// The output flags.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `toolnexus resume`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("decision").required(true).args(["approve", "decline", "answer"]))]
pub struct ResumeArgs {
    /// The conversation id the halted run printed.
    pub id: String,
    /// The store the run halted in (a SQLite path or a postgres:// URL).
    #[arg(long, value_name = "STORE", env = "TOOLNEXUS_STORE", visible_alias = "durable")]
    pub store: String,
    /// Approve what the run asked.
    #[arg(long)]
    pub approve: bool,
    /// Decline it, with an optional reason (default "declined").
    #[arg(long, value_name = "REASON", num_args = 0..=1, default_missing_value = "declined")]
    pub decline: Option<String>,
    /// Answer it with this text.
    #[arg(long, value_name = "TEXT")]
    pub answer: Option<String>,
    /// The run was a `toolnexus demo`: continue it with the scripted model (the model and tool
    /// flags are not read).
    #[arg(long)]
    pub demo: bool,
    /// The model flags.
    #[command(flatten)]
    pub model: ModelArgs,
    /// The tool flags.
    #[command(flatten)]
    pub tools: ToolArgs,
    /// The output flags.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `toolnexus pending`.
#[derive(Debug, Args)]
pub struct PendingArgs {
    /// The store (a SQLite path or a postgres:// URL).
    #[arg(long, value_name = "STORE", env = "TOOLNEXUS_STORE", visible_alias = "durable")]
    pub store: String,
    /// The output flags.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `toolnexus inbox`.
#[derive(Debug, Args)]
pub struct InboxArgs {
    /// The store the runs halted in (a SQLite path or a postgres:// URL).
    #[arg(long, value_name = "STORE", env = "TOOLNEXUS_STORE", visible_alias = "durable")]
    pub store: String,
    /// Where to listen (default 127.0.0.1 on a free port). Any address but a loopback one
    /// needs a token: --token, or one made up and printed in the page's URL.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:0")]
    pub addr: std::net::SocketAddr,
    /// The access token every request must carry (at least 16 of A-Z a-z 0-9 - _ . ~).
    #[arg(long, value_name = "TOKEN", env = "TOOLNEXUS_INBOX_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// The runs were `toolnexus demo` runs: resume them with the scripted model.
    #[arg(long)]
    pub demo: bool,
    /// The model flags.
    #[command(flatten)]
    pub model: ModelArgs,
    /// The tool flags.
    #[command(flatten)]
    pub tools: ToolArgs,
    /// The output flags.
    #[command(flatten)]
    pub output: OutputArgs,
}
