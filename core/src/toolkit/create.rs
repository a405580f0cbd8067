//! `create_toolkit`: a toolkit assembled from its sources (SPEC §2-§4A), as every port's
//! factory builds it. MCP servers' tools come first, then the `skill` tool, then the built-in
//! tools, then the host's own; a host tool named like a built-in replaces it (builtins are
//! the lowest-precedence source), `disable_tools` drops tools by their final name, and of any
//! other tools sharing a name the first is kept.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{DuplicateNames, Toolkit};
use crate::builtin::{builtin_tools, BuiltinsSpec};
use crate::error::{Error, Result};
use crate::hooks::WaitFor;
use crate::skill::{load_skills, SkillProvider, SkillsSpec, SKILLS_SPEC_KEYS};
use crate::spec_json::Fields;
use crate::tool::Tool;
use crate::warning::Parsed;
#[cfg(feature = "mcp")]
use crate::warning::Warning;

/// Every key [`ToolkitSpec::from_json`] reads (snake_case; camelCase is read too).
pub const TOOLKIT_SPEC_KEYS: [&str; 10] = [
    "mcp_config",
    "builtins",
    "disable_tools",
    "duplicates",
    "agents",
    SKILLS_SPEC_KEYS[0],
    SKILLS_SPEC_KEYS[1],
    SKILLS_SPEC_KEYS[2],
    SKILLS_SPEC_KEYS[3],
    SKILLS_SPEC_KEYS[4],
];

/// What a toolkit is built from, as plain data (what a host cannot hand over as JSON, its
/// own tools and callbacks, is in [`ToolkitHost`]).
#[derive(Clone, Debug, Default)]
pub struct ToolkitSpec {
    /// The MCP servers to connect to.
    #[cfg(feature = "mcp")]
    pub mcp: Option<crate::mcp::McpConfig>,
    /// How the toolkit is served over MCP when the serve call names no options: the
    /// `mcpServer` block of an `mcp_config` object (upstream's inbound profile).
    #[cfg(feature = "mcp")]
    pub mcp_serve: Option<crate::mcp::McpServeOptions>,
    /// Where skills come from and which are exposed.
    pub skills: SkillsSpec,
    /// The built-in tools (upstream's default: all ten).
    pub builtins: BuiltinsSpec,
    /// Tools dropped by their final name, whatever their source.
    pub disable_tools: Vec<String>,
    /// Which of the tools sharing a name is kept.
    pub duplicates: DuplicateNames,
}

/// What only the host can supply to [`Toolkit::create`].
#[derive(Clone, Default)]
pub struct ToolkitHost {
    /// The host's own tools (native, relay, HTTP), after every source's.
    pub extra_tools: Vec<Tool>,
    /// Data skills computed when the toolkit is built.
    pub skill_provider: Option<Arc<dyn SkillProvider>>,
    /// Where MCP servers' questions to the user (elicitation) go; without it, servers are
    /// told the client cannot answer them.
    pub wait_for: Option<Arc<dyn WaitFor>>,
    /// Fired, it aborts the MCP load: every server started so far is stopped.
    pub cancel: CancellationToken,
}

impl ToolkitSpec {
    /// Reads the toolkit options (keys of [`TOOLKIT_SPEC_KEYS`]): `mcp_config` (a config
    /// object, or the path of a JSON file), the skill keys of [`SkillsSpec::from_json`],
    /// `builtins` ([`BuiltinsSpec::from_json`]; when absent, a `builtins` key of an
    /// `mcp_config` object, as upstream reads it), `disable_tools`, `duplicates`
    /// (`keep_first` | `keep_last`). An unknown key, a wrong type, an unreadable config file
    /// or non-empty `agents` (A2A is not in this build) is an
    /// [`crate::ErrorKind::InvalidArgument`] error naming it.
    pub fn from_json(json: &Value) -> Result<Parsed<ToolkitSpec>> {
        let f = Fields::new("toolkit option", json, &TOOLKIT_SPEC_KEYS, true)?;
        let mut warnings = Vec::new();
        match f.get("agents") {
            None => {}
            Some(Value::Array(a)) if a.is_empty() => {}
            Some(_) => {
                return Err(Error::invalid(
                    "toolkit option \"agents\" (remote A2A agents) is not available in this build",
                ))
            }
        }
        let skills = SkillsSpec::from_json(json)?;
        warnings.extend(skills.warnings);
        let config = f.get("mcp_config");
        let from_config = config.and_then(|c| c.get("builtins")).filter(|b| !b.is_null());
        let builtins = match f.get("builtins").or(from_config) {
            Some(b) => {
                let p = BuiltinsSpec::from_json(b)?;
                warnings.extend(p.warnings);
                p.value
            }
            None => BuiltinsSpec::default(),
        };
        let duplicates = match f.get("duplicates") {
            None => DuplicateNames::KeepFirst,
            Some(Value::String(s)) => DuplicateNames::parse(s)?,
            Some(v) => return Err(f.wrong("duplicates", "\"keep_first\" or \"keep_last\"", v)),
        };
        let spec = ToolkitSpec {
            #[cfg(feature = "mcp")]
            mcp: mcp_config(&f, config, &mut warnings)?,
            #[cfg(feature = "mcp")]
            mcp_serve: match config.and_then(|c| c.get("mcpServer")).filter(|v| !v.is_null()) {
                Some(profile) => Some(crate::mcp::McpServeOptions::from_json(profile)?),
                None => None,
            },
            skills: skills.value,
            builtins,
            disable_tools: f.strings("disable_tools")?.unwrap_or_default(),
            duplicates,
        };
        #[cfg(not(feature = "mcp"))]
        if config.is_some() {
            return Err(Error::invalid("toolkit option \"mcp_config\": this build has no MCP support (feature `mcp`)"));
        }
        Ok(Parsed { value: spec, warnings })
    }
}

#[cfg(feature = "mcp")]
fn mcp_config(
    f: &Fields<'_>,
    config: Option<&Value>,
    warnings: &mut Vec<Warning>,
) -> Result<Option<crate::mcp::McpConfig>> {
    let parsed = match config {
        None => return Ok(None),
        Some(Value::String(path)) => crate::mcp::McpConfig::from_file(path)?,
        Some(v @ Value::Object(_)) => crate::mcp::McpConfig::from_json(v)?,
        Some(v) => return Err(f.wrong("mcp_config", "a config object or the path of a JSON file", v)),
    };
    warnings.extend(parsed.warnings);
    Ok(Some(parsed.value))
}

impl Toolkit {
    /// [`ToolkitSpec::from_json`] then [`Toolkit::create`], what reading the options warned
    /// about first in [`Toolkit::warnings`]: what a binding calls with its user's options.
    pub async fn create_from_json(options: &Value, host: ToolkitHost) -> Result<Toolkit> {
        let spec = ToolkitSpec::from_json(options)?;
        let mut tk = Toolkit::create(spec.value, host).await?;
        let mut warnings = spec.warnings;
        warnings.append(&mut tk.warnings);
        tk.warnings = warnings;
        Ok(tk)
    }

    /// Builds a toolkit from its sources: connects to the MCP servers (each failure isolated,
    /// see [`crate::mcp::load_mcp`]), loads the skills, selects the built-ins. What loading
    /// noticed (a failed server, a duplicate skill or tool) is in [`Toolkit::warnings`]. An
    /// error only for a fired `cancel`, a relay tool named like a built-in, or `bash` kept on
    /// a machine without a shell. [`Toolkit::close`] stops the servers (dropping the last
    /// copy of the toolkit does too).
    pub async fn create(spec: ToolkitSpec, host: ToolkitHost) -> Result<Toolkit> {
        // What can fail without a server is checked before any server starts.
        super::check_relay_collisions(&host.extra_tools)?;
        let extra_names: HashSet<&str> = host.extra_tools.iter().map(Tool::name).collect();
        let builtins: Vec<Tool> =
            builtin_tools(&spec.builtins)?.into_iter().filter(|b| !extra_names.contains(b.name())).collect();
        let mut warnings = Vec::new();
        let mut tools = Vec::new();
        #[cfg(feature = "mcp")]
        let mcp = match &spec.mcp {
            Some(config) => {
                let source = crate::mcp::load_mcp(config, host.wait_for.clone(), host.cancel.clone()).await?;
                warnings.extend(source.warnings.iter().cloned());
                tools.extend(source.tools.iter().cloned());
                Some(Arc::new(super::McpHandle::new(source)))
            }
            None => None,
        };
        #[cfg(not(feature = "mcp"))]
        let _ = &host.wait_for;
        let catalog = if spec.skills.is_configured() || host.skill_provider.is_some() {
            let loaded = load_skills(&spec.skills, host.skill_provider.clone()).await?;
            warnings.extend(loaded.warnings);
            loaded.value
        } else {
            Default::default()
        };
        tools.extend(catalog.tool());
        tools.extend(builtins);
        tools.extend(host.extra_tools.iter().cloned());
        tools.retain(|t| !spec.disable_tools.iter().any(|d| d == t.name()));
        let mut tk = Toolkit::with_duplicates(tools, spec.duplicates)?;
        warnings.append(&mut tk.warnings);
        tk.warnings = warnings;
        tk.skills_prompt = catalog.prompt().into();
        tk.skills = Arc::new(catalog);
        #[cfg(feature = "mcp")]
        {
            tk.mcp = mcp;
            tk.mcp_serve = spec.mcp_serve.map(Arc::new);
        }
        Ok(tk)
    }
}
