//! The skill source against upstream: the `skill` tool's output for the fixture folder
//! (`tests/fixtures/skills`: block scalars, a front matter YAML refuses, a malformed one, a
//! nameless one, a duplicate, a symlinked folder, a symlinked SKILL.md, a folder linking to
//! itself, CRLF line ends, more files than the sample shows) compared byte for byte with what
//! upstream's Python port 0.21.0 answers for the same folder; data skills, the filter, the
//! provider, the inventory and the JSON spec.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use toolnexus::{
    list_skills, load_skills, Error, HookFuture, SkillCatalog, SkillDef, SkillProvider, SkillsSpec, SkipReason,
    ToolContext, ToolSource, Toolkit,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skills")
}

/// `text` with `{ROOT}` replaced by the fixture folder (percent-encoded in a `file://` URI,
/// as `Path.as_uri()` writes it).
fn expand(text: &str) -> String {
    let root = root().to_string_lossy().into_owned();
    let mut uri = String::new();
    for b in root.bytes() {
        if b.is_ascii_alphanumeric() || b"_.-~/".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    text.replace("file://{ROOT}", &format!("file://{uri}")).replace("{ROOT}", &root)
}

fn dirs() -> SkillsSpec {
    SkillsSpec { skills_dir: Some(vec![root()]), ..SkillsSpec::default() }
}

async fn load(spec: &SkillsSpec) -> SkillCatalog {
    load_skills(spec, None).await.unwrap().value
}

async fn call(catalog: &SkillCatalog, name: &str) -> toolnexus::ToolResult {
    let tool = catalog.tool().expect("a configured source has the skill tool");
    tool.execute(json!({ "name": name }), ToolContext::default()).await.unwrap()
}

fn names(catalog: &SkillCatalog) -> Vec<&str> {
    catalog.skills().iter().map(|s| s.name.as_str()).collect()
}

fn skipped(list: &[toolnexus::SkillSkip]) -> Vec<(String, &'static str)> {
    list.iter().map(|s| (s.location.clone(), s.reason.as_str())).collect()
}

const DIR_SKILLS: [&str; 11] = [
    "colon-space",
    "crlf",
    "cyclic",
    "dup-name",
    "folded",
    "hello-world",
    "linked-file-skill",
    "linked-skill",
    "literal",
    "many-files",
    "undescribed",
];

#[tokio::test]
async fn directory_skills_match_upstream_byte_for_byte() {
    let parsed = load_skills(&dirs(), None).await.unwrap();
    let catalog = parsed.value;
    assert_eq!(names(&catalog), DIR_SKILLS, "discovery order: depth, then path by code point");
    for (name, want) in DIR_OUTPUTS {
        let r = call(&catalog, name).await;
        assert!(!r.is_error, "{name}");
        assert_eq!(r.output, expand(want), "{name}");
        let dir = catalog.get(name).map(|s| Path::new(&s.location).parent().unwrap().to_string_lossy().into_owned());
        assert_eq!(r.metadata, Some(json!({"name": name, "dir": dir}).as_object().unwrap().clone()));
    }
    let miss = call(&catalog, "nope").await;
    assert!(miss.is_error);
    assert_eq!(miss.output, NOT_FOUND);
    assert_eq!(catalog.prompt(), PROMPT);
    assert_eq!(
        skipped(catalog.skipped()),
        [
            (expand("{ROOT}/malformed/SKILL.md"), "malformed-frontmatter"),
            (expand("{ROOT}/no-name/SKILL.md"), "missing-name"),
            (expand("{ROOT}/vendor/copy/duplicate/SKILL.md"), "duplicate-name"),
        ]
    );
    let codes: Vec<(&str, &str)> = parsed.warnings.iter().map(|w| (w.code, w.message.as_str())).collect();
    let dup =
        expand("[toolnexus] duplicate skill name \"dup-name\" ({ROOT}/vendor/copy/duplicate/SKILL.md) — keeping first");
    assert_eq!(codes, [("duplicate_skill", dup.as_str())]);
    // The malformed skip carries the parser's own words.
    assert!(!catalog.skipped()[0].detail.is_empty());
}

#[tokio::test]
async fn the_tool_declares_upstreams_schema_and_runs_in_a_toolkit() {
    let catalog = load(&dirs()).await;
    let tool = catalog.tool().unwrap();
    assert_eq!((tool.name(), tool.source()), ("skill", ToolSource::Skill));
    assert_eq!(tool.description(), toolnexus::skill::SKILL_TOOL_DESCRIPTION);
    assert_eq!(
        serde_json::to_string(tool.input_schema()).unwrap(),
        r#"{"type":"object","properties":{"name":{"type":"string","description":"The name of the skill to load"}},"required":["name"],"additionalProperties":false}"#
    );
    let tk = Toolkit::new(vec![tool]).unwrap();
    let r = tk.execute("skill", json!({"name": "folded"}), ToolContext::default()).await.unwrap();
    assert!(r.output.starts_with("<skill_content name=\"folded\">\n# Skill: folded\n\nFolded body.\n"));
    // A name that is not a string is read as Python's str() of it, as upstream does.
    let r = tk.execute("skill", json!({"name": 5}), ToolContext::default()).await.unwrap();
    assert!(r.output.starts_with("Skill \"5\" not found."));
}

#[tokio::test]
async fn the_sample_limit_caps_or_omits_the_file_list() {
    let defs = data_defs();
    for (limit, name, want) in DATA_OUTPUTS {
        let spec = SkillsSpec { skills: Some(defs.clone()), skill_sample_limit: *limit, ..dirs() };
        let catalog = load(&spec).await;
        assert_eq!(call(&catalog, name).await.output, expand(want), "{name} at limit {limit}");
    }
}

fn data_defs() -> Vec<SkillDef> {
    vec![
        SkillDef {
            description: Some("From data.".into()),
            resources: vec!["scripts/run.sh".into(), "ref/a.md".into(), "ref/b.md".into()],
            ..SkillDef::new("data-skill", "\n  Data body.  \n")
        },
        SkillDef::new("instruction-only", "Just text."),
        SkillDef {
            description: Some("Custom base.".into()),
            resources: vec!["x".into()],
            base: Some("mem://skills/custom/".into()),
            ..SkillDef::new("custom-base", "c")
        },
        SkillDef { base: Some("mem://nameless/".into()), ..SkillDef::new("", "nameless") },
        SkillDef { description: Some("shadow".into()), ..SkillDef::new("hello-world", "shadow body") },
    ]
}

#[tokio::test]
async fn data_skills_come_after_directories_and_never_touch_disk() {
    let spec = SkillsSpec { skills: Some(data_defs()), ..dirs() };
    let catalog = load(&spec).await;
    let mut want: Vec<&str> = DIR_SKILLS.to_vec();
    want.extend(["data-skill", "instruction-only", "custom-base"]);
    assert_eq!(names(&catalog), want);
    assert_eq!(
        skipped(catalog.skipped())[3..],
        [("mem://nameless/".to_string(), "missing-name"), ("skill://hello-world/".to_string(), "duplicate-name")]
    );
    let r = call(&catalog, "data-skill").await;
    assert_eq!(r.metadata.unwrap()["dir"], "skill://data-skill/");
    // The directory's hello-world wins over the data one.
    assert!(!call(&catalog, "hello-world").await.output.contains("shadow body"));
}

#[tokio::test]
async fn the_filter_is_an_allowlist_or_a_drop_list() {
    let spec = SkillsSpec {
        skills: Some(data_defs()),
        skills_filter: Some(vec![("data-skill".into(), true), ("hello-world".into(), true), ("ghost".into(), true)]),
        ..dirs()
    };
    let parsed = load_skills(&spec, None).await.unwrap();
    assert_eq!(names(&parsed.value), ["hello-world", "data-skill"]);
    assert_eq!(parsed.value.prompt(), FILTERED_PROMPT);
    assert_eq!(
        call(&parsed.value, "folded").await.output,
        "Skill \"folded\" not found. Available skills: data-skill, hello-world"
    );
    let unknown: Vec<&str> =
        parsed.warnings.iter().filter(|w| w.code == "unknown_skill_filter").map(|w| w.message.as_str()).collect();
    assert_eq!(unknown, ["[toolnexus] skill filter name \"ghost\" matched no skill"]);
    // Only `false`s: everything else stays; `disable_skills` adds `false`s, never over a `true`.
    let spec = SkillsSpec {
        skills: Some(data_defs()),
        skills_filter: Some(vec![("hello-world".into(), false)]),
        disable_skills: vec!["folded".into(), "hello-world".into()],
        ..dirs()
    };
    let dropped = load(&spec).await;
    assert!(dropped.get("hello-world").is_none() && dropped.get("folded").is_none());
    assert_eq!(dropped.skills().len(), DIR_SKILLS.len() + 3 - 2);
    let spec = SkillsSpec {
        skills_filter: Some(vec![("literal".into(), true)]),
        disable_skills: vec!["literal".into()],
        ..dirs()
    };
    assert_eq!(names(&load(&spec).await), ["literal"]);
    // The inventory is never filtered.
    let inv = list_skills(&spec, None).await.unwrap().value;
    assert_eq!(inv.skills.len(), DIR_SKILLS.len());
    assert_eq!(inv.skipped.len(), 3);
}

struct Provider(Result<Vec<SkillDef>, String>);

impl SkillProvider for Provider {
    fn skills(&self) -> HookFuture<Vec<SkillDef>> {
        let r = self.0.clone().map_err(|e| Error::host(e.into()));
        Box::pin(async move { r })
    }
}

#[tokio::test]
async fn a_provider_adds_skills_last_and_its_failure_is_isolated() {
    let spec = SkillsSpec { skills: Some(vec![SkillDef::new("given", "g")]), ..SkillsSpec::default() };
    let good: Arc<dyn SkillProvider> =
        Arc::new(Provider(Ok(vec![SkillDef::new("provided", "p"), SkillDef::new("given", "x")])));
    let parsed = load_skills(&spec, Some(good)).await.unwrap();
    assert_eq!(names(&parsed.value), ["given", "provided"]);
    assert_eq!(parsed.value.skipped()[0].reason, SkipReason::DuplicateName);
    let bad: Arc<dyn SkillProvider> = Arc::new(Provider(Err("catalog service down".into())));
    let parsed = load_skills(&dirs(), Some(bad.clone())).await.unwrap();
    assert_eq!(parsed.value.skills().len(), DIR_SKILLS.len());
    let failed: Vec<&str> =
        parsed.warnings.iter().filter(|w| w.code == "skill_provider_failed").map(|w| w.message.as_str()).collect();
    assert_eq!(failed, ["[toolnexus] skill provider failed: catalog service down"]);
    // A provider alone configures the source.
    let only = load_skills(&SkillsSpec::default(), Some(bad)).await.unwrap().value;
    assert!(only.tool().is_some());
    assert_eq!(only.prompt(), "No skills are currently available.");
}

#[tokio::test]
async fn no_source_means_no_tool_and_an_empty_one_says_so() {
    let none = load(&SkillsSpec::default()).await;
    assert!(none.tool().is_none());
    assert_eq!(none.prompt(), "");
    let empty = load(&SkillsSpec { skills_dir: Some(vec![]), ..SkillsSpec::default() }).await;
    assert_eq!(empty.prompt(), "No skills are currently available.");
    let r = call(&empty, "x").await;
    assert_eq!((r.output.as_str(), r.is_error), ("Skill \"x\" not found. Available skills: none", true));
    let missing = PathBuf::from("/nonexistent/skills-dir");
    let parsed =
        load_skills(&SkillsSpec { skills_dir: Some(vec![missing]), ..SkillsSpec::default() }, None).await.unwrap();
    assert_eq!(parsed.warnings[0].code, "skills_dir_not_found");
    assert_eq!(parsed.warnings[0].message, "[toolnexus] skills dir not found: /nonexistent/skills-dir");
}

/// A scratch folder removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "toolnexus-skills-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, rel: &str, bytes: &[u8]) {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn unreadable_files_and_hidden_folders() {
    let s = Scratch::new();
    s.write("ok/SKILL.md", b"---\nname: ok\ndescription: fine\n---\nbody\n");
    s.write("binary/SKILL.md", b"---\nname: bin\xff\xfe\n---\n");
    s.write("node_modules/dep/SKILL.md", b"---\nname: in-node-modules\n---\n");
    s.write(".git/x/SKILL.md", b"---\nname: in-git\n---\n");
    s.write("ok/node_modules/n.txt", b"n");
    s.write("ok/notes.txt", b"n");
    let spec = SkillsSpec { skills_dir: Some(vec![s.0.clone()]), ..SkillsSpec::default() };
    let inv = list_skills(&spec, None).await.unwrap().value;
    assert_eq!(inv.skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["ok"]);
    assert_eq!(inv.skipped.len(), 1);
    assert_eq!(inv.skipped[0].reason, SkipReason::Unreadable);
    assert!(inv.skipped[0].location.ends_with("binary/SKILL.md"));
    let catalog = load(&spec).await;
    let out = call(&catalog, "ok").await.output;
    assert!(out.contains("/ok/notes.txt</file>") && !out.contains("node_modules"));
}

#[tokio::test]
async fn relative_dirs_are_made_absolute() {
    // Tests run in the package folder.
    let spec = SkillsSpec {
        skills_dir: Some(vec![PathBuf::from("tests/fixtures/skills/./folded/..")]),
        ..SkillsSpec::default()
    };
    let catalog = load(&spec).await;
    let folded = catalog.get("folded").unwrap();
    assert_eq!(folded.location, expand("{ROOT}/folded/SKILL.md"));
}

#[test]
fn the_spec_reads_from_json() {
    let p = SkillsSpec::from_json(&json!({
        "skillsDir": "/a",
        "skills": [{"name": "x", "content": "c", "resources": ["r"], "base": "b://"}],
        "skillsFilter": {"x": true},
        "skillSampleLimit": -1,
        "disableSkills": ["y"],
        "mcp_config": {"ignored": "by this reader"},
    }))
    .unwrap();
    let spec = p.value;
    assert_eq!(spec.skills_dir, Some(vec![PathBuf::from("/a")]));
    assert_eq!(spec.skills.as_ref().unwrap()[0].resources, ["r"]);
    assert_eq!((spec.skill_sample_limit, spec.disable_skills.len()), (-1, 1));
    assert_eq!(spec.skills_filter, Some(vec![("x".to_string(), true)]));
    let spec = SkillsSpec::from_json(&json!({"skills_dir": ["/a", "/b"], "skills": null})).unwrap().value;
    assert_eq!(spec.skills_dir.unwrap().len(), 2);
    assert!(spec.skills.is_none());
    for bad in [
        json!({"skills_dir": 3}),
        json!({"skills_dir": ["/a", 1]}),
        json!({"skills": [{"name": "x", "nope": 1}]}),
        json!({"skills": [{"name": 1}]}),
        json!({"skills_filter": {"x": "yes"}}),
        json!({"skill_sample_limit": -2}),
        json!({"skill_sample_limit": 1.5}),
        json!([]),
    ] {
        let e = SkillsSpec::from_json(&bad).unwrap_err();
        assert_eq!(e.kind(), toolnexus::ErrorKind::InvalidArgument, "{bad}");
    }
}

/// What upstream's Python port (0.21.0, `skill.py`) answers for each skill of the fixture
/// folder, `{ROOT}` standing for the folder's absolute path.
const DIR_OUTPUTS: &[(&str, &str)] = &[
    (
        "colon-space",
        r#"<skill_content name="colon-space">
# Skill: colon-space

YAML refuses the unquoted ": "; the line-wise read rescues it.

Base directory for this skill: file://{ROOT}/colon-space
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>

</skill_files>
</skill_content>"#,
    ),
    (
        "crlf",
        r#"<skill_content name="crlf">
# Skill: crlf

Line one.
Line two.

Base directory for this skill: file://{ROOT}/crlf
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>

</skill_files>
</skill_content>"#,
    ),
    (
        "cyclic",
        r#"<skill_content name="cyclic">
# Skill: cyclic

Cyclic.

Base directory for this skill: file://{ROOT}/cyclic
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>{ROOT}/cyclic/notes.md</file>
<file>{ROOT}/cyclic/self/notes.md</file>
</skill_files>
</skill_content>"#,
    ),
    (
        "dup-name",
        r#"<skill_content name="dup-name">
# Skill: dup-name

Top-level body.

Base directory for this skill: file://{ROOT}/duplicate
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>

</skill_files>
</skill_content>"#,
    ),
    (
        "folded",
        r#"<skill_content name="folded">
# Skill: folded

Folded body.

Base directory for this skill: file://{ROOT}/folded
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>

</skill_files>
</skill_content>"#,
    ),
    (
        "hello-world",
        r#"<skill_content name="hello-world">
# Skill: hello-world

# Hello World

1. Run `scripts/greet.sh` from this skill's base directory with the person's name.
2. Read `reference/notes.md` if the name needs a title.
3. Reply with the greeting.

Base directory for this skill: file://{ROOT}/hello-world
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>{ROOT}/hello-world/reference/notes.md</file>
<file>{ROOT}/hello-world/scripts/greet.sh</file>
</skill_files>
</skill_content>"#,
    ),
    (
        "linked-file-skill",
        r#"<skill_content name="linked-file-skill">
# Skill: linked-file-skill

Linked file body.

Base directory for this skill: file://{ROOT}/linked-file
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>{ROOT}/linked-file/extra.txt</file>
</skill_files>
</skill_content>"#,
    ),
    (
        "linked-skill",
        r#"<skill_content name="linked-skill">
# Skill: linked-skill

Linked body.

Base directory for this skill: file://{ROOT}/linked
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>{ROOT}/linked/tool.py</file>
</skill_files>
</skill_content>"#,
    ),
    (
        "literal",
        r#"<skill_content name="literal">
# Skill: literal

Literal body.

Base directory for this skill: file://{ROOT}/literal
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>{ROOT}/literal/examples/a.txt</file>
</skill_files>
</skill_content>"#,
    ),
    (
        "many-files",
        r#"<skill_content name="many-files">
# Skill: many-files

Many.

Base directory for this skill: file://{ROOT}/many-files
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>{ROOT}/many-files/Alpha.txt</file>
<file>{ROOT}/many-files/f01.txt</file>
<file>{ROOT}/many-files/f02.txt</file>
<file>{ROOT}/many-files/f03.txt</file>
<file>{ROOT}/many-files/f04.txt</file>
<file>{ROOT}/many-files/f05.txt</file>
<file>{ROOT}/many-files/f06.txt</file>
<file>{ROOT}/many-files/f07.txt</file>
<file>{ROOT}/many-files/f08.txt</file>
<file>{ROOT}/many-files/f09.txt</file>
</skill_files>
</skill_content>"#,
    ),
    (
        "undescribed",
        r#"<skill_content name="undescribed">
# Skill: undescribed

Loadable, but not listed in the catalog.

Base directory for this skill: file://{ROOT}/undescribed
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>

</skill_files>
</skill_content>"#,
    ),
];

const NOT_FOUND: &str = r#"Skill "nope" not found. Available skills: colon-space, crlf, cyclic, dup-name, folded, hello-world, linked-file-skill, linked-skill, literal, many-files, undescribed"#;

const PROMPT: &str = r#"Skills provide specialized instructions and workflows for specific tasks.
Use the skill tool to load a skill when a task matches its description.

## Available Skills
- **colon-space**: Work out billable hours. Trigger on: update the timesheet.
- **crlf**: Written with CRLF line ends.
- **cyclic**: Its folder links to itself.
- **dup-name**: the top-level copy
- **folded**: A folded description that runs across two source lines.
- **hello-world**: Greets someone by name. Use when asked to say hello.
- **linked-file-skill**: Its SKILL.md is a symlink.
- **linked-skill**: Found through a symlinked folder.
- **literal**: First line of the description.
Second line, with a colon: fine inside a block scalar.
- **many-files**: Has more files than the sample shows."#;

/// Data skills (S1, S4, S5) loaded next to the fixture folder: `(sample limit, name, output)`.
const DATA_OUTPUTS: &[(i64, &str, &str)] = &[
    (
        0,
        "data-skill",
        r#"<skill_content name="data-skill">
# Skill: data-skill

Data body.

Base directory for this skill: skill://data-skill/
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>scripts/run.sh</file>
<file>ref/a.md</file>
<file>ref/b.md</file>
</skill_files>
</skill_content>"#,
    ),
    (
        0,
        "instruction-only",
        r#"<skill_content name="instruction-only">
# Skill: instruction-only

Just text.

Base directory for this skill: skill://instruction-only/
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
</skill_content>"#,
    ),
    (
        0,
        "custom-base",
        r#"<skill_content name="custom-base">
# Skill: custom-base

c

Base directory for this skill: mem://skills/custom/
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>x</file>
</skill_files>
</skill_content>"#,
    ),
    (
        0,
        "hello-world",
        r#"<skill_content name="hello-world">
# Skill: hello-world

# Hello World

1. Run `scripts/greet.sh` from this skill's base directory with the person's name.
2. Read `reference/notes.md` if the name needs a title.
3. Reply with the greeting.

Base directory for this skill: file://{ROOT}/hello-world
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>{ROOT}/hello-world/reference/notes.md</file>
<file>{ROOT}/hello-world/scripts/greet.sh</file>
</skill_files>
</skill_content>"#,
    ),
    (
        2,
        "data-skill",
        r#"<skill_content name="data-skill">
# Skill: data-skill

Data body.

Base directory for this skill: skill://data-skill/
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>scripts/run.sh</file>
<file>ref/a.md</file>
</skill_files>
</skill_content>"#,
    ),
    (
        2,
        "many-files",
        r#"<skill_content name="many-files">
# Skill: many-files

Many.

Base directory for this skill: file://{ROOT}/many-files
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>{ROOT}/many-files/Alpha.txt</file>
<file>{ROOT}/many-files/f01.txt</file>
</skill_files>
</skill_content>"#,
    ),
    (
        -1,
        "data-skill",
        r#"<skill_content name="data-skill">
# Skill: data-skill

Data body.

Base directory for this skill: skill://data-skill/
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
</skill_content>"#,
    ),
    (
        -1,
        "hello-world",
        r#"<skill_content name="hello-world">
# Skill: hello-world

# Hello World

1. Run `scripts/greet.sh` from this skill's base directory with the person's name.
2. Read `reference/notes.md` if the name needs a title.
3. Reply with the greeting.

Base directory for this skill: file://{ROOT}/hello-world
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
</skill_content>"#,
    ),
];

const FILTERED_PROMPT: &str = r#"Skills provide specialized instructions and workflows for specific tasks.
Use the skill tool to load a skill when a task matches its description.

## Available Skills
- **data-skill**: From data.
- **hello-world**: Greets someone by name. Use when asked to say hello."#;

#[test]
fn load_options_use_upstreams_names_strictly() {
    let s = SkillsSpec::from_load_json(&json!({"dirs": "a", "filter": {"x": false}, "sampleLimit": -1})).unwrap();
    assert_eq!(s.skills_dir, Some(vec![std::path::PathBuf::from("a")]));
    assert_eq!((s.skills_filter, s.skill_sample_limit), (Some(vec![("x".to_string(), false)]), -1));
    let e = SkillsSpec::from_load_json(&json!({"skills_dir": "a"})).unwrap_err();
    assert_eq!(e.message(), "unknown load_skills option key \"skills_dir\"");
    let e = SkillsSpec::from_load_json(&json!({"sampleLimit": -2})).unwrap_err();
    assert!(e.message().starts_with("load_skills option key \"sampleLimit\" must be -1"), "{}", e.message());
    let e = SkillsSpec::from_load_json(&json!({"dirs": 3})).unwrap_err();
    assert!(e.message().contains("\"dirs\" must be a string or an array of strings"), "{}", e.message());
    assert_eq!(toolnexus::SkillOrigin::Data.as_str(), "logical");
}
