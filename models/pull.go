package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/onnx"
)

// ErrNoONNX is returned by Pull for a repository without an ONNX export.
var ErrNoONNX = errors.New("no ONNX export")

// Checkpoint is a local encoder's files in the Hugging Face cache.
type Checkpoint struct {
	HubID  string
	Commit string // the commit the revision resolved to
	Dir    string // the snapshot directory
	// ONNX is the graph (onnx/model.onnx as optimum exports it into model
	// repositories, else model.onnx at the root), Tokenizer the fast
	// tokenizer's tokenizer.json, Config the model's config.json.
	ONNX, Tokenizer, Config string
}

// The files a local encoder needs, with the two places repositories keep
// the ONNX graph, the preferred first.
var (
	onnxPaths = []string{"onnx/model.onnx", "model.onnx"}
	needed    = []string{"tokenizer.json", "config.json"}
)

// Pull makes the files a local ONNX encoder needs present in c's cache:
// the ONNX graph, tokenizer.json and config.json of hubID at revision
// ("" for main). Files already cached cost no request; in offline mode
// (HF_HUB_OFFLINE) only the cache is read. A repository without an ONNX
// export is ErrNoONNX, with what to do instead. A graph that keeps its
// weights in files beside it (onnx.ExternalData: an export over 2 GB,
// optimum's model.onnx_data) has them fetched too.
func Pull(ctx context.Context, c *hub.Client, hubID, revision string) (Checkpoint, error) {
	repo := hub.Repo{Type: hub.Model, ID: hubID}
	if revision == "" {
		revision = hub.DefaultRevision
	}
	var first error
	for _, graph := range onnxPaths {
		snap, err := c.Snapshot(ctx, repo, revision, append([]string{graph}, needed...)...)
		if err == nil {
			err = pullWeights(ctx, c, repo, snap, graph)
		}
		if err == nil {
			return Checkpoint{
				HubID: hubID, Commit: snap.Commit, Dir: snap.Dir,
				ONNX: snap.Path(graph), Tokenizer: snap.Path("tokenizer.json"), Config: snap.Path("config.json"),
			}, nil
		}
		if !errors.Is(err, hub.ErrEntryNotFound) && !errors.Is(err, hub.ErrOffline) {
			return Checkpoint{}, fmt.Errorf("pulling %s: %w", hubID, err)
		}
		if first == nil {
			first = err
		}
	}
	if c.Offline {
		return Checkpoint{}, fmt.Errorf("pulling %s: neither %s is in the cache: %w", hubID, strings.Join(onnxPaths, " nor "), first)
	}
	// Both tries missed a file: say which one.
	rev, err := c.Resolve(ctx, repo, revision)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("pulling %s: %w", hubID, err)
	}
	have := make(map[string]bool, len(rev.Files))
	for _, f := range rev.Files {
		have[f.Path] = true
	}
	if !have[onnxPaths[0]] && !have[onnxPaths[1]] {
		return Checkpoint{}, fmt.Errorf("%s@%s has %w (no %s): export one with `optimum-cli export onnx --model %s DIR` and upload it or point r2med at DIR, or serve the model over HTTP (--backend openai or tei, e.g. Text Embeddings Inference or vLLM)",
			hubID, revision, ErrNoONNX, strings.Join(onnxPaths, " or "), hubID)
	}
	for _, n := range needed {
		if !have[n] {
			return Checkpoint{}, fmt.Errorf("%s@%s has an ONNX graph but no %s, which the local backend needs (the fast tokenizer's tokenizer.json and the model's config.json): save them next to the graph (AutoTokenizer.from_pretrained(...).save_pretrained(DIR) writes tokenizer.json), or serve the model over HTTP", hubID, revision, n)
		}
	}
	return Checkpoint{}, fmt.Errorf("pulling %s: %w", hubID, first)
}

// pullWeights fetches into snap the files the graph keeps its weights in,
// at the snapshot's commit.
func pullWeights(ctx context.Context, c *hub.Client, repo hub.Repo, snap *hub.Snapshot, graph string) error {
	raw, err := os.ReadFile(snap.Path(graph))
	if err != nil {
		return err
	}
	ext, err := onnx.ExternalData(raw)
	if err != nil || len(ext) == 0 {
		// A graph that does not parse is ONNX Runtime's to refuse, with
		// its own words, when the encoder is loaded.
		return nil
	}
	var pats []string
	for _, e := range ext {
		pats = append(pats, globQuote(path.Join(path.Dir(graph), e)))
	}
	got, err := c.Snapshot(ctx, repo, snap.Commit, pats...)
	if err != nil {
		return fmt.Errorf("the weights %s keeps beside it (%s): %w", graph, strings.Join(ext, ", "), err)
	}
	if len(got.Files) != len(pats) {
		return fmt.Errorf("%s keeps its weights in %s; the repository holds %d of those files", graph, strings.Join(ext, ", "), len(got.Files))
	}
	return nil
}

// globQuote escapes the characters the Hub client's patterns read as
// wildcards (path.Match's), so that name matches itself alone.
func globQuote(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`\*?[`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Pull fetches the local files of each of the model's checkpoints (both
// encoders of MedCPT) at revision.
func (m Model) Pull(ctx context.Context, c *hub.Client, revision string) ([]Checkpoint, error) {
	if !m.Local() {
		how := "an HTTP server (--backend " + strings.Join(m.Backends, " or ") + ")"
		if m.Supports(Voyage) || (m.Supports(OpenAI) && !strings.Contains(m.HubID, "/")) {
			how = "its provider's API (--backend " + strings.Join(m.Backends, " or ") + ")"
		}
		return nil, fmt.Errorf("model %s (%s) is served by %s; the local ONNX backend does not run it, so there is nothing to pull", m.Name, strings.Join(m.HubIDs(), ", "), how)
	}
	var out []Checkpoint
	for _, id := range m.HubIDs() {
		cp, err := Pull(ctx, c, id, revision)
		if err != nil {
			return out, fmt.Errorf("model %s: %w", m.Name, err)
		}
		out = append(out, cp)
	}
	return out, nil
}

// LocalOptions turns the model's pulled checkpoints (as Model.Pull
// returns them, or directories holding the same files) into what
// embed.NewLocal takes: the document encoder's directory and the recipe's
// pooling, normalization, lengths, query encoder and paired documents.
// Batch size and threads are left to the caller: they change speed, not
// vectors.
func (m Model) LocalOptions(cps []Checkpoint) (dir string, opts embed.LocalOptions, err error) {
	if !m.Local() {
		return "", opts, fmt.Errorf("model %s does not run on the local ONNX backend (it is served by %s)", m.Name, strings.Join(m.Backends, ", "))
	}
	ids := m.HubIDs()
	if len(cps) != len(ids) {
		return "", opts, fmt.Errorf("model %s needs %d checkpoints (%s), got %d", m.Name, len(ids), strings.Join(ids, ", "), len(cps))
	}
	find := func(id string) string {
		for _, cp := range cps {
			if strings.EqualFold(cp.HubID, id) {
				return cp.Dir
			}
		}
		return ""
	}
	dir = find(m.CheckpointFor(embed.Document))
	query := find(m.CheckpointFor(embed.Query))
	if dir == "" || query == "" {
		return "", opts, fmt.Errorf("model %s needs the checkpoints %s", m.Name, strings.Join(ids, " and "))
	}
	opts = embed.LocalOptions{
		Pooling:        m.Pooling,
		Normalize:      m.Normalize,
		MaxLength:      m.MaxLengthFor(embed.Document),
		QueryMaxLength: m.MaxLengthFor(embed.Query),
		PairDocuments:  m.DocAsPair,
	}
	if query != dir {
		opts.QueryDir = query
	}
	return dir, opts, nil
}

// LocalRevision stands for a local model directory's version (a
// cross-encoder's or an encoder's, --model-dir) in cache keys, manifests
// and fingerprints: a SHA-256 of the content of every file the local
// backend reads there — the graph (model.onnx, onnx/model.onnx), the
// weight files the graph keeps outside itself (onnx.ExternalData:
// model.onnx_data), tokenizer.json, config.json and the two files the
// default length is read from (tokenizer_config.json,
// sentence_bert_config.json) — each with its name. Replacing any of them
// (a new export, other weights of the same size copied with their times,
// another truncation length) is another revision, so what the old one
// made is not reused. It reads every byte (0.4 GB/s of SHA-256 on the
// shared 2-core development machine; retrieve.Dense reads it once per run,
// in Resolve). A file that cannot be read enters the hash as its name and
// the error, in place of its content (loading the model fails on it then).
func LocalRevision(dir string) string {
	h := sha256.New()
	graphs := []string{"model.onnx", path.Join("onnx", "model.onnx")}
	names := slices.Clone(graphs)
	for _, graph := range graphs {
		raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(graph)))
		if err != nil {
			continue
		}
		ext, err := onnx.ExternalData(raw)
		if err != nil {
			// ONNX Runtime will say what is wrong with the graph; its
			// bytes are hashed as they are.
			ext = nil
		}
		for _, e := range ext {
			names = append(names, path.Join(path.Dir(graph), e))
		}
	}
	names = append(names, "tokenizer.json", "config.json", "tokenizer_config.json", "sentence_bert_config.json")
	for _, name := range names {
		fh, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		var n int64
		if err == nil {
			n, err = io.Copy(io.Discard, io.TeeReader(fh, h))
			fh.Close()
		}
		if err != nil {
			fmt.Fprintf(h, "\x00%s unreadable: %v\x00", name, err)
			continue
		}
		fmt.Fprintf(h, "\x00%s %d\x00", name, n)
	}
	return "local:sha256:" + hex.EncodeToString(h.Sum(nil))
}
