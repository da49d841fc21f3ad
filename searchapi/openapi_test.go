package searchapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPIDescribesEveryRoute: /openapi.json is an OpenAPI 3 document
// whose paths and methods are exactly the routes the handler serves, every
// $ref in it resolves, and every GET /v1/search parameter the handler
// reads is described (and none it does not).
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	var served, described []string
	for _, r := range routes {
		served = append(served, r.method+" "+r.path)
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			described = append(described, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(served)
	slices.Sort(described)
	if !slices.Equal(served, described) {
		t.Errorf("routes served:\n  %s\ndescribed:\n  %s", strings.Join(served, "\n  "), strings.Join(described, "\n  "))
	}

	var all any
	json.Unmarshal(openAPI, &all)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if ref, ok := x.(string); ok && k == "$ref" {
					if !resolves(all, ref) {
						t.Errorf("$ref %s does not resolve", ref)
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(all)

	var params []string
	var get struct {
		Parameters []struct{ Name string } `json:"parameters"`
	}
	if err := json.Unmarshal(doc.Paths["/v1/search"]["get"], &get); err != nil {
		t.Fatal(err)
	}
	for _, p := range get.Parameters {
		params = append(params, p.Name)
	}
	slices.Sort(params)
	want := slices.Sorted(slices.Values(searchParams))
	if !slices.Equal(params, want) {
		t.Errorf("GET /v1/search parameters described %v, read %v", params, want)
	}
}

func resolves(doc any, ref string) bool {
	if !strings.HasPrefix(ref, "#/") {
		return false
	}
	v := doc
	for _, part := range strings.Split(ref[2:], "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[part]; !ok {
			return false
		}
	}
	return v != nil
}

// TestOpenAPIBodyFields: the described POST body and answer fields are
// the JSON fields of SearchBody and Result.
func TestOpenAPIBodyFields(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{"SearchBody": SearchBody{}, "Result": Result{}, "Hit": Hit{}, "Expansion": Expansion{},
		"Doc": Doc{}, "Retriever": RetrieverInfo{}, "Health": Health{}, "QueryItem": QueryItem{}} {
		var described []string
		for p := range doc.Components.Schemas[name].Properties {
			described = append(described, p)
		}
		slices.Sort(described)
		if got := jsonFields(v); !slices.Equal(got, described) {
			t.Errorf("%s: fields %v, described %v", name, got, described)
		}
	}
}

// jsonFields are the JSON names of a struct's fields, sorted.
func jsonFields(v any) []string {
	out := tagNames(v)
	slices.Sort(out)
	return out
}

func tagNames(v any) []string {
	var out []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		tag := rt.Field(i).Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}
