package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/usage"
)

// Manifest records how a run was made: enough to rerun it and to tell two
// result files apart when their numbers differ.
type Manifest struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	// Build is the source revision the binary was built from, when Go
	// recorded one (see Version); nil when nothing is known.
	Build     *Build         `json:"build,omitempty"`
	GoVersion string         `json:"go_version"`
	Command   []string       `json:"command,omitempty"`
	Started   time.Time      `json:"started"`
	Task      TaskInfo       `json:"task"`
	Config    map[string]any `json:"config"`
	Inputs    []FileDigest   `json:"inputs"`
	Counts    map[string]int `json:"counts"`
	Stages    []Stage        `json:"stages"`
	// Details holds what a stage wants on record beyond counts: the
	// generation manifest (prompts' digest, fallbacks, agentic traces),
	// the recipe a dense model resolved to.
	Details map[string]any `json:"details,omitempty"`
	Outputs []string       `json:"outputs"`
	// OutputSHA256 holds each output's checksum (file name → sha256), so
	// that a rerun reuses outputs only when they are the ones described.
	OutputSHA256 map[string]string `json:"output_sha256,omitempty"`
	// Name is the system's display name when the user gave one (--name,
	// name: in a pipeline file); empty when it derives from the stages.
	Name string `json:"name,omitempty"`
	// Usage is what the run's model calls cost (tokens, seconds, per-query
	// means, dollars with a price table): zeros for a run that called no
	// model, nil in manifests written before usage was recorded.
	Usage *usage.Summary `json:"usage,omitempty"`
}

// TaskInfo identifies the data a run used.
type TaskInfo struct {
	Name   string `json:"name"`
	Layout string `json:"layout"`
	Split  string `json:"split,omitempty"`
	// Source is where the data was read: an absolute directory (a Hub
	// cache snapshot for Hub data) or "embedded:NAME"; SourceGiven is the
	// path as the user typed it, when that differs.
	Source      string `json:"source"`
	SourceGiven string `json:"source_given,omitempty"`
	// Revision is the Hub commit the data was read at, for Hub tasks.
	Revision string `json:"revision,omitempty"`
}

// FileDigest is an input file's checksum.
type FileDigest struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Stage is one timed step of a run.
type Stage struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// NewManifest starts a manifest stamped with the tool version and the
// command line (CommandLine's form).
func NewManifest(command []string) *Manifest {
	return &Manifest{
		Tool:      "r2med",
		Version:   Version(),
		Build:     ThisBuild(),
		GoVersion: runtime.Version(),
		Command:   CommandLine(command),
		Started:   time.Now().UTC().Truncate(time.Millisecond),
		Config:    map[string]any{},
		Counts:    map[string]int{},
		Details:   map[string]any{},
	}
}

// Time runs fn as a named stage and records its duration.
func (m *Manifest) Time(name string, fn func() error) error {
	start := time.Now()
	err := fn()
	m.Stages = append(m.Stages, Stage{Name: name, Seconds: time.Since(start).Seconds()})
	return err
}

// Count records a count.
func (m *Manifest) Count(name string, n int) { m.Counts[name] = n }

// Add adds n to a count, for what several stages count alike (the hits
// each retriever of a fused run removed for exclusions).
func (m *Manifest) Add(name string, n int) { m.Counts[name] += n }

// Note records what a stage resolved while running (the recipe a
// registry model resolved to) in Details, beside the settings.
func (m *Manifest) Note(key string, v any) { m.Details[key] = v }

// CommandLine is a command line as a manifest records it: the program by
// its name ("r2med", not the temporary path `go run` builds it at), and
// URL arguments (--base-url http://user:pass@host/?key=…) without
// credentials or query values (httpx.RedactArgs), so no secret reaches a
// manifest.
func CommandLine(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	out := httpx.RedactArgs(args)
	out[0] = filepath.Base(args[0])
	return out
}

// AddInputs checksums files (read from disk) into the manifest.
func (m *Manifest) AddInputs(paths ...string) error {
	for _, p := range paths {
		d, err := Digest(p)
		if err != nil {
			return err
		}
		m.Inputs = append(m.Inputs, d)
	}
	return nil
}

// Digest checksums one file.
func Digest(path string) (FileDigest, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileDigest{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return FileDigest{}, err
	}
	return FileDigest{Path: path, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// ContentDigest checksums a task that was read from no file (an embedded
// one) by its documents, queries and judgments, and its exclusions when
// it has any, so that its content stands in for the files a manifest
// lists as inputs: "embedded:NAME".
func ContentDigest(t *ir.Task) FileDigest {
	h := sha256.New()
	var n int64
	put := func(parts ...string) {
		for _, p := range parts {
			k, _ := io.WriteString(h, p)
			h.Write([]byte{0})
			n += int64(k) + 1
		}
	}
	for _, d := range t.Corpus {
		put(d.ID, d.Text)
	}
	for _, q := range t.Queries {
		put(q.ID, q.Text)
	}
	for _, qid := range slices.Sorted(maps.Keys(t.Qrels)) {
		for _, did := range slices.Sorted(maps.Keys(t.Qrels[qid])) {
			put(qid, did, strconv.Itoa(t.Qrels[qid][did]))
		}
	}
	if len(t.Excluded) > 0 {
		put("excluded")
		for _, qid := range slices.Sorted(maps.Keys(t.Excluded)) {
			put(append([]string{qid}, t.Excluded.Sorted(qid)...)...)
		}
	}
	return FileDigest{Path: "embedded:" + t.Name, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}
}

// WriteFile writes the manifest atomically as indented JSON.
func (m *Manifest) WriteFile(path string) error {
	return fileio.WriteAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	})
}

// ReadManifest reads a manifest written by WriteFile.
func ReadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := errtext.CheckJSONFile(path, data); err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fileio.Errorf(path, 0, "not an r2med manifest: %v", err)
	}
	return &m, nil
}

// Manifest counts of the queries a run's means are over: the judged
// queries evaluated (all of them, measure.MeanOverJudged), those that got
// at least one result, and those that got none, which count 0 in every
// mean of results.json and which trec_eval without -c leaves out.
const (
	QueriesEvaluated      = "queries_evaluated"
	QueriesRanked         = "queries_ranked"
	QueriesWithoutResults = "queries_without_results"
	// RunDepth is the most documents run.trec ranks for one query: the
	// depth every measure of the run reads (a rerank that keeps only its
	// depth makes it shallower than top_k).
	RunDepth = "run_depth"
)

// MRRLabel names the MRR of the run m describes (its task, its depth, its
// corpus's documents; MRRLabel): "MRR@100" for a BRIGHT run kept 100
// deep. The depth is the run file's (RunDepth), or for a manifest written
// before r2med recorded it, the run's top_k. m may be nil.
func (m *Manifest) MRRLabel() string {
	if m == nil {
		return "MRR"
	}
	k, ok := m.Counts[RunDepth]
	if !ok {
		switch v := m.Config["top_k"].(type) { // an int as written, a float64 read back
		case int:
			k = v
		case float64:
			k = int(v)
		}
	}
	return MRRLabel(m.Task.Name, k, m.Counts["documents"])
}

// Unanswered is what m records of the judged queries its run's means are
// over (QueriesEvaluated) and of those that got no result
// (QueriesWithoutResults), which count 0 in every mean; judged is 0 for
// a manifest that does not say (a run made before the counts were kept).
// m may be nil.
func (m *Manifest) Unanswered() (without, judged int) {
	if m == nil {
		return 0, 0
	}
	return m.Counts[QueriesWithoutResults], m.Counts[QueriesEvaluated]
}

// ShallowDepth is the most documents m's run ranks per query (RunDepth)
// when that is fewer than its corpus holds, else 0: such a run's
// measures at a deeper k (Recall@100 of a run kept 10 deep) count the
// documents it ranks, as trec_eval measures the file. 0 also for a
// manifest that does not record the depth; m may be nil.
func (m *Manifest) ShallowDepth() int {
	if m == nil {
		return 0
	}
	d, ok := m.Counts[RunDepth]
	if !ok || d <= 0 || d >= m.Counts["documents"] {
		return 0
	}
	return d
}

// ShallowNote says that a run ranks at most depth documents per query,
// so that its measures named labels (deeper than depth) count those:
// "ranks at most 10 documents per query: its Recall@100 counts those, as
// trec_eval measures the file".
func ShallowNote(depth int, labels ...string) string {
	docs := "documents"
	if depth == 1 {
		docs = "document"
	}
	return fmt.Sprintf("ranks at most %d %s per query: its %s counts those, as trec_eval measures the file", depth, docs, strings.Join(labels, " and "))
}

// UnansweredNote says that without of the judged queries of a run on
// task got no result and count 0 in its means: "nfcorpus: 32 of 323
// judged queries got no results and count 0 in the means". It is ""
// when every query got results.
func UnansweredNote(task string, without, judged int) string {
	if without <= 0 {
		return ""
	}
	if judged > 0 {
		return fmt.Sprintf("%s: %d of %d judged queries got no results and count 0 in the means", task, without, judged)
	}
	return fmt.Sprintf("%s: %d judged queries got no results and count 0 in the means", task, without)
}

// MeanNote says in words which queries res's means are over, with the
// counts m records: "means over all judged queries (323; 15 without
// results count 0)". It is "" when res does not say (R2MED's own files);
// m may be nil or lack the counts (a run made before they were kept).
func MeanNote(res *R2MED, m *Manifest) string {
	if res == nil || res.MeanOver == "" {
		return ""
	}
	note := "means over " + res.MeanOver
	if m == nil {
		return note
	}
	if n, ok := m.Counts[QueriesEvaluated]; ok {
		note += fmt.Sprintf(" (%d", n)
		if k := m.Counts[QueriesWithoutResults]; k > 0 {
			note += fmt.Sprintf("; %d without results count 0", k)
		}
		note += ")"
	}
	return note
}
