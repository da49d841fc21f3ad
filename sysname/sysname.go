// Package sysname is r2med's one rule for naming a retrieval system: a
// short name made from the short names of its stages, the same for a run,
// its run tag and result file, the search service, R2MED's published
// result files and every table, chart and page that shows it.
//
//	bm25                               one retriever, by its short name
//	rrf(bm25,bge)                      several, fused: the method and the parts
//	hyde/gpt4 → bm25                   on expanded queries: method/LLM, as R2MED's tables
//	bm25 → insertrank:deepseek-r1@20   reranked: the reranker's kind:model and depth
//	rrf(bm25,run:bm25)                 a run file: run: and its own tag (or path stem)
//	bm25 #3f2a                         two systems of one view that share a name
//
// A name is for people and stays short: the full settings are the
// manifest's (leaderboard shows them on hover and in exports). The
// package imports nothing of ours, so every layer can name systems by it.
package sysname

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strconv"
	"strings"
)

// Arrow joins the stages of a name: expansion → retrieval → reranking.
const Arrow = " → "

// Stages are a system's stages by their short names, in the order data
// flows through them. The zero value of a field means the stage is absent.
type Stages struct {
	// Expansion is the generation the queries were expanded with:
	// "method/llm" (Expansion).
	Expansion string
	// Retrievers are the retrievers' short names ("bm25", "bm25-lucene",
	// "bge", "run:bm25"); one, or several fused. A single entry may also
	// be a whole retrieval name read back from a file ("rrf(bm25,bge)").
	Retrievers []string
	// Fusion is how several retrievers are fused ("rrf", "combsum");
	// empty means "rrf".
	Fusion string
	// Reranker is the reranker's short name (Reranker: "kind:model", or
	// a published file's "rankllama"), Depth how many documents it
	// reranks (0: not said).
	Reranker string
	Depth    int
}

// Name is the system's name: the stages joined by Arrow,
// "hyde/gpt4 → rrf(bm25,bge) → insertrank:deepseek-r1@20".
func (s Stages) Name() string {
	var parts []string
	if s.Expansion != "" {
		parts = append(parts, s.Expansion)
	}
	if r := s.Retrieval(); r != "" {
		parts = append(parts, r)
	}
	if s.Reranker != "" {
		r := s.Reranker
		if s.Depth > 0 {
			r += "@" + strconv.Itoa(s.Depth)
		}
		parts = append(parts, r)
	}
	return strings.Join(parts, Arrow)
}

// Retrieval names the retrieval stage: the retriever, or for several the
// fusion method and the parts, "rrf(bm25,bge)".
func (s Stages) Retrieval() string {
	if len(s.Retrievers) <= 1 {
		return strings.Join(s.Retrievers, "")
	}
	method := strings.ToLower(s.Fusion)
	if method == "" {
		method = "rrf"
	}
	return method + "(" + strings.Join(s.Retrievers, ",") + ")"
}

// Expansion names an expansion by its method and the LLM that generated
// it, as R2MED's tables do: "hyde/gpt4".
func Expansion(method, llm string) string {
	if method == "" {
		return ""
	}
	if llm == "" {
		return method
	}
	return method + "/" + llm
}

// Reranker names a reranker by its kind and model, "insertrank:deepseek-r1"
// ("tei" when no model is named), so that two kinds asking one model
// (InsertRank and ReasonRank with DeepSeek-R1) are told apart.
func Reranker(kind, model string) string {
	kind = strings.ToLower(kind)
	if model == "" {
		return kind
	}
	return kind + ":" + model
}

// RunFile names a run file used as a retriever: "run:" and the system it
// holds (RunSystem), "run:bm25".
func RunFile(tag, path string) string { return "run:" + RunSystem(tag, path) }

// RunSystem is the system a run file holds: the tag its lines carry when
// one tag is used throughout (the name of the system that made it), else
// the stem of its file name ("bm25" for runs/bm25.trec.gz).
func RunSystem(tag, path string) string {
	if tag == "" {
		return Stem(path)
	}
	return tag
}

// Stem is a path's file name without its directory and extensions:
// "bm25" for "runs/bm25.trec.gz".
func Stem(path string) string {
	base := filepath.Base(path)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

// Tag is a name as a TREC run tag, which holds no white space: the
// spaces around an arrow dropped, other runs of white space made "_"
// ("bm25→insertrank:deepseek-r1@20", "my_baseline").
func Tag(name string) string {
	name = strings.ReplaceAll(name, Arrow, strings.TrimSpace(Arrow))
	return strings.Join(strings.Fields(name), "_")
}

// hashLen is the hex digits of a suffix: 4, more only where 4 collide.
const hashLen = 4

// Disambiguate gives names that are shared by entries with different
// keys a short hash suffix of their key, "bm25 #3f2a", and leaves every
// other name as it is. keys[i] is what makes entry i the system it is
// (its settings, canonically written): the suffix is stable across runs
// and machines, and entries with equal names and equal keys keep their
// name. The suffix grows past four digits only where four digits of two
// keys agree.
func Disambiguate(names, keys []string) []string {
	out := append([]string(nil), names...)
	order, byName, taken := groups(names)
	for _, n := range order {
		idx := byName[n]
		hashes := map[string]string{} // key → full hash
		for _, i := range idx {
			hashes[keys[i]] = hashOf(keys[i])
		}
		if len(hashes) < 2 {
			continue
		}
		for l := hashLen; l <= 64; l++ {
			seen := map[string]bool{}
			ok := true
			for _, h := range hashes {
				s := n + " #" + h[:l]
				if seen[s] || taken[s] {
					ok = false
					break
				}
				seen[s] = true
			}
			if ok || l == 64 {
				for _, i := range idx {
					out[i] = n + " #" + hashes[keys[i]][:l]
				}
				break
			}
		}
	}
	return out
}

// groups are the distinct names in order of first use, the entries of
// each, and every name marked taken.
func groups(names []string) (order []string, of map[string][]int, taken map[string]bool) {
	of, taken = map[string][]int{}, map[string]bool{}
	for i, n := range names {
		if !taken[n] {
			order = append(order, n)
		}
		taken[n] = true
		of[n] = append(of[n], i)
	}
	return order, of, taken
}

func hashOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Base is a name without the suffix Disambiguate gave it, and the suffix
// (" #3f2a", "" when there is none): what a cut label must keep whole.
func Base(name string) (base, suffix string) {
	i := strings.LastIndex(name, " #")
	if i < 0 {
		return name, ""
	}
	h := name[i+2:]
	if len(h) < hashLen {
		return name, ""
	}
	for _, c := range h {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return name, ""
		}
	}
	return name[:i], name[i:]
}
