package toolnexus

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
)

// NativeToolReflect is NativeTool with the input schema read from T, a struct, as the Go port
// does: each exported field is a property named by its json tag (`json:"-"` leaves it out),
// required unless the tag says omitempty; strings are "string", numbers "number", bools
// "boolean", slices and arrays "array" (with items), maps "object", nested structs objects
// of their own. The model's arguments are decoded into a T through its json tags before fn
// runs; arguments that do not decode are an error result.
func NativeToolReflect[T any](
	name, description string,
	fn func(ctx context.Context, in T) (string, error),
) Tool {
	var zero T
	return NativeTool(name, description, structSchema(reflect.TypeOf(zero)), func(ctx context.Context, args map[string]any) (string, error) {
		var in T
		raw, err := json.Marshal(args)
		if err == nil {
			err = json.Unmarshal(raw, &in)
		}
		if err != nil {
			return "", err
		}
		return fn(ctx, in)
	})
}

// structSchema is the object schema of struct type t; nil (the engine's empty object
// schema) for any other type.
func structSchema(t reflect.Type) JSONSchema {
	for t != nil && t.Kind() == reflect.Ptr {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	props := map[string]any{}
	required := []string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, optional, ok := jsonName(f)
		if !ok {
			continue
		}
		props[name] = typeSchema(f.Type)
		if !optional {
			required = append(required, name)
		}
	}
	schema := JSONSchema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	return schema
}

// jsonName is a field's name in JSON, whether its tag says omitempty, and false for `json:"-"`.
func jsonName(f reflect.StructField) (string, bool, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	optional := false
	for _, o := range strings.Split(opts, ",") {
		optional = optional || o == "omitempty"
	}
	return name, optional, true
}

// typeSchema is the schema fragment of a field of type t.
func typeSchema(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Ptr {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": typeSchema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object"}
	case reflect.Struct:
		return structSchema(t)
	default:
		return map[string]any{}
	}
}
