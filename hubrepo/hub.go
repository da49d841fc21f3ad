// Package hubrepo reads tasks from Hugging Face dataset repositories
// downloaded to a directory (a snapshot of the Hub cache, or a set `r2med
// nano build` wrote): R2MED's own repositories and HAKARI-Bench's Nano
// sets, parquet or JSON (package table), found through the configs of the
// repository's card (ReadConfigs), with their published candidate lists
// (LoadCandidates) and GAR generations (ReadGenerations). Ids, texts and
// judgments are held to package dataset's rules.
package hubrepo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/table"
)

// Shape names a kind of Hugging Face dataset repository Load reads.
type Shape string

const (
	// R2MED is R2MED's own repositories, R2MED/<Task>: configs corpus
	// (split corpus: id, text), query (split query: id, text and fields
	// kept in Query.Extra) and qrels (split qrels: q_id, p_id, score), and
	// one config per GAR method with a split per LLM (ReadGenerations).
	R2MED Shape = "r2med"
	// Nano is HAKARI-Bench's Nano sets, such as hakari-bench/NanoR2MED:
	// configs corpus (_id, text), queries (_id, text) and qrels (query-id,
	// corpus-id, positives only and without a score, so every judgment has
	// grade 1), and candidate configs (query-id, corpus-ids; see
	// LoadCandidates), every config with one split per task.
	Nano Shape = "nano"
	// Bright is BRIGHT's repository, xlangai/BRIGHT: configs documents,
	// long_documents and examples (and <llm>_reason), every config with
	// one split per task; see bright.go.
	Bright Shape = "bright"
)

// Spec says what Load reads from a repository.
type Spec struct {
	// Shape is the repository's kind; empty means a repository with a
	// "queries" config is a Nano set and one with a "query" config R2MED's.
	Shape Shape
	// Split is the task of a Nano set (NanoR2MEDBiology); it may be empty
	// when the set has one. R2MED repositories have only test queries, so
	// for them it must be empty or "test".
	Split string
	// Name overrides Task.Name, which is otherwise the Nano split, or the
	// repository's name (read from a Hugging Face cache path such as
	// …/datasets--R2MED--Biology/snapshots/<commit>, else the directory's).
	Name string
	// AllowMissingDocs is Options.AllowMissingDocs.
	AllowMissingDocs bool
	// CorpusConfig, QueriesConfig and QrelsConfig override the shape's
	// config names, for repositories laid out alike but named otherwise.
	CorpusConfig, QueriesConfig, QrelsConfig string
	// Long reads a BRIGHT task in its long-document setting: the
	// long_documents config, judged by gold_ids_long.
	Long bool
	// Exclude is Options.Exclude: an exclusions file whose pairs are added
	// to those the queries' excluded_ids fields give.
	Exclude string
}

// hubShape is what differs between the repository kinds.
type hubShape struct {
	layout                 ir.Layout
	corpus, queries, qrels string
	ids                    dataset.IDKeys // the corpus and queries id field
	nano                   bool
}

const nanoHint = `Nano sets name their fields "_id", "query-id" and "corpus-id"; check the repository kind`

var hubShapes = map[Shape]hubShape{
	R2MED: {layout: ir.LayoutR2MEDHub, corpus: "corpus", queries: "query", qrels: "qrels",
		ids: dataset.IDKeys{ID: "id", AltID: "_id", Hint: `R2MED's repositories name the id field "id", Nano sets "_id"; check the repository kind`}},
	Nano: {layout: ir.LayoutNanoHub, corpus: "corpus", queries: "queries", qrels: "qrels",
		ids: dataset.IDKeys{ID: "_id", AltID: "id", Hint: nanoHint}, nano: true},
}

// Load reads a task from a Hugging Face dataset repository downloaded
// to dir (a snapshot directory of the Hugging Face cache, say), finding its
// files through the repository's configs (ReadConfigs). Task.Files lists
// every file read, README.md first.
//
// Queries, judgments and checks are Load's: Task.Queries holds the judged
// queries in file order, and every judgment must name a known query and,
// unless AllowMissingDocs, a known document. A Nano set is read as
// HAKARI-Bench loads it: rows with an empty text are left out and counted
// (Task.EmptyDocs, Task.EmptyQueries), qrels rows may list several
// documents in corpus-id, and a document judged twice is judged once. In
// R2MED's repositories a pair judged twice is an error, as in Load.
func Load(dir string, spec Spec) (*ir.Task, error) {
	src, err := openRepo(dir)
	if err != nil {
		return nil, err
	}
	return src.loadHub(dir, repoName(dir), spec)
}

// LoadFS is Load for the directory root of fsys.
func LoadFS(fsys fs.FS, root string, spec Spec) (*ir.Task, error) {
	src, err := openRepoFS(fsys, root)
	if err != nil {
		return nil, err
	}
	name := ""
	if root != "." {
		name = path.Base(root)
	}
	return src.loadHub(root, name, spec)
}

// IsTask reports whether the dataset card (README.md) of the repository in
// dir declares the configs of a task Load reads: R2MED's or a Nano set's
// corpus, queries and judgments. Such a directory is a Hub repository
// wherever it lies — a snapshot of the Hub cache, a copy of one, a set
// nano build wrote — and is read through its card (Load, ReadGenerations,
// LoadCandidates), so that it reads the same everywhere: the card, not the
// file names, says which files hold the task and its generations (R2MED's
// query2doc generations are a JSON array named query_with_hydoc.json). A
// card without configs, or with configs of another kind of dataset,
// leaves the directory to its layout (dataset.Load); a card that cannot
// be read is an error.
func IsTask(dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, hubReadme)); err != nil {
		return false, nil
	}
	hc, err := ReadConfigs(dir)
	if err != nil || !hc.Declared {
		return false, err
	}
	shape, err := hc.shape("")
	if err != nil {
		return false, nil
	}
	sh := hubShapes[shape]
	for _, name := range []string{sh.corpus, sh.queries, sh.qrels} {
		if _, err := hc.Config(name); err != nil {
			return false, nil
		}
	}
	return true, nil
}

// Declares reports whether the repository in dir has a dataset card that
// declares configs: then the card says where its files are (ReadConfigs),
// generations included.
func Declares(dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, hubReadme)); err != nil {
		return false, nil
	}
	hc, err := ReadConfigs(dir)
	if err != nil {
		return false, err
	}
	return hc.Declared, nil
}

// repoName names a repository after its Hugging Face cache folder when dir
// is one of its snapshots, since the snapshot's own name is a commit.
func repoName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	parent := filepath.Dir(abs)
	if filepath.Base(parent) == "snapshots" {
		folder := filepath.Base(filepath.Dir(parent))
		if rest, ok := strings.CutPrefix(folder, "datasets--"); ok {
			if i := strings.LastIndex(rest, "--"); i >= 0 {
				return rest[i+2:]
			}
		}
	}
	return filepath.Base(abs)
}

func (s repo) loadHub(dir, defaultName string, spec Spec) (*ir.Task, error) {
	hc, err := s.hubConfigs()
	if err != nil {
		return nil, err
	}
	shape, err := hc.shape(spec.Shape)
	if err != nil {
		return nil, err
	}
	if shape == Bright {
		return s.loadBright(hc, dir, defaultName, spec)
	}
	if spec.Long {
		return nil, fmt.Errorf("%s: the long-document setting is BRIGHT's, and this is a %s repository", hc.where(), shape)
	}
	sh := hubShapes[shape]
	if spec.CorpusConfig != "" {
		sh.corpus = spec.CorpusConfig
	}
	if spec.QueriesConfig != "" {
		sh.queries = spec.QueriesConfig
	}
	if spec.QrelsConfig != "" {
		sh.qrels = spec.QrelsConfig
	}
	t := &ir.Task{Name: spec.Name, Dir: dir, Layout: sh.layout}
	if hc.Readme != "" {
		t.Files = append(t.Files, hc.Readme)
	}

	// Which split of each config holds the task.
	var splitOf func(config string) (string, error)
	if sh.nano {
		split, err := hc.nanoSplit(sh.queries, spec.Split)
		if err != nil {
			return nil, err
		}
		t.Split = split
		splitOf = func(string) (string, error) { return split, nil }
		if t.Name == "" {
			t.Name = split
		}
	} else {
		if spec.Split != "" && spec.Split != dataset.DefaultSplit {
			return nil, fmt.Errorf("%s: split %q given, but an R2MED task has only test queries; use the split %q or none", hc.where(), spec.Split, dataset.DefaultSplit)
		}
		splitOf = hc.soleSplit
	}
	if t.Name == "" {
		t.Name = defaultName
	}
	files := func(config string) ([]string, error) {
		split, err := splitOf(config)
		if err != nil {
			return nil, err
		}
		return hc.Files(config, split)
	}

	corpusFiles, err := files(sh.corpus)
	if err != nil {
		return nil, err
	}
	docs, emptyDocs, err := s.readHubCorpus(t, corpusFiles, sh)
	if err != nil {
		return nil, err
	}
	corpusName := s.showFiles(corpusFiles)
	if len(t.Corpus) == 0 {
		what := "no documents"
		if t.EmptyDocs > 0 {
			what = fmt.Sprintf("no documents with text (%d empty)", t.EmptyDocs)
		}
		return nil, fmt.Errorf("%s: %s", corpusName, what)
	}

	queryFiles, err := files(sh.queries)
	if err != nil {
		return nil, err
	}
	queries, emptyQueries, err := s.readHubQueries(t, queryFiles, sh)
	if err != nil {
		return nil, err
	}

	qrelsFiles, err := files(sh.qrels)
	if err != nil {
		return nil, err
	}
	if t.Qrels, err = s.readHubQrels(t, qrelsFiles, sh.nano); err != nil {
		return nil, err
	}
	qrelsName := s.showFiles(qrelsFiles)
	if len(t.Qrels) == 0 {
		return nil, fmt.Errorf("%s: no judgments; a task needs at least one to be evaluated", qrelsName)
	}

	queryIDs := make(map[string]bool, len(queries)+len(emptyQueries))
	for _, q := range queries {
		queryIDs[q.ID] = true
	}
	for id := range emptyQueries {
		queryIDs[id] = true
	}
	qk, pk := qrelsKeys(sh.nano)
	locate := s.firstJudgment(qrelsFiles, []string{qk.ID, pk.ID}, func(m table.Row) (string, []string) {
		qid, err := dataset.ID(m, qk, "judgment")
		if err != nil {
			return "", nil
		}
		dids, err := idsField(m, pk, "judgment")
		if err != nil {
			return "", nil
		}
		return qid, dids
	})
	if err := dataset.CheckKnown(t.Qrels, queryIDs, nil, qrelsName, s.showFiles(queryFiles), locate); err != nil {
		return nil, err
	}
	for id := range emptyQueries {
		delete(t.Qrels, id)
	}
	known := make(map[string]int, len(docs)+len(emptyDocs))
	for id := range docs {
		known[id] = 0
	}
	for id := range emptyDocs {
		known[id] = 0
	}
	if !spec.AllowMissingDocs {
		if err := dataset.CheckKnown(t.Qrels, nil, known, qrelsName, corpusName, locate); err != nil {
			return nil, err
		}
	}
	excluded, err := dataset.TakeExcluded(queries, s.showFiles(queryFiles))
	if err != nil {
		return nil, err
	}
	if spec.Exclude != "" {
		more, err := dataset.ReadExclusionsFile(spec.Exclude)
		if err != nil {
			return nil, err
		}
		excluded = append(excluded, more...)
		t.Files = append(t.Files, spec.Exclude)
	}
	if err := dataset.Exclude(t, excluded, func(id string) bool { return queryIDs[id] }); err != nil {
		return nil, err
	}
	dataset.KeepJudged(t, queries)
	if len(t.Queries) == 0 {
		return nil, fmt.Errorf("%s: every judged query has an empty text, so no query is left to evaluate", s.showFiles(queryFiles))
	}
	return t, nil
}

// shape resolves an empty Shape from the config names.
func (h *Configs) shape(want Shape) (Shape, error) {
	if want != "" {
		if _, ok := hubShapes[want]; !ok && want != Bright {
			return "", fmt.Errorf("unknown repository kind %q (want %q, %q or %q)", want, R2MED, Nano, Bright)
		}
		return want, nil
	}
	has := func(name string) bool {
		return slices.ContainsFunc(h.Configs, func(c Config) bool { return c.Name == name })
	}
	switch {
	case has(brightExamples) && has(brightDocs):
		return Bright, nil
	case has("queries") && !has("query"):
		return Nano, nil
	case has("query") && !has("queries"):
		return R2MED, nil
	}
	return "", fmt.Errorf("%s: cannot tell the repository kind from its configs (a Nano set has a \"queries\" config, an R2MED repository a \"query\" config, BRIGHT \"examples\" and \"documents\"); %s", h.where(), h.listConfigs())
}

// nanoSplit checks the requested split, or picks the only one.
func (h *Configs) nanoSplit(queriesConfig, want string) (string, error) {
	c, err := h.Config(queriesConfig)
	if err != nil {
		return "", err
	}
	if want != "" {
		if _, err := c.Split(want); err != nil {
			return "", fmt.Errorf("%s: %w", h.where(), err)
		}
		return want, nil
	}
	if len(c.Splits) == 1 {
		return c.Splits[0].Name, nil
	}
	return "", fmt.Errorf("%s: the set has %d tasks; name one of its splits: %s", h.where(), len(c.Splits), splitNames(c))
}

// soleSplit is the split of a config that has one split per config, as
// R2MED's have (corpus/corpus, query/query): the one named after the config,
// else the only one.
func (h *Configs) soleSplit(config string) (string, error) {
	c, err := h.Config(config)
	if err != nil {
		return "", err
	}
	if _, err := c.Split(config); err == nil || len(c.Splits) != 1 {
		return config, nil
	}
	return c.Splits[0].Name, nil
}

// showFiles names a split's files in messages.
func (s repo) showFiles(files []string) string {
	if len(files) == 1 {
		return s.Show(files[0])
	}
	return fmt.Sprintf("%s (and %d more files)", s.Show(files[0]), len(files)-1)
}

// readHubCorpus appends the documents of files to t.Corpus. It returns the
// ids of the documents kept and of those left out for an empty text.
func (s repo) readHubCorpus(t *ir.Task, files []string, sh hubShape) (map[string]table.At, map[string]bool, error) {
	seen := make(map[string]table.At)
	empty := make(map[string]bool)
	add := func(d ir.Doc, at table.At) error {
		if prev, dup := seen[d.ID]; dup {
			return at.Errorf("document id %q already appeared at %s; ids must be unique, remove or rename one of the two", d.ID, prev)
		}
		if empty[d.ID] {
			return at.Errorf("document id %q already appeared as an empty document; ids must be unique, remove or rename one of the two", d.ID)
		}
		if sh.nano && d.Text == "" {
			empty[d.ID] = true
			t.EmptyDocs++
			return nil
		}
		seen[d.ID] = at
		t.Corpus = append(t.Corpus, d)
		return nil
	}
	for _, rel := range files {
		name := s.Show(rel)
		t.Files = append(t.Files, name)
		base, _ := table.Format(rel)
		if !sh.nano && (strings.HasSuffix(base, ".jsonl") || strings.HasSuffix(base, ".ndjson")) {
			// R2MED's corpus.jsonl: the fast reader, as Load uses.
			err := s.readRaw(rel, func(r io.Reader) error {
				lines, err := dataset.ReadCorpusLines(r, name, ir.LayoutR2MED, func(d ir.Doc) error {
					if _, dup := seen[d.ID]; dup {
						return nil // reported below, with its line
					}
					seen[d.ID] = table.At{File: name}
					t.Corpus = append(t.Corpus, d)
					return nil
				})
				if err != nil {
					return err
				}
				if err := crossFileDuplicate(seen, lines, name); err != nil {
					return err
				}
				for id, line := range lines {
					seen[id] = table.At{File: name, Line: line}
				}
				return nil
			})
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		err := table.Each(s.Dir, rel, []string{sh.ids.ID, "text"}, func(m map[string]json.RawMessage, at table.At) error {
			id, err := dataset.ID(m, sh.ids, "document")
			if err != nil {
				return at.Errorf("%v", err)
			}
			text, err := dataset.Text(m, "text", true)
			if err != nil {
				return at.Errorf("%v", err)
			}
			return add(ir.Doc{ID: id, Text: text}, at)
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return seen, empty, nil
}

// crossFileDuplicate reports an id of the file just read (lines: id → line)
// that an earlier file of the split already had, at the earliest such line.
func crossFileDuplicate(seen map[string]table.At, lines map[string]int, name string) error {
	bad, badLine := "", 0
	for id, line := range lines {
		if prev := seen[id]; prev.File != name && (badLine == 0 || line < badLine) {
			bad, badLine = id, line
		}
	}
	if badLine == 0 {
		return nil
	}
	return table.At{File: name, Line: badLine}.Errorf("document id %q already appeared in %s; ids must be unique, remove or rename one of the two", bad, seen[bad].File)
}

// readRaw hands fn the decompressed bytes of rel.
func (s repo) readRaw(rel string, fn func(io.Reader) error) error {
	rc, err := s.Open(rel)
	if err != nil {
		return err
	}
	defer rc.Close()
	return fn(rc)
}

// readHubQueries reads the queries of files in order, every field besides
// the id and text kept in Extra. It returns the ids of the queries left out
// for an empty text (Nano sets).
func (s repo) readHubQueries(t *ir.Task, files []string, sh hubShape) ([]ir.Query, map[string]bool, error) {
	var qs []ir.Query
	seen := make(map[string]table.At)
	empty := make(map[string]bool)
	for _, rel := range files {
		t.Files = append(t.Files, s.Show(rel))
		err := table.Each(s.Dir, rel, nil, func(m map[string]json.RawMessage, at table.At) error {
			id, err := dataset.ID(m, sh.ids, "query")
			if err != nil {
				return at.Errorf("%v", err)
			}
			text, err := dataset.Text(m, "text", true)
			if err != nil {
				return at.Errorf("%v", err)
			}
			if _, err := dataset.ExcludedIDs(m); err != nil {
				return at.Errorf("%v", err)
			}
			if prev, dup := seen[id]; dup {
				return at.Errorf("query id %q already appeared at %s; ids must be unique, remove or rename one of the two", id, prev)
			}
			seen[id] = at
			if sh.nano && text == "" {
				empty[id] = true
				t.EmptyQueries++
				return nil
			}
			delete(m, sh.ids.ID)
			delete(m, "text")
			if len(m) == 0 {
				m = nil
			}
			qs = append(qs, ir.Query{ID: id, Text: text, Extra: m})
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return qs, empty, nil
}

// readHubQrels reads judgments: R2MED's q_id, p_id and score, or a Nano
// set's query-id and corpus-id (a document id or a list of them), graded 1
// unless the row has a score.
func (s repo) readHubQrels(t *ir.Task, files []string, nano bool) (ir.Qrels, error) {
	q := make(ir.Qrels)
	qk, pk := qrelsKeys(nano)
	for _, rel := range files {
		t.Files = append(t.Files, s.Show(rel))
		err := table.Each(s.Dir, rel, []string{qk.ID, pk.ID, "score"}, func(m map[string]json.RawMessage, at table.At) error {
			qid, err := dataset.ID(m, qk, "judgment")
			if err != nil {
				return at.Errorf("%v", err)
			}
			if !nano {
				did, err := dataset.ID(m, pk, "judgment")
				if err != nil {
					return at.Errorf("%v", err)
				}
				grade, err := dataset.Grade(m["score"])
				if err != nil {
					return at.Errorf("%v", err)
				}
				if !q.Add(qid, did, grade) {
					return at.Errorf("document %q is judged twice for query %q; keep one judgment per pair", did, qid)
				}
				return nil
			}
			dids, err := idsField(m, pk, "judgment")
			if err != nil {
				return at.Errorf("%v", err)
			}
			grade := 1
			if raw, ok := m["score"]; ok && errtext.JSONKind(raw) != "null" {
				if grade, err = dataset.Grade(raw); err != nil {
					return at.Errorf("%v", err)
				}
			}
			for _, did := range dids {
				if prev, judged := q[qid][did]; judged && prev != grade {
					return at.Errorf("document %q is judged again for query %q, with grade %d after %d", did, qid, grade, prev)
				}
				q.Add(qid, did, grade)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return q, nil
}

// qrelsKeys names the query and document fields of a judgment: R2MED's
// q_id and p_id, or a Nano set's query-id and corpus-id.
func qrelsKeys(nano bool) (qk, pk dataset.IDKeys) {
	if nano {
		return dataset.IDKeys{ID: "query-id", AltID: "q_id", Hint: nanoHint}, dataset.IDKeys{ID: "corpus-id", AltID: "p_id", Hint: nanoHint}
	}
	const r2medHint = `R2MED's qrels name their fields "q_id", "p_id" and "score"`
	return dataset.IDKeys{ID: "q_id", AltID: "query-id", Hint: r2medHint}, dataset.IDKeys{ID: "p_id", AltID: "corpus-id", Hint: r2medHint}
}

// firstJudgment is a dataset.Locate over the rows of files, read again
// (only an error message needs it): judgments gives a row's query id and
// the documents it judges, and the first row with a judgment bad says is
// wrong is the answer.
func (s repo) firstJudgment(files, cols []string, judgments func(table.Row) (string, []string)) dataset.Locate {
	return func(bad func(qid, did string) bool) (string, int, int) {
		found := errors.New("found")
		for _, rel := range files {
			var at table.At
			err := table.Each(s.Dir, rel, cols, func(m table.Row, a table.At) error {
				qid, dids := judgments(m)
				for _, did := range dids {
					if bad(qid, did) {
						at = a
						return found
					}
				}
				return nil
			})
			if errors.Is(err, found) {
				return at.File, at.Line, at.Row
			}
			if err != nil {
				break
			}
		}
		return "", 0, 0
	}
}

// idsField reads a field holding one id or a list of ids.
func idsField(m map[string]json.RawMessage, k dataset.IDKeys, what string) ([]string, error) {
	raw, ok := m[k.ID]
	if !ok || errtext.JSONKind(raw) != "an array" {
		id, err := dataset.ID(m, k, what)
		if err != nil {
			return nil, err
		}
		return []string{id}, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%q: %s", k.ID, errtext.JSONMsg(err))
	}
	ids := make([]string, len(elems))
	for i, e := range elems {
		id, err := dataset.ID(map[string]json.RawMessage{k.ID: e}, k, what)
		if err != nil {
			return nil, fmt.Errorf("element %d of %s", i+1, err)
		}
		ids[i] = id
	}
	return ids, nil
}

// Generation is one row of an R2MED repository's GAR config: a query and
// an LLM's output for it (see the expand package, which builds queries from
// them).
type Generation struct {
	ID, Text, HyDoc string
}

// Generations are the rows of one GAR method and LLM.
type Generations struct {
	Config, Split string // where they were found
	Rows          []Generation
	Files         []string
}

// ReadGenerations reads the generations of a GAR method (hyde,
// query2doc, lamer, search-o1, search-r1) and an LLM from an R2MED
// repository downloaded to dir: the config named after the method, its
// split named after the LLM. llm may be spelled as R2MED's code does
// (qwen-7b) or as the repository's split (qwen_7b), since split names
// cannot hold "-". Rows need id, text and hy_doc (other fields are
// ignored); ids must be unique.
func ReadGenerations(dir, method, llm string) (*Generations, error) {
	src, err := openRepo(dir)
	if err != nil {
		return nil, err
	}
	return src.readHubGenerations(method, llm)
}

// ReadGenerationsFS is ReadGenerations for the directory root of fsys.
func ReadGenerationsFS(fsys fs.FS, root, method, llm string) (*Generations, error) {
	src, err := openRepoFS(fsys, root)
	if err != nil {
		return nil, err
	}
	return src.readHubGenerations(method, llm)
}

// splitSpelling is how a name becomes a Hugging Face split name.
var splitSpelling = strings.NewReplacer("-", "_", ".", "_")

func (s repo) readHubGenerations(method, llm string) (*Generations, error) {
	hc, err := s.hubConfigs()
	if err != nil {
		return nil, err
	}
	c, err := hc.Config(method)
	if err != nil {
		return nil, err
	}
	split := llm
	if _, err := c.Split(split); err != nil {
		split = splitSpelling.Replace(llm)
		if _, err2 := c.Split(split); err2 != nil {
			return nil, fmt.Errorf("%s: %w", hc.where(), err)
		}
	}
	files, err := hc.Files(method, split)
	if err != nil {
		return nil, err
	}
	g := &Generations{Config: method, Split: split}
	k := dataset.IDKeys{ID: "id", AltID: "_id", Hint: `R2MED's generations name the query id "id"`}
	seen := make(map[string]table.At)
	for _, rel := range files {
		g.Files = append(g.Files, s.Show(rel))
		err := table.Each(s.Dir, rel, []string{"id", "text", "hy_doc"}, func(m map[string]json.RawMessage, at table.At) error {
			id, err := dataset.ID(m, k, "generation")
			if err != nil {
				return at.Errorf("%v", err)
			}
			text, err := dataset.Text(m, "text", true)
			if err != nil {
				return at.Errorf("%v", err)
			}
			hy, err := dataset.Text(m, "hy_doc", true)
			if err != nil {
				return at.Errorf("%v", err)
			}
			if prev, dup := seen[id]; dup {
				return at.Errorf("query id %q already has a generation at %s; keep one per query", id, prev)
			}
			seen[id] = at
			g.Rows = append(g.Rows, Generation{ID: id, Text: text, HyDoc: hy})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(g.Rows) == 0 {
		return nil, errors.New(s.showFiles(files) + ": no generations; the split is empty")
	}
	return g, nil
}
