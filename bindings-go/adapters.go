package toolnexus

import (
	"context"
	"log"
)

// The Go port's free adapter functions: the declarations of a list of tools, outside any
// toolkit, as the engine renders them (a toolkit of just these tools, no built-ins).

// ToOpenAI returns tools as OpenAI function declarations
// ({"type": "function", "function": {name, description, parameters}}).
func ToOpenAI(tools []Tool) []any { return adapt(tools, "openai") }

// ToAnthropic returns tools as Anthropic tool declarations ({name, description, input_schema}).
func ToAnthropic(tools []Tool) []any { return adapt(tools, "anthropic") }

// ToGemini returns tools as Gemini declarations ([{"functionDeclarations": [...]}]).
func ToGemini(tools []Tool) []any { return adapt(tools, "gemini") }

// adapt renders tools in style. The port's signature has no error: a list the engine refuses
// (a relay tool named like a built-in) is logged and declares nothing.
func adapt(tools []Tool, style string) []any {
	tk, err := CreateToolkit(context.Background(), Options{Builtins: false, ExtraTools: tools})
	if err != nil {
		log.Printf("[toolnexus] To%s: %v", map[string]string{"openai": "OpenAI", "anthropic": "Anthropic", "gemini": "Gemini"}[style], err)
		return []any{}
	}
	defer tk.Close()
	return tk.declarations(style)
}
