package nano

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/trec"
)

// Row types of the hub configs, with HAKARI-Bench's column names.
type (
	// TextRow is a row of the corpus and queries configs.
	TextRow struct {
		ID   string `parquet:"_id"`
		Text string `parquet:"text"`
	}
	// QrelsRow is a row of the qrels config: positives only, no grade.
	QrelsRow struct {
		QueryID  string `parquet:"query-id"`
		CorpusID string `parquet:"corpus-id"`
	}
	// CandidatesRow is a row of a candidate config (bm25, dense,
	// reranking_hybrid): one query's candidates, best first.
	CandidatesRow struct {
		QueryID   string   `parquet:"query-id"`
		CorpusIDs []string `parquet:"corpus-ids,list"`
	}
)

// ShardSuffix ends every data file's name; the hub names single-shard
// splits this way.
const ShardSuffix = "-00000-of-00001.parquet"

// DataFile is the path of split's file of config, relative to the hub root.
func DataFile(config, split string) string {
	return config + "/" + split + ShardSuffix
}

// createdBy names the writer in the files' metadata. Set explicitly because
// parquet-go's default is taken from the binary's build information, which
// differs between a test binary and the CLI and would change the bytes.
type createdBy string

func (c createdBy) ConfigureWriter(cfg *parquet.WriterConfig) { cfg.CreatedBy = string(c) }

// writerOptions pin every setting that shapes the bytes, so equal inputs
// give equal files whatever parquet-go's defaults become: snappy (the
// hub's and pyarrow's usual codec), version 1 data pages and PLAIN strings
// (parquet-go would pick DELTA_LENGTH_BYTE_ARRAY, which older readers
// lack), 256 KiB pages, one row group per file.
var writerOptions = []parquet.WriterOption{
	createdBy("r2med nano"),
	parquet.Compression(&parquet.Snappy),
	parquet.DataPageVersion(1),
	parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
	parquet.PageBufferSize(256 << 10),
	parquet.DataPageStatistics(true),
	parquet.MaxRowsPerRowGroup(0),
}

func writeParquet[T any](st *stage, path string, rows []T) error {
	return st.write(path, func(w io.Writer) error {
		pw := parquet.NewGenericWriter[T](w, writerOptions...)
		if _, err := pw.Write(rows); err != nil {
			return err
		}
		return pw.Close()
	})
}

// stage writes a split's files beside their places under temporary names
// (".NAME.tmp-*", as fileio.WriteAtomic names them) and moves them in
// together once every one is written, so that a split is replaced whole:
// a failure or an interrupt while writing leaves the split as it was,
// never a new corpus beside the old judgments and candidate lists.
type stage struct{ tmp, path []string }

func (st *stage) write(path string, write func(io.Writer) error) (err error) {
	if err := fileio.NotDir(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	st.tmp, st.path = append(st.tmp, f.Name()), append(st.path, path)
	return nil
}

// commit moves the staged files into place.
func (st *stage) commit() error {
	for i, tmp := range st.tmp {
		if err := os.Rename(tmp, st.path[i]); err != nil {
			return err
		}
		st.tmp[i] = ""
	}
	return nil
}

// discard removes what commit did not move.
func (st *stage) discard() {
	for _, tmp := range st.tmp {
		if tmp != "" {
			os.Remove(tmp)
		}
	}
}

// WriteHub writes s as split of a hub dataset rooted at dir: one parquet
// file per config ({config}/{split}-00000-of-00001.parquet: corpus, queries,
// qrels, bm25, and the dense and reranking_hybrid configs when built),
// metadata/{split}.json, and README.md, whose configs front matter lists
// every split found under dir, so writing the tasks of a collection one by
// one into one dir yields one dataset. Writing a split again replaces it,
// candidate files of configs the new set lacks included; the split's data
// and metadata files are staged and moved in together, so a write that
// fails leaves the split as it was. An empty split means s.Split.
//
// The same set always gives the same bytes. The reranking_hybrid safeguard
// is seeded with the split name, so a set that has one can only be written
// under the split it was built for.
func WriteHub(s *Set, dir, split string) error {
	if split == "" {
		split = s.Split
	}
	if !validSplit(split) {
		return fmt.Errorf("nano: split name %q is not a Hugging Face split name (letters, digits and '_', groups joined by '.')", split)
	}
	if split != s.Split && s.Subset("reranking_hybrid") != nil {
		return fmt.Errorf("nano: the set was built as split %q and its reranking_hybrid safeguards are drawn with that name; rebuild it with Options.Split %q", s.Split, split)
	}
	meta, err := s.Metadata()
	if err != nil {
		return err
	}
	meta.SplitName = split
	path := func(config string) string { return filepath.Join(dir, filepath.FromSlash(DataFile(config, split))) }

	st := &stage{}
	defer st.discard()
	corpus := make([]TextRow, len(s.Corpus))
	for i, d := range s.Corpus {
		corpus[i] = TextRow{ID: d.ID, Text: d.Text}
	}
	if err := writeParquet(st, path("corpus"), corpus); err != nil {
		return err
	}
	queries := make([]TextRow, len(s.Queries))
	for i, q := range s.Queries {
		queries[i] = TextRow{ID: q.ID, Text: q.Text}
	}
	if err := writeParquet(st, path("queries"), queries); err != nil {
		return err
	}
	if err := writeParquet(st, path("qrels"), s.qrelsRows()); err != nil {
		return err
	}
	for i := range s.Subsets {
		sub := &s.Subsets[i]
		rows := make([]CandidatesRow, len(s.Queries))
		for j, q := range s.Queries {
			rows[j] = CandidatesRow{QueryID: q.ID, CorpusIDs: docIDs(sub.Run[q.ID])}
		}
		if err := writeParquet(st, path(sub.Config), rows); err != nil {
			return err
		}
	}
	if err := writeJSON(st, filepath.Join(dir, "metadata", split+".json"), meta); err != nil {
		return err
	}
	if err := st.commit(); err != nil {
		return err
	}
	if err := removeStale(dir, split, s); err != nil {
		return err
	}
	return writeReadme(dir)
}

// removeStale deletes split's files of candidate configs s does not have,
// left by an earlier write of the split (say, with a dense run), so that the
// directory describes s alone. A config directory left empty goes too.
func removeStale(dir, split string, s *Set) error {
	layout, err := scanHub(dir)
	if err != nil {
		return err
	}
	keep := map[string]bool{"corpus": true, "queries": true, "qrels": true}
	for _, sub := range s.Subsets {
		keep[sub.Config] = true
	}
	for config, splits := range layout {
		if keep[config] || !slices.Contains(splits, split) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, config, split+ShardSuffix)); err != nil {
			return err
		}
		if len(splits) == 1 {
			// Fails, and is meant to, when the directory holds other files.
			_ = os.Remove(filepath.Join(dir, config))
		}
	}
	return nil
}

// qrelsRows lists the kept positives in the order they were selected in:
// queries in set order, each query's documents by id.
func (s *Set) qrelsRows() []QrelsRow {
	rows := make([]QrelsRow, 0, s.Qrels.Len())
	for _, q := range s.Queries {
		for _, doc := range trec.QueryIDs(s.Qrels[q.ID]) {
			rows = append(rows, QrelsRow{QueryID: q.ID, CorpusID: doc})
		}
	}
	return rows
}

func docIDs(hits []ir.Hit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.DocID
	}
	return ids
}

// writeJSON writes v as json.dumps(v, ensure_ascii=False, indent=2) + "\n"
// would.
func writeJSON(st *stage, path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return st.write(path, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
}

// hubLayout is what a hub directory holds: config → splits with a data
// file, both sorted.
type hubLayout map[string][]string

func scanHub(dir string) (hubLayout, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	layout := make(hubLayout)
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "metadata" || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if split, ok := strings.CutSuffix(f.Name(), ShardSuffix); ok && !f.IsDir() && validSplit(split) {
				layout[e.Name()] = append(layout[e.Name()], split)
			}
		}
	}
	for _, splits := range layout {
		slices.Sort(splits)
	}
	return layout, nil
}

// configOrder puts the text configs first, as HAKARI's READMEs do, then the
// candidate configs by name.
func (l hubLayout) configOrder() []string {
	fixed := []string{"corpus", "queries", "qrels", BM25Config}
	var rest []string
	for c := range l {
		if !slices.Contains(fixed, c) {
			rest = append(rest, c)
		}
	}
	slices.Sort(rest)
	var out []string
	for _, c := range append(fixed, rest...) {
		if len(l[c]) > 0 {
			out = append(out, c)
		}
	}
	return out
}

type hfDataFile struct {
	Split string `yaml:"split"`
	Path  string `yaml:"path"`
}

type hfConfig struct {
	ConfigName string       `yaml:"config_name"`
	Default    bool         `yaml:"default,omitempty"`
	DataFiles  []hfDataFile `yaml:"data_files"`
}

// frontMatter is the README's YAML header: the configs list of the Hugging
// Face dataset card (hub docs, "Manual Configuration"), queries marked as
// the default config as in HAKARI's Nano sets.
func (l hubLayout) frontMatter() ([]byte, error) {
	var configs []hfConfig
	for _, c := range l.configOrder() {
		hc := hfConfig{ConfigName: c, Default: c == "queries"}
		for _, split := range l[c] {
			hc.DataFiles = append(hc.DataFiles, hfDataFile{Split: split, Path: DataFile(c, split)})
		}
		configs = append(configs, hc)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(struct {
		Configs []hfConfig `yaml:"configs"`
	}{configs}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeReadme(dir string) error {
	layout, err := scanHub(dir)
	if err != nil {
		return err
	}
	fm, err := layout.frontMatter()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(fm)
	b.WriteString("---\n\n")
	b.WriteString(readmeIntro)
	b.WriteString("\n| split | queries | documents | positive qrels | candidate configs | BM25 nDCG@10 | Dense nDCG@10 | Hybrid nDCG@10 | safeguard rows |\n")
	b.WriteString("|---|---:|---:|---:|---|---:|---:|---:|---:|\n")
	var splits []string
	for _, c := range []string{"corpus", "queries", "qrels"} {
		splits = append(splits, layout[c]...)
	}
	slices.Sort(splits)
	for _, split := range slices.Compact(splits) {
		var cands []string
		for _, c := range layout.configOrder() {
			if c != "corpus" && c != "queries" && c != "qrels" && slices.Contains(layout[c], split) {
				cands = append(cands, "`"+c+"`")
			}
		}
		m, err := readMetadata(filepath.Join(dir, "metadata", split+".json"))
		if err != nil {
			return err
		}
		if m == nil {
			fmt.Fprintf(&b, "| %s | n/a | n/a | n/a | %s | n/a | n/a | n/a | n/a |\n", split, strings.Join(cands, ", "))
			continue
		}
		cs := m.CandidateSubsets
		safeguards := "n/a"
		if cs.Hybrid != nil && cs.Hybrid.SafeguardPositiveRows != nil {
			safeguards = fmt.Sprint(*cs.Hybrid.SafeguardPositiveRows)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %s | %s | %s | %s |\n", split,
			m.Counts.Queries, m.Counts.Documents, m.Counts.PositiveQrels, strings.Join(cands, ", "),
			score4(cs.BM25), score4(cs.Dense), score4(cs.Hybrid), safeguards)
	}
	return fileio.WriteAtomic(filepath.Join(dir, "README.md"), func(w io.Writer) error {
		_, err := w.Write(b.Bytes())
		return err
	})
}

func readMetadata(path string) (*Metadata, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := errtext.CheckJSONFile(path, data); err != nil {
		return nil, err
	}
	var m Metadata
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &m, nil
}

func score4(m *SubsetMetrics) string {
	if m == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", float64(m.NDCGAt10))
}

const readmeIntro = `# Nano retrieval set

Built with the r2med toolkit's ` + "`nano`" + ` package, following HAKARI-Bench's Nano
construction: per split, the queries that have a positive judgment (by
default at most 200) and a bounded corpus (by default at most 10,000
documents: the queries' positives, then their hard negatives round-robin,
then the head of the source corpus), with duplicate ids and texts removed.
Judgments are positive-only. Each split's settings are in its metadata file.

Configs:

- ` + "`corpus`" + `, ` + "`queries`" + `: ` + "`_id`" + `, ` + "`text`" + `.
- ` + "`qrels`" + `: ` + "`query-id`" + `, ` + "`corpus-id`" + ` (positives, no score column).
- ` + "`bm25`" + `: ` + "`query-id`" + `, ` + "`corpus-ids`" + `: the BM25 top list (by default
  500) over the split's corpus.
- a dense config, when present: the same for a dense retriever.
- ` + "`reranking_hybrid`" + `: reciprocal rank fusion of the bm25 and dense lists
  (by default k=100, top 100); when the fused list holds no positive, one
  positive chosen by a seeded draw is appended after it (the safeguard), so a
  row one longer than the others ends in its safeguard.

` + "`metadata/{split}.json`" + ` has counts, positives per query, candidate-subset
quality (nDCG@10 and hit@10 macro-averaged; recall@100 micro-averaged over the
first 100 candidates, safeguard excluded) and the construction settings.
`
