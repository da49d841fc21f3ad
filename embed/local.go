package embed

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/r2med/r2med/onnx"
	"github.com/r2med/r2med/tokenizer"
)

// LocalOptions describe how a Local encoder turns texts into vectors. The
// zero value works for a model that pools itself; encoders that output
// token vectors need a Pooling.
type LocalOptions struct {
	// Pooling reduces token vectors to one per text (see Pooling).
	Pooling Pooling
	// Normalize scales every vector to unit length.
	Normalize bool
	// MaxLength is the most tokens per document, special tokens included;
	// longer texts are truncated. 0 takes the length sentence-transformers
	// would: sentence_bert_config.json's max_seq_length, else
	// tokenizer_config.json's model_max_length, else tokenizer.json's
	// truncation length, else 512, capped at config.json's
	// max_position_embeddings.
	MaxLength int
	// QueryMaxLength is the same for queries; 0 means MaxLength.
	QueryMaxLength int
	// QueryDir is a separate query encoder (MedCPT-Query beside
	// MedCPT-Article); empty encodes queries with the document model.
	QueryDir string
	// PairDocuments encodes each document as the pair ("", text), as
	// MedCPT's article encoder reads (title, abstract).
	PairDocuments bool
	// BatchSize is the number of texts per model call; 0 means 32.
	BatchSize int
	// Threads is ONNX Runtime's intra-op thread count; 0 lets it choose.
	Threads int
	// Output names the model output to read; empty lets onnx.Open pick.
	Output string
}

// Local embeds with ONNX encoders on this machine: tokenizer, ONNX
// Runtime, pooling, optional normalization. It is safe for concurrent use.
type Local struct {
	doc, query *localModel // the same model when there is no QueryDir
	opts       LocalOptions
	dim        int
	cut        [2]atomic.Int64 // by Input: texts cut to the maximum length
}

type localModel struct {
	dir    string
	tok    *tokenizer.Tokenizer
	sess   *onnx.Session
	maxLen int
}

// NewLocal loads the encoder in dir: model.onnx (or onnx/model.onnx, the
// Hugging Face layout), tokenizer.json and, if present, config.json.
func NewLocal(dir string, opts LocalOptions) (*Local, error) {
	if !onnx.Available {
		return nil, onnx.ErrUnavailable
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = 32
	}
	if opts.BatchSize < 0 || opts.MaxLength < 0 || opts.QueryMaxLength < 0 {
		return nil, fmt.Errorf("local encoder %s: batch size and max lengths must be ≥ 0", dir)
	}
	l := &Local{opts: opts}
	var err error
	if l.doc, err = loadLocal(dir, opts.MaxLength, opts); err != nil {
		return nil, err
	}
	l.query = l.doc
	if opts.QueryDir != "" && filepath.Clean(opts.QueryDir) != filepath.Clean(dir) {
		if l.query, err = loadLocal(opts.QueryDir, cmp.Or(opts.QueryMaxLength, opts.MaxLength), opts); err != nil {
			l.doc.sess.Close()
			return nil, err
		}
	} else if opts.QueryMaxLength > 0 {
		q := *l.doc
		if q.maxLen, err = q.limit(opts.QueryMaxLength); err != nil {
			l.doc.sess.Close()
			return nil, err
		}
		l.query = &q
	}
	l.dim = l.doc.sess.Dim()
	if qd := l.query.sess.Dim(); qd != l.dim {
		l.Close()
		return nil, fmt.Errorf("query encoder %s gives %d dimensions, document encoder %s gives %d",
			l.query.dir, qd, l.doc.dir, l.dim)
	}
	return l, nil
}

func loadLocal(dir string, maxLen int, opts LocalOptions) (*localModel, error) {
	m := &localModel{dir: dir}
	model := filepath.Join(dir, "model.onnx")
	if _, err := os.Stat(model); errors.Is(err, fs.ErrNotExist) {
		if alt := filepath.Join(dir, "onnx", "model.onnx"); fileExists(alt) {
			model = alt
		}
	}
	if !fileExists(model) {
		return nil, fmt.Errorf("local encoder %s: no model.onnx (nor onnx/model.onnx); "+
			"export the model to ONNX or fetch it with `r2med model pull`", dir)
	}
	var err error
	if m.tok, err = tokenizer.Load(filepath.Join(dir, "tokenizer.json")); err != nil {
		return nil, fmt.Errorf("local encoder %s: %w", dir, err)
	}
	if m.maxLen, err = m.limit(maxLen); err != nil {
		return nil, err
	}
	if m.sess, err = onnx.Open(model, onnx.Options{Threads: opts.Threads, Output: opts.Output}); err != nil {
		return nil, fmt.Errorf("local encoder %s: %w%s", dir, err, missingWeights(model))
	}
	switch {
	case m.sess.Rank() == 3 && opts.Pooling == PoolModel:
		err = fmt.Errorf("local encoder %s: its output %s holds token vectors; choose a pooling (cls, mean or last)", dir, m.sess.Output())
	case m.sess.Rank() == 2 && opts.Pooling != PoolModel:
		err = fmt.Errorf("local encoder %s: its output %s is already one vector per text, so pooling %s cannot apply; leave pooling unset", dir, m.sess.Output(), opts.Pooling)
	case m.sess.Dim() == 0:
		err = fmt.Errorf("local encoder %s: output %s has no fixed dimension", dir, m.sess.Output())
	}
	if err != nil {
		m.sess.Close()
		return nil, err
	}
	return m, nil
}

// missingWeights says which of the files the graph keeps its weights in
// (onnx.ExternalData) are not beside it, for the error of a graph ONNX
// Runtime could not open; "" when none is missing.
func missingWeights(graph string) string {
	raw, err := os.ReadFile(graph)
	if err != nil {
		return ""
	}
	ext, err := onnx.ExternalData(raw)
	if err != nil {
		return ""
	}
	var missing []string
	for _, e := range ext {
		if !fileExists(filepath.Join(filepath.Dir(graph), filepath.FromSlash(e))) {
			missing = append(missing, e)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	verb := "are"
	if len(missing) == 1 {
		verb = "is"
	}
	return fmt.Sprintf("; the graph keeps its weights in %s beside it, and %s %s missing from %s: copy the export's weight files next to its graph (`r2med model pull` fetches them)",
		strings.Join(ext, ", "), strings.Join(missing, ", "), verb, filepath.Dir(graph))
}

// limit resolves a requested max length against what the model accepts.
func (m *localModel) limit(want int) (int, error) {
	positions := 0
	if raw, err := os.ReadFile(filepath.Join(m.dir, "config.json")); err == nil {
		var cfg struct {
			MaxPositions int `json:"max_position_embeddings"`
		}
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return 0, fmt.Errorf("local encoder %s: config.json: %w", m.dir, err)
		}
		positions = cfg.MaxPositions
	}
	switch {
	case want == 0:
		return m.defaultLength(positions)
	case positions > 0 && want > positions:
		return 0, fmt.Errorf("local encoder %s: max length %d exceeds the model's %d positions (config.json max_position_embeddings)",
			m.dir, want, positions)
	}
	return want, nil
}

// defaultLength is the length sentence-transformers truncates the model's
// texts at (sentence_transformers/models/Transformer.py: tokenize passes
// max_length=max_seq_length): sentence_bert_config.json's max_seq_length,
// else min(max_position_embeddings, tokenizer_config.json's
// model_max_length), which is transformers' truncation=True length too.
// tokenizer.json's own truncation setting, which both replace on every
// call (all-MiniLM-L6-v2 ships 128 there and embeds 256 tokens), counts
// only without them; then 512. It never exceeds positions (0: unknown).
func (m *localModel) defaultLength(positions int) (int, error) {
	capped := func(n int) int {
		if positions > 0 {
			return min(n, positions)
		}
		return n
	}
	var st struct {
		MaxSeqLength *float64 `json:"max_seq_length"`
	}
	if ok, err := readJSON(filepath.Join(m.dir, "sentence_bert_config.json"), &st); err != nil {
		return 0, err
	} else if ok && st.MaxSeqLength != nil && *st.MaxSeqLength >= 1 {
		return capped(int(min(*st.MaxSeqLength, 1<<30))), nil
	}
	var tc struct {
		ModelMaxLength *float64 `json:"model_max_length"`
	}
	if ok, err := readJSON(filepath.Join(m.dir, "tokenizer_config.json"), &tc); err != nil {
		return 0, err
	} else if ok && tc.ModelMaxLength != nil && *tc.ModelMaxLength >= 1 {
		// transformers writes 1e30 (VERY_LARGE_INTEGER) for "no limit".
		if *tc.ModelMaxLength < 1<<30 {
			return capped(int(*tc.ModelMaxLength)), nil
		}
		if positions > 0 {
			return positions, nil
		}
	}
	return capped(cmp.Or(m.tok.MaxLength(), 512)), nil
}

// readJSON decodes the JSON file at p into v; a missing file is not an
// error (ok false).
func readJSON(p string, v any) (ok bool, err error) {
	raw, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		return false, fmt.Errorf("local encoder: %s: %w", p, err)
	}
	return true, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// BatchSize is the texts per model call.
func (l *Local) BatchSize() int { return l.opts.BatchSize }

// Dim is the embedding dimension.
func (l *Local) Dim() int { return l.dim }

// MaxLength is the token limit for texts of one side.
func (l *Local) MaxLength(in Input) int {
	if in == Query {
		return l.query.maxLen
	}
	return l.doc.maxLen
}

// Embed encodes texts in batches of similar length (longest first, as
// BEIR orders a corpus, so padding is small and the biggest batch comes
// first) and returns the vectors in input order.
func (l *Local) Embed(ctx context.Context, in Input, texts []string) ([][]float32, error) {
	v, _, err := l.EmbedCut(ctx, in, texts)
	return v, err
}

// EmbedCut is Embed with the tokens truncation removed from each text
// (see Cutter).
func (l *Local) EmbedCut(ctx context.Context, in Input, texts []string) ([][]float32, []int, error) {
	m, pair := l.doc, l.opts.PairDocuments
	if in == Query {
		m, pair = l.query, false
	}
	order := longestFirst(texts)
	out := make([][]float32, len(texts))
	cut := make([]int, len(texts))
	encs := make([]tokenizer.Encoding, 0, l.opts.BatchSize)
	for start := 0; start < len(order); start += l.opts.BatchSize {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		idx := order[start:min(start+l.opts.BatchSize, len(order))]
		var b tokenizer.Batch
		b, encs = m.encode(texts, idx, pair, encs)
		vecs, err := m.run(b, l.opts.Pooling)
		if err != nil {
			return nil, nil, err
		}
		for k, i := range idx {
			if l.opts.Normalize {
				Normalize(vecs[k])
			}
			out[i] = vecs[k]
			cut[i] = encs[k].Cut
			if cut[i] > 0 {
				l.cut[in%2].Add(1)
			}
		}
	}
	if err := Check(out, len(texts), l.dim); err != nil {
		return nil, nil, fmt.Errorf("local encoder %s: %w", m.dir, err)
	}
	return out, cut, nil
}

// longestFirst returns text indices by decreasing length, stable.
func longestFirst(texts []string) []int {
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(texts[b]), len(texts[a])) })
	return order
}

// encode tokenizes texts[idx...] into one padded batch, reusing encs.
func (m *localModel) encode(texts []string, idx []int, pair bool, encs []tokenizer.Encoding) (tokenizer.Batch, []tokenizer.Encoding) {
	encs = encs[:0]
	for _, i := range idx {
		if pair {
			encs = append(encs, m.tok.EncodePair("", texts[i], m.maxLen))
		} else {
			encs = append(encs, m.tok.Encode(texts[i], m.maxLen))
		}
	}
	return m.tok.Pad(encs), encs
}

func (m *localModel) run(b tokenizer.Batch, p Pooling) ([][]float32, error) {
	t, err := m.sess.Run(onnx.Batch{IDs: b.IDs, TypeIDs: b.TypeIDs, AttentionMask: b.AttentionMask, Rows: b.Rows, Len: b.Len})
	if err != nil {
		return nil, fmt.Errorf("local encoder %s: %w", m.dir, err)
	}
	if len(t.Shape) == 3 {
		vecs, err := p.Pool(t.Data, b.AttentionMask, t.Shape[0], t.Shape[1], t.Shape[2])
		if err != nil {
			return nil, fmt.Errorf("local encoder %s: %w", m.dir, err)
		}
		return vecs, nil
	}
	rows, dim := t.Shape[0], t.Shape[1]
	vecs := make([][]float32, rows)
	for r := range vecs {
		vecs[r] = t.Data[r*dim : (r+1)*dim : (r+1)*dim]
	}
	return vecs, nil
}

// Truncated reports the queries and documents cut to the maximum length
// (MaxLength) over the encoder's life, each time it embedded them.
func (l *Local) Truncated() (queries, documents int64) {
	return l.cut[Query].Load(), l.cut[Document].Load()
}

// Close releases the models.
func (l *Local) Close() error {
	err := l.doc.sess.Close()
	if l.query.sess != l.doc.sess {
		err = errors.Join(err, l.query.sess.Close())
	}
	return err
}
