//! The texts the model sees about skills: the `skill` tool's description (opencode's
//! `skill.txt`, verbatim) and the system-prompt catalog, byte-identical to upstream's.

use super::SkillInfo;

/// The `skill` tool's description.
pub const SKILL_TOOL_DESCRIPTION: &str = "Load a specialized skill when the task at hand matches one of the skills listed in the system prompt.

Use this tool to inject the skill's instructions and resources into current conversation. The output may contain detailed workflow guidance as well as references to scripts, files, etc in the same directory as the skill.

The skill name must match one of the skills listed in your system prompt.";

/// What the catalog begins with when at least one skill has a description.
pub const SKILLS_PROMPT_PREAMBLE: &str = "Skills provide specialized instructions and workflows for specific tasks.
Use the skill tool to load a skill when a task matches its description.";

/// The catalog when no skill has a description.
pub const NO_SKILLS_PROMPT: &str = "No skills are currently available.";

/// The catalog: the preamble, then `- **name**: description` for each skill with a
/// description (an empty one counts), sorted by name in code-point order, never by locale.
pub(crate) fn skills_prompt(skills: &[SkillInfo]) -> String {
    let mut described: Vec<(&str, &str)> =
        skills.iter().filter_map(|s| s.description.as_deref().map(|d| (s.name.as_str(), d))).collect();
    if described.is_empty() {
        return NO_SKILLS_PROMPT.to_string();
    }
    described.sort_by(|a, b| a.0.cmp(b.0));
    let mut out = format!("{SKILLS_PROMPT_PREAMBLE}\n\n## Available Skills");
    for (name, description) in described {
        out.push_str(&format!("\n- **{name}**: {description}"));
    }
    out
}
