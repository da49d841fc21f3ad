package usage

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/internal/errtext"
)

// Price is what a model charges, in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CachedInput is the rate of the prompt tokens the server read from
	// its prompt cache (Usage.CachedPromptTokens); nil prices them at
	// Input.
	CachedInput *float64 `json:"cached_input,omitempty"`
}

// Cost is the price of a tally's tokens.
func (p Price) Cost(t Tally) float64 {
	cached := p.Input
	if p.CachedInput != nil {
		cached = *p.CachedInput
	}
	return (float64(t.PromptTokens-t.CachedPromptTokens)*p.Input + float64(t.CachedPromptTokens)*cached +
		float64(t.CompletionTokens)*p.Output) / 1e6
}

// Prices maps model names to prices. Lookup finds a model by its exact
// name, then ignoring case, then the entry "*" if there is one (a default,
// e.g. 0 for local models).
type Prices map[string]Price

// Lookup returns the price of model.
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	for k, pr := range p {
		if strings.EqualFold(k, model) {
			return pr, true
		}
	}
	pr, ok := p["*"]
	return pr, ok
}

// ReadPrices reads a price table (ParsePrices) from a file.
func ReadPrices(path string) (Prices, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("price table: %w", err)
	}
	return ParsePrices(b, path)
}

// ParsePrices reads a price table in YAML: a mapping from model name to
// its dollars per million input (prompt) and output (completion) tokens,
// and optionally cached input tokens (those the server read from its
// prompt cache; without the rate they cost input),
//
//	gpt-4o: {input: 2.50, cached_input: 1.25, output: 10.00}
//	text-embedding-3-large: {input: 0.13}   # output defaults to 0
//	"*": {input: 0, output: 0}              # every other model
//
// name is the file's name for error messages, which give its line.
func ParsePrices(data []byte, name string) (Prices, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if err := errtext.CheckFile(name, data); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	out := Prices{}
	if len(doc.Content) == 0 {
		return out, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: a price table maps model names to {input, output} dollars per million tokens", name, root.Line)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		model := strings.TrimSpace(k.Value)
		if k.Kind != yaml.ScalarNode || model == "" {
			return nil, fmt.Errorf("%s:%d: a model name must be a non-empty string", name, k.Line)
		}
		if _, dup := out[model]; dup {
			return nil, fmt.Errorf("%s:%d: model %q is priced twice", name, k.Line, model)
		}
		for other := range out {
			// Lookup ignores case: two such names would price a model
			// by whichever it met first.
			if strings.EqualFold(other, model) {
				return nil, fmt.Errorf("%s:%d: model %q is priced twice: %q differs only in case, and prices are looked up ignoring case; keep one", name, k.Line, model, other)
			}
		}
		if v.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: %q: want {input: DOLLARS, output: DOLLARS} per million tokens", name, v.Line, model)
		}
		var p Price
		seen := map[string]bool{}
		for j := 0; j+1 < len(v.Content); j += 2 {
			fk, fv := v.Content[j], v.Content[j+1]
			var dst *float64
			switch fk.Value {
			case "input":
				dst = &p.Input
			case "output":
				dst = &p.Output
			case "cached_input":
				p.CachedInput = new(float64)
				dst = p.CachedInput
			default:
				return nil, fmt.Errorf("%s:%d: %q: unknown key %q (want input, output and cached_input, dollars per million tokens)", name, fk.Line, model, fk.Value)
			}
			if seen[fk.Value] {
				return nil, fmt.Errorf("%s:%d: %q: %s given twice", name, fk.Line, model, fk.Value)
			}
			seen[fk.Value] = true
			x, err := strconv.ParseFloat(strings.TrimPrefix(fv.Value, "$"), 64)
			if fv.Kind != yaml.ScalarNode || err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, fmt.Errorf("%s:%d: %q: %s is %q; want a non-negative number of dollars per million tokens", name, fv.Line, model, fk.Value, fv.Value)
			}
			*dst = x
		}
		if len(seen) == 0 {
			return nil, fmt.Errorf("%s:%d: %q: no price given (input, output, cached_input)", name, v.Line, model)
		}
		out[model] = p
	}
	return out, nil
}
