package audit

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/r2med/r2med/audit/minhash"
	"github.com/r2med/r2med/audit/trainset"
	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/internal/reuse"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/vector"
)

// Match kinds, as the match field writes them.
const (
	MatchExact = "exact"
	MatchNear  = "near"
	MatchDense = "dense"
)

// Similarity measures, as the measure field writes them.
const (
	// MeasureExact: equal after normalisation (similarity 1).
	MeasureExact = "exact"
	// MeasureJaccard: the Jaccard similarity of the two texts' word-shingle
	// sets, computed exactly.
	MeasureJaccard = "jaccard"
	// MeasureWordEdits: 1 − word edit distance / words of the longer text,
	// for short texts at most one word replaced, dropped or added
	// (minhash.Edits).
	MeasureWordEdits = "word_edits"
	// MeasureCosine: the cosine of the two texts' embeddings.
	MeasureCosine = "cosine"
)

// Match is one training text found in a benchmark: one line of the
// matches file (r2med audit leakage --format jsonl).
type Match struct {
	Task          string `json:"task"`
	BenchmarkKind Kind   `json:"benchmark_kind"`
	BenchmarkID   string `json:"benchmark_id"`
	TrainFile     string `json:"train_file"`
	// TrainLine is the record's 1-based line (parquet: row).
	TrainLine int `json:"train_line"`
	// TrainElement is the record's 1-based place in a JSON array file,
	// which tells apart records on one line; absent in other formats.
	TrainElement int    `json:"train_element,omitempty"`
	TrainField   string `json:"train_field"`
	TrainRole    string `json:"train_role"`
	// Match is exact (equal after normalisation), near (word-shingle
	// Jaccard at or above the threshold, or a short text within one word
	// edit) or dense (embedding cosine at or above the dense threshold); a
	// pair is reported once, by the first of these that holds (Jaccard
	// before word edits).
	Match string `json:"match"`
	// Measure names what Similarity measures: exact, jaccard, word_edits
	// or cosine (the Measure constants).
	Measure string `json:"measure"`
	// Similarity is 1 for exact matches, the exact Jaccard or the word
	// edit similarity (1 − edits / words of the longer text) for near ones
	// and the cosine for dense ones.
	Similarity float64 `json:"similarity"`
	// TrainText is the training text's first 300 characters.
	TrainText string `json:"train_text"`
}

// Dense adds matching by embedding similarity.
type Dense struct {
	Embedder embed.Embedder
	// Model names the embedder in the report and in the run's
	// fingerprint (a changed model starts a new run).
	Model string
	// Threshold is the cosine similarity at or above which two texts
	// match; 0 means 0.95.
	Threshold float64
	// TopK is how many nearest benchmark texts each training text is
	// compared with; 0 means 10.
	TopK int
}

// LeakageOptions configure Leakage. The zero value audits queries and
// positive documents with the default MinHash spec.
type LeakageOptions struct {
	MinHash minhash.Spec
	// Edits finds short texts with one word replaced, dropped or added,
	// which word shingles miss; the zero value: texts of 5 to 32 words.
	Edits     minhash.Edits
	Documents Scope // "" means Positives
	Dense     *Dense
	Train     trainset.Options
	Workers   int // 0 means GOMAXPROCS
	// State is the directory under which a run keeps its checkpoint and
	// the matches found so far, in a sub-directory named by the run's
	// fingerprint (settings, benchmark texts, training files' paths, sizes,
	// times and first MiB). A run of the same fingerprint continues after
	// the last checkpoint; any other starts afresh. "" keeps them in a
	// temporary directory, so an interrupted run starts over.
	State string
	// Examples is the number of examples kept per task and kind in the
	// report; 0 means 5.
	Examples int
	// ChunkRows is the number of training rows handed to a worker at a
	// time; 0 means 512.
	ChunkRows int
	// CheckpointEvery is the least time between checkpoints; 0 means 2s.
	CheckpointEvery time.Duration
	Progress        progress.Factory
	Log             io.Writer
}

// InterruptedError is an audit interrupted (its context ended) whose
// state is kept: Leakage called again with the same inputs and settings
// continues from State.
type InterruptedError struct {
	State string
	Err   error
}

func (e *InterruptedError) Error() string { return e.Err.Error() }
func (e *InterruptedError) Unwrap() error { return e.Err }

// LeakageResult is a finished audit: the report and the matches file.
type LeakageResult struct {
	Report *LeakageReport
	dir    string
	temp   bool
}

const (
	checkpointFile = "checkpoint.json"
	matchesFile    = "matches.jsonl"
	// stateVersion is in the fingerprint: 2, word edits for short texts
	// and the measure field; 3, the checkpoint kept by package reuse; 4,
	// JSON arrays resumed by row and their matches naming the element.
	stateVersion = 4
)

// checkpoint is how far a run got, kept under the run's fingerprint
// (reuse.Checkpoint) in its state directory.
type checkpoint struct {
	MatchesBytes int64       `json:"matches_bytes"`
	Files        []fileState `json:"files"`
}

type fileState struct {
	Path    string            `json:"path"`
	Layout  string            `json:"layout,omitempty"`
	Done    bool              `json:"done"`
	Pos     trainset.Position `json:"position"`
	Rows    int64             `json:"rows"`
	Texts   int64             `json:"texts"`
	Empty   int64             `json:"empty"`
	Matches int64             `json:"matches"`
}

// auditor holds a leakage run's benchmark side and state.
type auditor struct {
	opts    LeakageOptions
	tasks   []*ir.Task
	items   []item
	missing []int
	coll    *minhash.Collection
	edits   *minhash.EditIndex
	flat    *vector.Flat
	// denseMember maps a row of flat to its benchmark item.
	denseMember []int
	dir         string
	fp          string // the run's fingerprint
	ck          checkpoint
	spill       *os.File
	sw          *bufio.Writer
	lastCk      time.Time
}

// Leakage finds the texts of training files in the tasks' queries and
// documents (Documents says which): exact and near duplicates through
// minhash, and dense neighbours when Dense is set. The training side is
// streamed, a chunk of rows at a time, so memory is bounded by the
// benchmark side (its shingle sets, LSH bands and, with Dense, its
// vectors). Results do not depend on Workers. The run checkpoints into
// State and resumes from it; Close removes the state once the outputs are
// written.
func Leakage(ctx context.Context, tasks []*ir.Task, files []string, opts LeakageOptions) (*LeakageResult, error) {
	if len(files) == 0 {
		return nil, errors.New("no training files to audit")
	}
	if len(tasks) == 0 {
		return nil, errors.New("no benchmark tasks to audit against")
	}
	if err := distinctFiles(files); err != nil {
		return nil, err
	}
	if opts.Documents == "" {
		opts.Documents = Positives
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Examples <= 0 {
		opts.Examples = 5
	}
	if opts.ChunkRows <= 0 {
		opts.ChunkRows = 512
	}
	if opts.CheckpointEvery <= 0 {
		opts.CheckpointEvery = 2 * time.Second
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Dense != nil {
		d := *opts.Dense
		opts.Dense = &d
		if d.Embedder == nil {
			return nil, errors.New("dense matching needs an embedder")
		}
		if d.Threshold == 0 {
			d.Threshold = 0.95
		}
		if d.TopK <= 0 {
			d.TopK = 10
		}
	}
	h, err := minhash.New(opts.MinHash)
	if err != nil {
		return nil, err
	}
	opts.MinHash = h.Spec()
	if opts.Edits, err = opts.Edits.Resolved(); err != nil {
		return nil, err
	}
	a := &auditor{opts: opts, tasks: tasks}
	a.items, a.missing = benchmarkItems(tasks, opts.Documents)
	texts := make([]string, len(a.items))
	for i, it := range a.items {
		texts[i] = it.text
	}
	fp, err := a.fingerprint(files)
	if err != nil {
		return nil, err
	}
	res := &LeakageResult{}
	if opts.State == "" {
		if res.dir, err = os.MkdirTemp("", "r2med-audit-*"); err != nil {
			return nil, err
		}
		res.temp = true
	} else {
		res.dir = filepath.Join(opts.State, fp[:16])
	}
	done := false
	defer func() {
		// A temporary state goes with a failed run; a named one stays (it
		// may be another run's, or a checkpoint to resume from).
		if !done && res.temp {
			res.Close()
		}
	}()
	a.dir = res.dir
	if err := a.openState(fp, files); err != nil {
		return nil, err
	}
	defer a.spill.Close()
	a.coll = minhash.NewCollection(h, texts, opts.Workers)
	if a.edits, err = minhash.NewEditIndex(opts.Edits, texts); err != nil {
		return nil, err
	}
	if opts.Dense != nil {
		if err := a.embedBenchmark(ctx, texts); err != nil {
			return nil, err
		}
	}
	for i := range files {
		if err := a.scanFile(ctx, i); err != nil {
			if ctx.Err() != nil && !res.temp {
				err = &InterruptedError{State: a.dir, Err: err}
			}
			return nil, err
		}
	}
	if err := a.spill.Close(); err != nil {
		return nil, err
	}
	rep, err := a.report(filepath.Join(a.dir, matchesFile))
	if err != nil {
		return nil, err
	}
	res.Report = rep
	done = true
	return res, nil
}

// fingerprint identifies a run: settings, benchmark texts and training
// files (path, size, modification time and the sha256 of their first MiB).
func (a *auditor) fingerprint(files []string) (string, error) {
	settings := map[string]any{
		"version": stateVersion, "minhash": a.opts.MinHash, "edits": a.opts.Edits, "documents": a.opts.Documents,
		"train": a.opts.Train,
	}
	if d := a.opts.Dense; d != nil {
		settings["dense"] = map[string]any{"model": d.Model, "threshold": d.Threshold, "top_k": d.TopK}
	}
	f := reuse.NewFingerprint().Add(settings)
	for _, t := range a.tasks {
		f.Add("task " + t.Name)
	}
	for _, it := range a.items {
		f.Add([]any{it.task, it.kind, it.id, it.text})
	}
	for _, p := range files {
		id, err := fileIdentity(p)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) && pe.Path == p {
				err = pe.Err // the path is named below
			}
			return "", fmt.Errorf("training file %s: %w", p, err)
		}
		f.Add("file " + id)
	}
	return f.String(), nil
}

// distinctFiles refuses a training file named twice (by one path or by
// two): it would be read, matched and counted twice.
func distinctFiles(files []string) error {
	stats := make([]os.FileInfo, len(files))
	for i, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			continue // fingerprint reports it
		}
		for j, prev := range stats[:i] {
			if prev != nil && os.SameFile(prev, st) {
				if files[j] == f {
					return fmt.Errorf("training file %s is given twice", f)
				}
				return fmt.Errorf("training file %s is given twice (also as %s)", f, files[j])
			}
		}
		stats[i] = st
	}
	return nil
}

func fileIdentity(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(h, f, 1<<20); err != nil && err != io.EOF {
		return "", err
	}
	return fmt.Sprintf("%s\x00%d\x00%d\x00%x", abs, st.Size(), st.ModTime().UnixNano(), h.Sum(nil)), nil
}

// openState reads the checkpoint when it belongs to this run, else starts
// a new one, and opens the matches file at the checkpoint's length.
func (a *auditor) openState(fp string, files []string) error {
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return err
	}
	a.fp = fp
	fresh := checkpoint{}
	for _, p := range files {
		fresh.Files = append(fresh.Files, fileState{Path: p})
	}
	a.ck = fresh
	var old checkpoint
	switch err := a.checkpoint().Load(fp, &old); {
	case errors.Is(err, os.ErrNotExist):
	case errors.Is(err, reuse.ErrOtherFingerprint) || err == nil && len(old.Files) != len(files):
		fmt.Fprintf(a.opts.Log, "audit: the checkpoint in %s is for other settings or inputs (a fingerprint-prefix clash); starting over\n", a.dir)
	case err != nil:
		fmt.Fprintf(a.opts.Log, "audit: %v; starting over\n", err)
	default:
		a.ck = old
		done := 0
		for _, f := range old.Files {
			if f.Done {
				done++
			}
		}
		fmt.Fprintf(a.opts.Log, "audit: resuming from %s (%d of %d files done)\n", a.checkpoint().Path, done, len(files))
	}
	sp := filepath.Join(a.dir, matchesFile)
	f, err := os.OpenFile(sp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	// One run at a time per state: a second would truncate and rewrite
	// the matches the first is writing, and remove them when done.
	if busy, err := lockState(f); busy || err != nil {
		f.Close()
		if busy {
			return fmt.Errorf("another audit of these training files with these settings is running (its state is %s); wait for it to finish, or give this one another --state", a.dir)
		}
		return fmt.Errorf("locking %s: %w", sp, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if st.Size() < a.ck.MatchesBytes {
		// The matches the checkpoint counts are gone: start over.
		fmt.Fprintf(a.opts.Log, "audit: %s is shorter than its checkpoint says; starting over\n", sp)
		a.ck = fresh
	}
	if err := f.Truncate(a.ck.MatchesBytes); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Seek(a.ck.MatchesBytes, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	a.spill, a.sw = f, bufio.NewWriterSize(f, 1<<16)
	return a.saveCheckpoint()
}

// saveCheckpoint makes the matches written so far durable, then records
// how far the run got.
func (a *auditor) saveCheckpoint() error {
	if err := a.sw.Flush(); err != nil {
		return err
	}
	if err := a.spill.Sync(); err != nil {
		return err
	}
	off, err := a.spill.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	a.ck.MatchesBytes = off
	a.lastCk = time.Now()
	return a.checkpoint().Save(a.fp, a.ck)
}

// checkpoint is where the run keeps how far it got.
func (a *auditor) checkpoint() reuse.Checkpoint {
	return reuse.Checkpoint{Path: filepath.Join(a.dir, checkpointFile)}
}

// embedBenchmark embeds the benchmark texts into a flat cosine index.
func (a *auditor) embedBenchmark(ctx context.Context, texts []string) error {
	var ids []string
	var in []string
	for i, t := range texts {
		if minhash.Normalize(t) == "" {
			continue
		}
		ids = append(ids, fmt.Sprint(i))
		in = append(in, t)
		a.denseMember = append(a.denseMember, i)
	}
	if len(in) == 0 {
		return nil
	}
	vecs, err := a.opts.Dense.Embedder.Embed(ctx, embed.Document, in)
	if err != nil {
		return fmt.Errorf("embedding the benchmark texts: %w", err)
	}
	if err := embed.Check(vecs, len(in), 0); err != nil {
		return fmt.Errorf("embedding the benchmark texts: %w", err)
	}
	a.flat = vector.NewFlat(len(vecs[0]), vector.Cosine)
	return a.flat.AddAll(ids, vecs)
}

type chunk struct {
	seq  int
	rows []trainset.Row
}

type chunkResult struct {
	seq                   int
	lines                 []byte
	next                  trainset.Position
	rows, texts, empty, n int64
	err                   error
}

// scanFile audits one training file from its checkpointed position.
func (a *auditor) scanFile(ctx context.Context, fi int) error {
	st := &a.ck.Files[fi]
	if st.Done {
		return nil
	}
	f, err := trainset.Open(st.Path, a.opts.Train)
	if err != nil {
		return err
	}
	st.Layout = f.Layout.Describe()
	fmt.Fprintf(a.opts.Log, "audit: %s: %s\n", st.Path, st.Layout)
	bar := a.opts.Progress.New(-1, filepath.Base(st.Path))
	defer bar.Done()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := a.opts.Workers
	chunks := make(chan chunk, 2*workers)
	results := make(chan chunkResult, 2*workers)
	var readErr error
	go func() {
		defer close(chunks)
		seq := 0
		var buf []trainset.Row
		send := func() bool {
			select {
			case chunks <- chunk{seq: seq, rows: buf}:
				seq++
				buf = nil
				return true
			case <-ctx.Done():
				return false
			}
		}
		readErr = f.Rows(ctx, st.Pos, func(r trainset.Row) error {
			buf = append(buf, r)
			if len(buf) == a.opts.ChunkRows && !send() {
				return ctx.Err()
			}
			return nil
		})
		if readErr == nil && len(buf) > 0 {
			send()
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := searchers{a.coll.NewSearcher(), a.edits.NewSearcher()}
			for c := range chunks {
				if ctx.Err() != nil {
					continue // drain
				}
				r := a.process(ctx, f, s, c)
				select {
				case results <- r:
				case <-ctx.Done():
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	pending := map[int]chunkResult{}
	next := 0
	var firstErr error
	for r := range results {
		pending[r.seq] = r
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if firstErr == nil && ctx.Err() != nil {
				firstErr = ctx.Err()
			}
			if firstErr != nil {
				continue
			}
			if r.err != nil {
				firstErr = r.err
				cancel()
				continue
			}
			if _, err := a.sw.Write(r.lines); err != nil {
				firstErr = err
				cancel()
				continue
			}
			st.Pos = r.next
			st.Rows += r.rows
			st.Texts += r.texts
			st.Empty += r.empty
			st.Matches += r.n
			bar.Add(int(r.rows))
			if time.Since(a.lastCk) >= a.opts.CheckpointEvery {
				if err := a.saveCheckpoint(); err != nil {
					firstErr = err
					cancel()
				}
			}
		}
	}
	// What was applied is consistent; keep it for the next run.
	if err := a.saveCheckpoint(); err != nil && firstErr == nil {
		firstErr = err
	}
	if firstErr != nil {
		return firstErr
	}
	if readErr != nil {
		return readErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	st.Done = true
	return a.saveCheckpoint()
}

// searchers are a worker's searchers of the benchmark texts.
type searchers struct {
	minhash *minhash.Searcher
	edits   *minhash.EditSearcher
}

// process audits one chunk of rows.
func (a *auditor) process(ctx context.Context, f *trainset.File, s searchers, c chunk) chunkResult {
	res := chunkResult{seq: c.seq}
	if len(c.rows) == 0 {
		return res
	}
	res.next = c.rows[len(c.rows)-1].Next
	type text struct {
		rec  int
		t    trainset.Text
		norm string
	}
	var texts []text
	var recs []trainset.Record
	var norm []byte
	for _, r := range c.rows {
		rec, err := f.Decode(r)
		if err != nil {
			res.err = err
			return res
		}
		recs = append(recs, rec)
		for _, t := range rec.Texts {
			res.texts++
			norm = minhash.AppendNormalized(norm[:0], t.Text)
			if len(norm) == 0 {
				res.empty++
				continue
			}
			texts = append(texts, text{rec: len(recs) - 1, t: t, norm: string(norm)})
		}
	}
	res.rows = int64(len(c.rows))
	var dense [][]vector.Hit
	if d := a.opts.Dense; d != nil && a.flat != nil && len(texts) > 0 {
		in := make([]string, len(texts))
		for i, t := range texts {
			in[i] = t.t.Text
		}
		vecs, err := d.Embedder.Embed(ctx, embed.Document, in)
		if err == nil {
			err = embed.Check(vecs, len(in), a.flat.Dim())
		}
		if err == nil {
			dense, err = a.flat.Search(vecs, d.TopK, vector.SearchOptions{Workers: 1})
		}
		if err != nil {
			res.err = fmt.Errorf("%s:%d: dense matching: %w", f.Path, recs[texts[0].rec].Line, err)
			return res
		}
	}
	var buf []byte
	matched := map[int]bool{}
	for i, t := range texts {
		rec := recs[t.rec]
		emit := func(member int, kind, measure string, sim float64) {
			it := a.items[member]
			m := Match{Task: a.tasks[it.task].Name, BenchmarkKind: it.kind, BenchmarkID: it.id,
				TrainFile: f.Path, TrainLine: rec.Line, TrainElement: rec.Element, TrainField: t.t.Field, TrainRole: string(t.t.Role),
				Match: kind, Measure: measure, Similarity: sim, TrainText: snippet(t.t.Text, 300)}
			b, _ := json.Marshal(m)
			buf = append(append(buf, b...), '\n')
			res.n++
		}
		clear(matched)
		for _, m := range s.minhash.SearchNormalized(t.norm) {
			kind, measure := MatchNear, MeasureJaccard
			if m.Exact {
				kind, measure = MatchExact, MeasureExact
			}
			matched[m.Member] = true
			emit(m.Member, kind, measure, m.Similarity)
		}
		for _, m := range s.edits.SearchNormalized(t.norm) {
			if !matched[m.Member] {
				matched[m.Member] = true
				emit(m.Member, MatchNear, MeasureWordEdits, m.Similarity)
			}
		}
		if dense != nil {
			for _, h := range dense[i] {
				if float64(h.Score) < a.opts.Dense.Threshold {
					break
				}
				if member := a.denseMember[h.Index]; !matched[member] {
					emit(member, MatchDense, MeasureCosine, float64(h.Score))
				}
			}
		}
	}
	res.lines = buf
	return res
}

// Matches calls fn with every match, in training-file order.
func (r *LeakageResult) Matches(fn func(Match) error) error {
	return readMatches(filepath.Join(r.dir, matchesFile), fn)
}

// WriteMatches writes the matches as JSON lines, one per match.
func (r *LeakageResult) WriteMatches(w io.Writer) error {
	f, err := os.Open(filepath.Join(r.dir, matchesFile))
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// Close removes the run's state: call it once the outputs are written, so
// that a rerun audits afresh rather than reusing the finished run.
func (r *LeakageResult) Close() error {
	if r == nil || r.dir == "" {
		return nil
	}
	return os.RemoveAll(r.dir)
}

func readMatches(path string, fn func(Match) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	lr := fileio.NewLines(f, path, "JSON-lines")
	for {
		b, ok := lr.Next()
		if !ok {
			break
		}
		var m Match
		if err := json.Unmarshal(b, &m); err != nil {
			return lr.Errorf("damaged matches file: %v; delete the state directory and rerun", err)
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	if err := lr.Err(); err != nil {
		return fmt.Errorf("damaged matches file: %w; delete the state directory and rerun", err)
	}
	return nil
}

// sortMatches orders matches as the report lists them: by similarity
// (highest first), then kind, then id.
func sortMatches(ms []Match) {
	slices.SortStableFunc(ms, func(x, y Match) int {
		if x.Similarity != y.Similarity {
			if x.Similarity > y.Similarity {
				return -1
			}
			return 1
		}
		if c := kindRank(x.Match) - kindRank(y.Match); c != 0 {
			return c
		}
		if x.BenchmarkKind != y.BenchmarkKind {
			if x.BenchmarkKind < y.BenchmarkKind {
				return 1 // queries first
			}
			return -1
		}
		if x.BenchmarkID < y.BenchmarkID {
			return -1
		} else if x.BenchmarkID > y.BenchmarkID {
			return 1
		}
		return 0
	})
}

func kindRank(m string) int {
	switch m {
	case MatchExact:
		return 0
	case MatchNear:
		return 1
	}
	return 2
}
