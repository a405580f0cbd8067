package toolnexus

// The skill source on its own, with the Go port's names: skills listed (ListSkills) and
// loaded into a `skill` tool (LoadSkills, LoadSkillsWith). Discovery, parsing, merging, the
// filter, the tool's output and the catalog are the engine's; these functions convert.

// #include "bridge.h"
import "C"

import (
	"context"
	"encoding/json"
	"log"
)

// SkillInfo describes one skill, as the engine read it.
type SkillInfo struct {
	Name        string
	Description string
	Location    string // the absolute path of SKILL.md (fs) or the logical base (data)
	Content     string // the body after the frontmatter
	Origin      string // "fs" or "logical"
	Resources   []string
	Base        string
}

// SkillSkipReason is why a candidate did not become a skill (the engine's words).
type SkillSkipReason string

// The skip reasons the engine reports.
const (
	SkipMissingName   SkillSkipReason = "missing-name"
	SkipMalformed     SkillSkipReason = "malformed-frontmatter"
	SkipDuplicateName SkillSkipReason = "duplicate-name"
	SkipUnreadable    SkillSkipReason = "unreadable"
)

// SkillSkip records a skipped candidate and why. Detail (the engine's explanation) is an
// addition to the Go port.
type SkillSkip struct {
	Location string
	Reason   SkillSkipReason
	Detail   string
}

// SkillInventory is the result of ListSkills: every skill found (unfiltered) and every
// candidate skipped.
type SkillInventory struct {
	Skills  []SkillInfo
	Skipped []SkillSkip
}

// LoadSkillsOptions configures LoadSkillsWith and ListSkills. Zero fields are left to the
// engine's defaults.
type LoadSkillsOptions struct {
	Dirs        []string
	Skills      []SkillDef
	Filter      map[string]bool // a skill allowlist (or drop-list) keyed on name
	SampleLimit int             // 0: the engine's default; n > 0: a cap; -1: no sample
}

// SkillSource is a loaded skill source: its skills by name and the `skill` tool, which runs
// in the engine. Skipped (the candidates the engine skipped) is an addition to the Go port.
type SkillSource struct {
	Skills  map[string]SkillInfo
	Skipped []SkillSkip
	Tool    Tool

	tk *Toolkit // the engine toolkit of just this source
}

// skillTexts are the skill source's fixed texts, read from the engine once.
var skillTexts = readSkillTexts()

// SkillsPromptPreamble heads Prompt() when at least one skill has a description (the
// engine's text, read at load time).
var SkillsPromptPreamble = skillTexts.Preamble

// SkillToolDescription is the `skill` tool's description (the engine's text, read at load
// time).
var SkillToolDescription = skillTexts.ToolDescription

type engineSkillTexts struct {
	Preamble        string `json:"preamble"`
	ToolDescription string `json:"tool_description"`
	NoSkills        string `json:"no_skills"`
}

func readSkillTexts() engineSkillTexts {
	var texts engineSkillTexts
	if abiErr != nil {
		return texts
	}
	out, err := engineOut(func(out, errJSON **C.char) C.int32_t { return C.tn_skill_texts(out, errJSON) })
	if err == nil {
		err = json.Unmarshal([]byte(out), &texts)
	}
	if err != nil {
		log.Printf("[toolnexus] skill texts: %v", err)
	}
	return texts
}

// engineOut runs an engine call that writes one string, and returns it.
func engineOut(call func(out, errJSON **C.char) C.int32_t) (string, error) {
	var out, errJSON *C.char
	if err := check(call(&out, &errJSON), errJSON); err != nil {
		takeString(out)
		return "", err
	}
	return takeString(out), nil
}

// engineSkills is the JSON of tn_skills_list and tn_toolkit_skills.
type engineSkills struct {
	Skills   []SkillInfo     `json:"skills"`
	Skipped  []SkillSkip     `json:"skipped"`
	Warnings json.RawMessage `json:"warnings"`
}

// ListSkills reads the skills of opts' Dirs and Skills without exposing any (Filter and
// SampleLimit do not apply): the inventory to author a filter from. Options the engine
// refuses are logged and list nothing (the port's signature has no error).
func ListSkills(opts LoadSkillsOptions) *SkillInventory {
	inv := &SkillInventory{Skills: []SkillInfo{}, Skipped: []SkillSkip{}}
	if abiErr != nil {
		log.Printf("[toolnexus] list skills: %v", abiErr)
		return inv
	}
	options := map[string]any{}
	if opts.Dirs != nil {
		options["dirs"] = opts.Dirs
	}
	if opts.Skills != nil {
		options["skills"] = opts.Skills
	}
	raw, err := json.Marshal(options)
	if err != nil {
		log.Printf("[toolnexus] list skills: cannot encode the options: %v", err)
		return inv
	}
	copts := cstring(string(raw))
	defer freeC(copts)
	out, err := engineOut(func(out, errJSON **C.char) C.int32_t { return C.tn_skills_list(copts, out, errJSON) })
	var listed engineSkills
	if err == nil {
		err = json.Unmarshal([]byte(out), &listed)
	}
	if err != nil {
		log.Printf("[toolnexus] list skills: %v", err)
		return inv
	}
	logWarnings(string(listed.Warnings))
	if listed.Skills != nil {
		inv.Skills = listed.Skills
	}
	if listed.Skipped != nil {
		inv.Skipped = listed.Skipped
	}
	return inv
}

// LoadSkills loads the skills under one or more roots and builds the `skill` tool.
func LoadSkills(dirs ...string) *SkillSource {
	return LoadSkillsWith(LoadSkillsOptions{Dirs: dirs})
}

// LoadSkillsWith loads skills (from folders and as data) and builds the `skill` tool, in an
// engine toolkit of just this source. Options the engine refuses are logged, and the
// source's tool answers every call with that error (the port's signature has no error).
func LoadSkillsWith(opts LoadSkillsOptions) *SkillSource {
	src := &SkillSource{Skills: map[string]SkillInfo{}}
	tk, err := loadSkillToolkit(opts)
	if err != nil {
		log.Printf("[toolnexus] load skills: %v", err)
		src.Tool = Tool{Name: "skill", Description: SkillToolDescription, Source: SourceSkill,
			Execute: func(map[string]any, *ToolContext) (ToolResult, error) { return ToolResult{}, err }}
		return src
	}
	src.tk = tk
	for _, t := range tk.Tools() {
		if t.Source == SourceSkill {
			src.Tool = t
		}
	}
	if src.Tool.Execute == nil { // no skill tool: the engine still answers a call (unknown tool)
		src.Tool = engineTool(tk.tkState, "skill", SkillToolDescription, nil, SourceSkill)
	}
	skills, err := toolkitSkills(tk)
	if err != nil {
		log.Printf("[toolnexus] load skills: %v", err)
	}
	for _, s := range skills.Skills {
		src.Skills[s.Name] = s
	}
	src.Skipped = skills.Skipped
	return src
}

func loadSkillToolkit(opts LoadSkillsOptions) (*Toolkit, error) {
	if abiErr != nil {
		return nil, abiErr
	}
	spec, err := toolkitSpec(Options{
		SkillsDir: opts.Dirs, Skills: opts.Skills, SkillsFilter: opts.Filter,
		SkillSampleLimit: opts.SampleLimit, Builtins: false,
	})
	if err != nil {
		return nil, err
	}
	return makeToolkit(context.Background(), spec, nil, toolkitHooks{})
}

// toolkitSkills reads the skills a toolkit exposes (tn_toolkit_skills).
func toolkitSkills(tk *Toolkit) (engineSkills, error) {
	var skills engineSkills
	err := withToolkit(tk, func(native *C.tn_toolkit) error {
		out, err := engineOut(func(out, errJSON **C.char) C.int32_t { return C.tn_toolkit_skills(native, out, errJSON) })
		if err != nil {
			return err
		}
		return json.Unmarshal([]byte(out), &skills)
	})
	return skills, err
}

// Prompt returns the skill catalog for the system prompt, as the engine writes it.
func (s *SkillSource) Prompt() string {
	if s == nil || s.tk == nil {
		return skillTexts.NoSkills
	}
	return s.tk.SkillsPrompt()
}
