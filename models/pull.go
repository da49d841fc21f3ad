package models

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/hub"
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
// export is ErrNoONNX, with what to do instead. Graphs with external
// weight files (models over 2 GB) are not fetched whole; the encoders the
// ONNX backend runs are far smaller.
func Pull(ctx context.Context, c *hub.Client, hubID, revision string) (Checkpoint, error) {
	repo := hub.Repo{Type: hub.Model, ID: hubID}
	if revision == "" {
		revision = hub.DefaultRevision
	}
	var first error
	for _, graph := range onnxPaths {
		snap, err := c.Snapshot(ctx, repo, revision, append([]string{graph}, needed...)...)
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
// and fingerprints: the size and modification time of the graph, the
// tokenizer and the config, so replacing any of them (a new export,
// another truncation length) does not reuse what the old one made.
func LocalRevision(dir string) string {
	var parts []string
	for _, name := range []string{"model.onnx", filepath.Join("onnx", "model.onnx"), "tokenizer.json", "config.json"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
			parts = append(parts, fmt.Sprintf("%s:%d:%d", name, st.Size(), st.ModTime().UnixNano()))
		}
	}
	return "local:" + strings.Join(parts, ",")
}
