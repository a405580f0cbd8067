//! The skill source (upstream SPEC §3): skills found on disk (`**/SKILL.md` with YAML front
//! matter), supplied as data ([`SkillDef`]) or by a host's lazy [`SkillProvider`], exposed
//! to the model as one `skill` tool plus a system-prompt catalog.
//!
//! Sources compose in order (directories, then data, then the provider) and a name is kept
//! the first time it is seen; every refused candidate is a [`SkillSkip`] with a typed
//! reason. Nothing is printed: what upstream logs comes back as [`Warning`]s.

mod discover;
mod frontmatter;
mod prompt;
mod scalar;
mod tool;
mod yaml;

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::hooks::HookFuture;
use crate::spec_json::Fields;
use crate::tool::Tool;
use crate::warning::{Parsed, Warning};

pub use prompt::{NO_SKILLS_PROMPT, SKILLS_PROMPT_PREAMBLE, SKILL_TOOL_DESCRIPTION};

/// A skill supplied as data, never touching the file system (SPEC §3, S1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillDef {
    /// The name the model loads it by. An empty name is skipped as `missing-name`.
    pub name: String,
    /// Shown in the catalog; a skill without one is loadable but not listed.
    pub description: Option<String>,
    /// The instructions.
    pub content: String,
    /// Logical resource names listed in the `<skill_files>` block.
    pub resources: Vec<String>,
    /// The logical base shown to the model; `skill://<name>/` when absent.
    pub base: Option<String>,
}

const SKILL_DEF_KEYS: [&str; 5] = ["name", "description", "content", "resources", "base"];

impl SkillDef {
    /// A data skill with no description, resources or base.
    pub fn new(name: impl Into<String>, content: impl Into<String>) -> SkillDef {
        SkillDef { name: name.into(), content: content.into(), ..SkillDef::default() }
    }

    /// Reads `{name, description?, content?, resources?, base?}`; any other key, or a
    /// value of the wrong type, is an [`ErrorKind::InvalidArgument`] error.
    pub fn from_json(v: &Value) -> Result<SkillDef> {
        let f = Fields::new("skill", v, &SKILL_DEF_KEYS, true)?;
        Ok(SkillDef {
            name: f.string("name")?.unwrap_or_default(),
            description: f.string("description")?,
            content: f.string("content")?.unwrap_or_default(),
            resources: f.strings("resources")?.unwrap_or_default(),
            base: f.string("base")?,
        })
    }
}

/// Where a skill came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkillOrigin {
    /// A SKILL.md in a skills directory: a `file://` base and its sibling files sampled.
    Directory,
    /// A [`SkillDef`] (given or from a provider): its logical base and resources.
    Data,
}

impl SkillOrigin {
    /// Upstream's discriminator: `fs` for a directory's skill, `logical` for a data skill.
    pub const fn as_str(self) -> &'static str {
        match self {
            SkillOrigin::Directory => "fs",
            SkillOrigin::Data => "logical",
        }
    }
}

/// A skill as discovered (upstream's `SkillInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillInfo {
    /// Its name.
    pub name: String,
    /// Its description, when it has one.
    pub description: Option<String>,
    /// The absolute path of its SKILL.md, or its logical base for a data skill.
    pub location: String,
    /// The instructions (the SKILL.md text after its front matter).
    pub content: String,
    /// Where it came from.
    pub origin: SkillOrigin,
    /// A data skill's resources.
    pub resources: Vec<String>,
    /// A data skill's logical base.
    pub base: Option<String>,
}

impl SkillInfo {
    /// Upstream's `SkillInfo` fields as JSON: `name`, `description`, `location`, `content`,
    /// `origin` (`fs` | `logical`), and a data skill's `resources` and `base` (`null` for a
    /// directory's skill).
    pub fn to_json(&self) -> Value {
        let data = self.origin == SkillOrigin::Data;
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "location": self.location,
            "content": self.content,
            "origin": self.origin.as_str(),
            "resources": if data { serde_json::json!(self.resources) } else { Value::Null },
            "base": self.base,
        })
    }
}

/// Why a candidate did not become a skill: the cross-port reason codes (SPEC §3, S3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// No `name` (or an empty one).
    MissingName,
    /// Front matter YAML refused and no name could be rescued from it.
    MalformedFrontmatter,
    /// Another skill already has this name (the first one is kept).
    DuplicateName,
    /// The file could not be read as UTF-8 text.
    Unreadable,
}

impl SkipReason {
    /// Every reason.
    pub const ALL: [SkipReason; 4] =
        [SkipReason::MissingName, SkipReason::MalformedFrontmatter, SkipReason::DuplicateName, SkipReason::Unreadable];

    /// The wire string: `missing-name`, `malformed-frontmatter`, `duplicate-name`, `unreadable`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SkipReason::MissingName => "missing-name",
            SkipReason::MalformedFrontmatter => "malformed-frontmatter",
            SkipReason::DuplicateName => "duplicate-name",
            SkipReason::Unreadable => "unreadable",
        }
    }
}

/// A candidate that did not become a skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillSkip {
    /// The SKILL.md path, or a data skill's base (`skill://` for a nameless one).
    pub location: String,
    /// Why.
    pub reason: SkipReason,
    /// The parser's or the file system's own message, empty when there is none. Its wording
    /// is this engine's, not any port's: show it, never match on it.
    pub detail: String,
}

impl SkillSkip {
    /// `{"location", "reason", "detail"}`, the reason as its cross-port code.
    pub fn to_json(&self) -> Value {
        serde_json::json!({"location": self.location, "reason": self.reason.as_str(), "detail": self.detail})
    }
}

/// Every skill the sources hold and every refusal, unfiltered (SPEC §3, S3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillInventory {
    /// The skills, in discovery order.
    pub skills: Vec<SkillInfo>,
    /// The refusals, in discovery order.
    pub skipped: Vec<SkillSkip>,
}

/// A source of data skills the host computes when the toolkit is built (SPEC §3, S1).
/// A failure is isolated: the other sources still load, and it comes back as a warning.
pub trait SkillProvider: Send + Sync {
    /// The skills.
    fn skills(&self) -> HookFuture<Vec<SkillDef>>;
}

/// Every key [`SkillsSpec::from_json`] reads (snake_case; camelCase is read too).
pub const SKILLS_SPEC_KEYS: [&str; 5] =
    ["skills_dir", "skills", "skills_filter", "skill_sample_limit", "disable_skills"];

/// Where a toolkit's skills come from and which are exposed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillsSpec {
    /// Directories searched for `**/SKILL.md`, in order. `Some` (even empty) configures
    /// the source.
    pub skills_dir: Option<Vec<PathBuf>>,
    /// Data skills, after the directories' ones. `Some` (even empty) configures the source.
    pub skills: Option<Vec<SkillDef>>,
    /// Which skills are exposed, as upstream's per-server tool filters read it: absent or
    /// empty, all; any `true`, only those; only `false`s, all but those.
    pub skills_filter: Option<Vec<(String, bool)>>,
    /// The `<skill_files>` sample size: `0` the default (10), `n > 0` at most `n`, `-1` no
    /// block at all.
    pub skill_sample_limit: i64,
    /// Names dropped, as `false` entries of the filter that do not override an explicit one.
    pub disable_skills: Vec<String>,
}

impl SkillsSpec {
    /// Reads the keys of [`SKILLS_SPEC_KEYS`] from `json` (an object: the toolkit options
    /// may hold other keys, which are left to their readers). `skills_dir` is a string or an
    /// array of strings. A wrong type is an [`ErrorKind::InvalidArgument`] error naming the
    /// key, and so is a sample limit below `-1`.
    pub fn from_json(json: &Value) -> Result<Parsed<SkillsSpec>> {
        let f = Fields::new("skills option", json, &SKILLS_SPEC_KEYS, false)?;
        let value = SkillsSpec::read(&f, SKILLS_SPEC_KEYS)?;
        Ok(Parsed { value, warnings: Vec::new() })
    }

    /// Reads the options of upstream's `load_skills` / `list_skills` (`loadSkills` in JS):
    /// `dirs` (a string or an array), `skills`, `filter`, `sample_limit` (`sampleLimit`),
    /// strictly (an unknown key is an [`ErrorKind::InvalidArgument`] error naming it).
    pub fn from_load_json(json: &Value) -> Result<SkillsSpec> {
        const KEYS: [&str; 5] = ["dirs", "skills", "filter", "sample_limit", "disable_skills"];
        let f = Fields::new("load_skills option", json, &KEYS[..4], true)?;
        SkillsSpec::read(&f, KEYS)
    }

    /// The spec from `f`, whose keys for the five settings (in [`SKILLS_SPEC_KEYS`]' order)
    /// are `keys`.
    fn read(f: &Fields<'_>, keys: [&str; 5]) -> Result<SkillsSpec> {
        let [dirs, skills, filter, sample_limit, disable] = keys;
        let skills = match f.get(skills) {
            None => None,
            Some(Value::Array(items)) => Some(items.iter().map(SkillDef::from_json).collect::<Result<Vec<_>>>()?),
            Some(v) => return Err(f.wrong(skills, "an array of skill objects", v)),
        };
        let skill_sample_limit = f.int(sample_limit)?.unwrap_or(0);
        if skill_sample_limit < -1 {
            return Err(Error::invalid(format!(
                "{} must be -1 (no file list), 0 (the default, 10) or a positive count, got {skill_sample_limit}",
                f.named(sample_limit)
            )));
        }
        Ok(SkillsSpec {
            skills_dir: f.string_or_strings(dirs)?.map(|d| d.into_iter().map(PathBuf::from).collect()),
            skills,
            skills_filter: f.map_of(filter, "an object of booleans", "a boolean", Value::as_bool)?,
            skill_sample_limit,
            disable_skills: f.strings(disable)?.unwrap_or_default(),
        })
    }

    /// Whether this configures a skill source at all (directories or data given); a
    /// provider configures one too.
    pub fn is_configured(&self) -> bool {
        self.skills_dir.is_some() || self.skills.is_some()
    }

    /// The filter with `disable_skills` folded in.
    fn effective_filter(&self) -> Vec<(String, bool)> {
        let mut filter = self.skills_filter.clone().unwrap_or_default();
        for name in &self.disable_skills {
            if !filter.iter().any(|(n, _)| n == name) {
                filter.push((name.clone(), false));
            }
        }
        filter
    }
}

/// A discovered skill or a refusal, before names are deduplicated.
pub(crate) enum Candidate {
    Skill(SkillInfo),
    Skip(SkillSkip),
}

fn data_candidates(defs: &[SkillDef]) -> impl Iterator<Item = Candidate> + '_ {
    defs.iter().map(|d| {
        if d.name.is_empty() {
            let location = d.base.clone().filter(|b| !b.is_empty()).unwrap_or_else(|| "skill://".into());
            return Candidate::Skip(SkillSkip { location, reason: SkipReason::MissingName, detail: String::new() });
        }
        let base = d.base.clone().filter(|b| !b.is_empty()).unwrap_or_else(|| format!("skill://{}/", d.name));
        Candidate::Skill(SkillInfo {
            name: d.name.clone(),
            description: d.description.clone(),
            location: base.clone(),
            content: d.content.clone(),
            origin: SkillOrigin::Data,
            resources: d.resources.clone(),
            base: Some(base),
        })
    })
}

/// Runs the provider, a failure or a panic becoming a warning.
async fn provided(provider: Option<Arc<dyn SkillProvider>>, warnings: &mut Vec<Warning>) -> Vec<SkillDef> {
    let Some(p) = provider else { return Vec::new() };
    let failed = |why: String| Warning {
        code: "skill_provider_failed",
        message: format!("[toolnexus] skill provider failed: {why}"),
    };
    match AssertUnwindSafe(async move { p.skills().await }).catch_unwind().await {
        Ok(Ok(defs)) => defs,
        Ok(Err(e)) => {
            warnings.push(failed(e.message().to_string()));
            Vec::new()
        }
        Err(_) => {
            warnings.push(failed("it panicked".into()));
            Vec::new()
        }
    }
}

/// Every source's skills, first name winning, and the refusals: the directories' (read off
/// the runtime's threads), then the data skills, then the provider's.
async fn inventory(
    spec: &SkillsSpec,
    provider: Option<Arc<dyn SkillProvider>>,
    warnings: &mut Vec<Warning>,
) -> Result<SkillInventory> {
    let provided = provided(provider, warnings).await;
    let spec = spec.clone();
    let (inv, found) = tokio::task::spawn_blocking(move || {
        let mut w = Vec::new();
        (collect(&spec, &provided, &mut w), w)
    })
    .await
    .map_err(|e| Error::new(ErrorKind::Internal, format!("skill discovery failed: {e}")))?;
    warnings.extend(found);
    Ok(inv)
}

/// [`inventory`]'s work, on the calling thread.
fn collect(spec: &SkillsSpec, provided: &[SkillDef], warnings: &mut Vec<Warning>) -> SkillInventory {
    let dirs = spec.skills_dir.as_deref().unwrap_or_default();
    let mut candidates: Vec<Candidate> = dirs.iter().flat_map(|d| discover::candidates(d, warnings)).collect();
    candidates.extend(data_candidates(spec.skills.as_deref().unwrap_or_default()));
    candidates.extend(data_candidates(provided));
    let mut inv = SkillInventory::default();
    for c in candidates {
        match c {
            Candidate::Skip(s) => inv.skipped.push(s),
            Candidate::Skill(s) if inv.skills.iter().any(|k| k.name == s.name) => {
                warnings.push(Warning {
                    code: "duplicate_skill",
                    message: format!(
                        "[toolnexus] duplicate skill name \"{}\" ({}) — keeping first",
                        s.name, s.location
                    ),
                });
                inv.skipped.push(SkillSkip {
                    location: s.location,
                    reason: SkipReason::DuplicateName,
                    detail: String::new(),
                });
            }
            Candidate::Skill(s) => inv.skills.push(s),
        }
    }
    inv
}

/// Discovers and validates the skills of every source, exposing nothing (SPEC §3, S3): the
/// inventory is unfiltered, to author a filter from. Warnings: a skills directory missing, a
/// duplicate name, a provider failure.
pub async fn list_skills(
    spec: &SkillsSpec,
    provider: Option<Arc<dyn SkillProvider>>,
) -> Result<Parsed<SkillInventory>> {
    let mut warnings = Vec::new();
    let value = inventory(spec, provider, &mut warnings).await?;
    Ok(Parsed { value, warnings })
}

/// [`list_skills`] without a provider, on the calling thread (it reads the folders there):
/// for the ports whose `list_skills` is synchronous.
pub fn list_skills_now(spec: &SkillsSpec) -> Parsed<SkillInventory> {
    let mut warnings = Vec::new();
    let value = collect(spec, &[], &mut warnings);
    Parsed { value, warnings }
}

/// Loads the skills of every source and applies the filter (SPEC §3): the result gives the
/// `skill` tool and the system-prompt catalog. Warnings: those of [`list_skills`], and each
/// filter name that matches no skill.
pub async fn load_skills(spec: &SkillsSpec, provider: Option<Arc<dyn SkillProvider>>) -> Result<Parsed<SkillCatalog>> {
    let configured = spec.is_configured() || provider.is_some();
    let mut warnings = Vec::new();
    let inv = inventory(spec, provider, &mut warnings).await?;
    Ok(catalog(spec, inv, configured, warnings))
}

/// A port's own `load_skills` call: [`load_skills`] without a provider, on the calling
/// thread. Being called makes it a skill source even with nothing in it, so the catalog
/// always has its `skill` tool (which then answers that no skill is available), as
/// upstream's `load_skills` builds one.
pub fn load_skills_now(spec: &SkillsSpec) -> Parsed<SkillCatalog> {
    let mut warnings = Vec::new();
    let inv = collect(spec, &[], &mut warnings);
    catalog(spec, inv, true, warnings)
}

/// The filter applied to `inv`.
fn catalog(
    spec: &SkillsSpec,
    inv: SkillInventory,
    configured: bool,
    mut warnings: Vec<Warning>,
) -> Parsed<SkillCatalog> {
    let filter = spec.effective_filter();
    for (name, _) in &filter {
        if !inv.skills.iter().any(|s| &s.name == name) {
            warnings.push(Warning {
                code: "unknown_skill_filter",
                message: format!("[toolnexus] skill filter name \"{name}\" matched no skill"),
            });
        }
    }
    let allowlist = filter.iter().any(|(_, on)| *on);
    let says = |name: &str| filter.iter().find(|(n, _)| n == name).map(|(_, on)| *on);
    let skills: Vec<SkillInfo> = inv
        .skills
        .into_iter()
        .filter(|s| if allowlist { says(&s.name) == Some(true) } else { says(&s.name) != Some(false) })
        .collect();
    let value = SkillCatalog {
        skills: Arc::new(skills),
        skipped: inv.skipped,
        sample_limit: spec.skill_sample_limit,
        configured,
    };
    Parsed { value, warnings }
}

/// The skills a toolkit exposes: the `skill` tool and the catalog for the system prompt.
#[derive(Clone, Debug, Default)]
pub struct SkillCatalog {
    skills: Arc<Vec<SkillInfo>>,
    skipped: Vec<SkillSkip>,
    sample_limit: i64,
    configured: bool,
}

impl SkillCatalog {
    /// The exposed skills, in discovery order.
    pub fn skills(&self) -> &[SkillInfo] {
        &self.skills
    }

    /// The exposed skill called `name`.
    pub fn get(&self, name: &str) -> Option<&SkillInfo> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// Every candidate refused while loading, with its reason.
    pub fn skipped(&self) -> &[SkillSkip] {
        &self.skipped
    }

    /// Whether a skill source was configured (directories, data or a provider given).
    pub fn is_configured(&self) -> bool {
        self.configured
    }

    /// The `skill` tool (source `skill`): present whenever a source was configured, even
    /// one that found no skill (its calls then answer that none is available), as upstream
    /// ships it.
    pub fn tool(&self) -> Option<Tool> {
        self.configured.then(|| tool::skill_tool(self.skills.clone(), self.sample_limit))
    }

    /// The system-prompt catalog: the preamble and `## Available Skills` with every skill
    /// that has a description, sorted by name; [`NO_SKILLS_PROMPT`] when none has one; empty
    /// when no source was configured.
    pub fn prompt(&self) -> String {
        if self.configured {
            prompt::skills_prompt(&self.skills)
        } else {
            String::new()
        }
    }
}
