package leaderboard

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/tasks"
)

//go:generate go run ./internal/gen/published -in ../../shared/data/r2med-official-results -out published.json

// publishedJSON is R2MED's results/ directory (github R2MED/R2MED), as
// converted by ReadOfficial and EncodePublished.
//
//go:embed published.json
var publishedJSON []byte

// PublishedSource says where the published figures come from.
const PublishedSource = "R2MED results/ (github.com/R2MED/R2MED), 568 files: 71 systems x 8 tasks"

var published = shipped(DecodePublished, publishedJSON)

// Published returns R2MED's published systems, sorted by ID. The slice is
// a fresh copy the caller may change.
func Published() ([]System, error) { return published() }

// shipped returns a function that decodes an embedded results file once
// and then hands out fresh copies of its systems.
func shipped(decode func([]byte) ([]System, error), data []byte) func() ([]System, error) {
	once := sync.OnceValues(func() ([]System, error) { return decode(data) })
	return func() ([]System, error) {
		ss, err := once()
		if err != nil {
			return nil, err
		}
		return clones(ss), nil
	}
}

// clones copies systems deeply, so callers may change what they get.
func clones(ss []System) []System {
	out := make([]System, len(ss))
	for i, s := range ss {
		out[i] = s.clone()
	}
	return out
}

func (s System) clone() System {
	c := s
	if s.External != nil {
		e := *s.External
		c.External = &e
	}
	c.Config = maps.Clone(s.Config)
	c.Tasks = make(map[string]TaskResult, len(s.Tasks))
	for n, t := range s.Tasks {
		t.Metrics = maps.Clone(t.Metrics)
		c.Tasks[n] = t
	}
	return c
}

// Official layout directories (R2MED's results/).
const (
	officialBase     = "base retriever"
	officialGAR      = "gar"
	officialReranker = "reranker"
)

// ReadOfficial reads a directory laid out as R2MED's results/:
//
//	base retriever/{retriever}/{Task}.json
//	gar/{method}/{llm}/{retriever}/{Task}.json
//	reranker/{reranker}/{retriever}/top_{k}/{Task}.json
//
// and returns one System per leaf directory, sorted by ID. Every JSON file
// must sit at one of those places, name an R2MED task, and agree with its
// path on dataset, model, method, LLM, retriever, reranker and top k; other
// files (such as CSV summaries at the top) are ignored.
func ReadOfficial(root string) ([]System, error) {
	byID := map[string]*System{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".json") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		res, err := results.ReadR2MED(path)
		if err != nil {
			return err
		}
		sys, err := officialSystem(path, parts, res)
		if err != nil {
			return err
		}
		task := strings.TrimSuffix(parts[len(parts)-1], ".json")
		t, err := tasks.Lookup(task)
		if err != nil || t.Name != task {
			return fileio.Errorf(path, 0, "file name %q is not an R2MED task name (%v)", task, strings.Join(TaskNames(""), ", "))
		}
		if res.DatasetName != task {
			return fileio.Errorf(path, 0, "dataset_name %q does not match the file name %q", res.DatasetName, task)
		}
		if s, ok := byID[sys.ID]; ok {
			sys = s
		} else {
			byID[sys.ID] = sys
		}
		m, style := Normalize(res.Test)
		sys.Tasks[task] = TaskResult{Metrics: m, Style: style, EvaluationTime: res.EvaluationTime, Source: "results/" + filepath.ToSlash(rel)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]System, 0, len(byID))
	for _, s := range byID {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b System) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func officialSystem(path string, parts []string, res *results.R2MED) (*System, error) {
	str := func(k string) string {
		v, _ := res.Extra[k].(string)
		return v
	}
	want := func(key, got, fromPath string) error {
		if got != fromPath {
			return fileio.Errorf(path, 0, "%s is %q but the path says %q", key, got, fromPath)
		}
		return nil
	}
	s := &System{Published: true, Tasks: map[string]TaskResult{}}
	switch {
	case len(parts) == 3 && parts[0] == officialBase:
		s.Kind, s.Retriever = Base, parts[1]
		s.ID = "base/" + parts[1]
		if err := want("model_name", res.ModelName, parts[1]); err != nil {
			return nil, err
		}
	case len(parts) == 5 && parts[0] == officialGAR:
		s.Kind, s.GARMethod, s.GARLLM, s.Retriever = GAR, parts[1], parts[2], parts[3]
		s.ID = strings.Join(parts[:4], "/")
		for _, c := range [][3]string{{"gar_method", str("gar_method"), parts[1]}, {"gar_llm", str("gar_llm"), parts[2]}, {"retriever_name", str("retriever_name"), parts[3]}} {
			if err := want(c[0], c[1], c[2]); err != nil {
				return nil, err
			}
		}
	case len(parts) == 5 && parts[0] == officialReranker:
		k, err := strconv.Atoi(strings.TrimPrefix(parts[3], "top_"))
		if err != nil || !strings.HasPrefix(parts[3], "top_") || k <= 0 {
			return nil, fileio.Errorf(path, 0, "reranker depth directory %q is not top_K", parts[3])
		}
		s.Kind, s.Reranker, s.Retriever, s.TopK = Reranker, parts[1], parts[2], k
		s.ID = strings.Join(parts[:4], "/")
		for _, c := range [][3]string{{"reranker_name", str("reranker_name"), parts[1]}, {"retriever_name", str("retriever_name"), parts[2]}, {"topk", fmt.Sprint(res.Extra["topk"]), strconv.Itoa(k)}} {
			if err := want(c[0], c[1], c[2]); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fileio.Errorf(path, 0, "not at a place of R2MED's results layout (%q/RETRIEVER/TASK.json, %q/METHOD/LLM/RETRIEVER/TASK.json or %q/RERANKER/RETRIEVER/top_K/TASK.json)", officialBase, officialGAR, officialReranker)
	}
	s.Name = results.SystemName(res) // the file's fields, checked against its path
	return s, nil
}

// publishedFile is the layout of published.json.
type publishedFile struct {
	Source  string   `json:"source"`
	Systems []System `json:"systems"`
}

// EncodePublished renders systems as published.json: deterministic, one
// line per system and task, so the file diffs readably when the source
// changes.
func EncodePublished(systems []System) ([]byte, error) {
	return encodeFile(PublishedSource, systems, func(b *bytes.Buffer, s System) error {
		head := s
		head.Tasks = nil
		h, err := json.Marshal(head)
		if err != nil {
			return err
		}
		// The header without its closing brace, then the tasks one a line.
		h = bytes.TrimSuffix(bytes.TrimSuffix(h, []byte("}")), []byte(`,"tasks":null`))
		b.WriteString("\n    ")
		b.Write(h)
		b.WriteString(`, "tasks": {`)
		names := make([]string, 0, len(s.Tasks))
		for n := range s.Tasks {
			names = append(names, n)
		}
		slices.SortFunc(names, compareTasks)
		for j, n := range names {
			if j > 0 {
				b.WriteByte(',')
			}
			t, err := json.Marshal(s.Tasks[n])
			if err != nil {
				return err
			}
			fmt.Fprintf(b, "\n      %q: %s", n, t)
		}
		b.WriteString("\n    }}")
		return nil
	})
}

// encodeFile writes the frame of a shipped results file — its source and
// the systems, each written by system on lines of its own.
func encodeFile(source string, systems []System, system func(*bytes.Buffer, System) error) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"source\": %q,\n  \"systems\": [", source)
	for i, s := range systems {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := system(&b, s); err != nil {
			return nil, err
		}
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes(), nil
}

// DecodePublished reads what EncodePublished wrote.
func DecodePublished(data []byte) ([]System, error) {
	var f publishedFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("published results: %w", err)
	}
	for i := range f.Systems {
		f.Systems[i].Published = true
	}
	return f.Systems, nil
}

// compareTasks orders task names as R2MED lists the tasks, unknown names
// after them alphabetically.
func compareTasks(a, b string) int {
	ia, ib := taskIndex(a), taskIndex(b)
	if ia != ib {
		return ia - ib
	}
	return strings.Compare(a, b)
}

func taskIndex(name string) int {
	for i, t := range tasks.All() {
		if t.Name == name {
			return i
		}
	}
	return len(tasks.All())
}

// WritePublished converts an R2MED results directory and writes
// published.json to out atomically (the go:generate step).
func WritePublished(root, out string) error {
	return generate(out, func() ([]System, error) { return ReadOfficial(root) }, EncodePublished)
}

// generate reads systems, encodes them and writes the result to out
// atomically: the go:generate steps.
func generate(out string, read func() ([]System, error), encode func([]System) ([]byte, error)) error {
	ss, err := read()
	if err != nil {
		return err
	}
	data, err := encode(ss)
	if err != nil {
		return err
	}
	return fileio.WriteAtomic(out, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
