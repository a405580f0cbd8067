//! The one `skill` tool: the model calls it with a skill's name and gets the skill's
//! instructions, its base, and a sample of the files beside it (progressive disclosure).
//! The output is upstream's, byte for byte.

use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};

use super::discover::sample_files;
use super::prompt::SKILL_TOOL_DESCRIPTION;
use super::{SkillInfo, SkillOrigin};
use crate::error::{Error, ErrorKind, Result};
use crate::pystr::{quote, str_of, strip};
use crate::tool::{Tool, ToolHandler, ToolSource};
use crate::types::{ToolContext, ToolResult};

/// The sample size when none is configured.
pub(crate) const DEFAULT_SAMPLE_LIMIT: i64 = 10;

/// The `skill` tool over `skills` (the exposed ones, in discovery order).
pub(crate) fn skill_tool(skills: Arc<Vec<SkillInfo>>, sample_limit: i64) -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The name of the skill to load"}},
        "required": ["name"],
        "additionalProperties": false,
    });
    Tool::new("skill", SKILL_TOOL_DESCRIPTION, schema, ToolSource::Skill, Arc::new(SkillTool { skills, sample_limit }))
}

struct SkillTool {
    skills: Arc<Vec<SkillInfo>>,
    sample_limit: i64,
}

impl ToolHandler for SkillTool {
    fn execute(&self, args: Value, _ctx: ToolContext) -> BoxFuture<'static, Result<ToolResult>> {
        let name = args.get("name").map(str_of).unwrap_or_default();
        let skills = self.skills.clone();
        let limit = if self.sample_limit == 0 { DEFAULT_SAMPLE_LIMIT } else { self.sample_limit };
        Box::pin(async move {
            let Some(info) = skills.iter().find(|s| s.name == name) else {
                let mut names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
                names.sort_unstable();
                let available = if names.is_empty() { "none".to_string() } else { names.join(", ") };
                return Ok(ToolResult::error(format!("Skill \"{name}\" not found. Available skills: {available}")));
            };
            let info = info.clone();
            match info.origin {
                SkillOrigin::Data => {
                    let base = info.base.clone().unwrap_or_else(|| format!("skill://{}/", info.name));
                    let files = (limit != -1 && !info.resources.is_empty()).then(|| {
                        let n = usize::try_from(limit).ok().filter(|n| *n > 0).unwrap_or(usize::MAX);
                        info.resources.iter().take(n).cloned().collect()
                    });
                    Ok(loaded(&info, &base, files, &base))
                }
                SkillOrigin::Directory => {
                    let dir = Path::new(&info.location).parent().map(Path::to_path_buf).unwrap_or_default();
                    let shown_dir = dir.to_string_lossy().into_owned();
                    let base = format!("file://{}", quote(dir.as_os_str().as_encoded_bytes(), b"/"));
                    let files = if limit == -1 {
                        None
                    } else {
                        let sampled =
                            tokio::task::spawn_blocking(move || sample_files(&dir, limit)).await.map_err(|e| {
                                Error::new(ErrorKind::Internal, format!("sampling skill files failed: {e}"))
                            })?;
                        Some(sampled.iter().map(|p| p.to_string_lossy().into_owned()).collect())
                    };
                    Ok(loaded(&info, &base, files, &shown_dir))
                }
            }
        })
    }
}

/// The `<skill_content>` block; `files` is `None` when the `<skill_files>` block is left out.
fn loaded(info: &SkillInfo, base: &str, files: Option<Vec<String>>, dir: &str) -> ToolResult {
    let mut lines = vec![
        format!("<skill_content name=\"{}\">", info.name),
        format!("# Skill: {}", info.name),
        String::new(),
        strip(&info.content).to_string(),
        String::new(),
        format!("Base directory for this skill: {base}"),
        "Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.".to_string(),
    ];
    if let Some(files) = files {
        lines.push("Note: file list is sampled.".into());
        lines.push(String::new());
        lines.push("<skill_files>".into());
        lines.push(files.iter().map(|f| format!("<file>{f}</file>")).collect::<Vec<_>>().join("\n"));
        lines.push("</skill_files>".into());
    }
    lines.push("</skill_content>".into());
    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::String(info.name.clone()));
    metadata.insert("dir".into(), Value::String(dir.to_string()));
    ToolResult { output: lines.join("\n"), is_error: false, metadata: Some(metadata), parts: None }
}
