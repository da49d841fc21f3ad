package hubrepo

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/internal/fileio"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/table"
)

// hubReadme is the dataset card; its YAML front matter declares the configs.
const hubReadme = "README.md"

// Config is one config (the Hub also says "subset") of a Hugging Face
// dataset repository: which files make up each of its splits.
type Config struct {
	Name    string
	Default bool    // the card marks it default: true
	Splits  []Split // in the order the card lists them
}

// Split is one split of a config: path patterns relative to the
// repository root, globs allowed, as the card's data_files gives them.
type Split struct {
	Name     string
	Patterns []string
}

// Configs are the configs of a downloaded dataset repository: those its
// README.md declares or, when it declares none, those its file names
// imply (see ReadConfigs).
type Configs struct {
	Configs []Config
	// Declared is false when the configs were inferred from file names.
	Declared bool
	// Readme is the dataset card's path when one was read, else "".
	Readme string

	src   repo
	files []string // every non-hidden regular file, slash paths, sorted
}

// ReadConfigs reads the configs of the dataset repository downloaded to
// dir (a snapshot directory of the Hugging Face cache, say). They come from
// the configs block of README.md's YAML front matter, which the Hub
// documents under "Manual Configuration": each config has a config_name, an
// optional default: true, and data_files given as a pattern, a list of
// patterns (both mean the split "train"), or a list of {split, path} with
// path a pattern or a list of them. Patterns are relative to the repository
// root; "*" and "?" stay within one path element and "**" spans any number
// of them. Files and folders whose names start with "." are never matched.
//
// Without a configs block the configs are inferred from file names, after
// the conventions the Hub and R2MED use: {config}/{split}-NNNNN-of-NNNNN.ext
// and {config}/{split}.ext (data/ meaning the config "default"),
// {config}/{split}/*.ext (the Hub's parquet export, and R2MED's
// {method}/{llm}/query_with_hydoc.jsonl), and, as in R2MED's repositories,
// a top-level {name}.ext as the config and split name. Only table files
// count (.parquet, .jsonl, .json, .ndjson, each optionally .gz).
func ReadConfigs(dir string) (*Configs, error) {
	src, err := openRepo(dir)
	if err != nil {
		return nil, err
	}
	return src.hubConfigs()
}

// ReadConfigsFS is ReadConfigs for the directory root of fsys.
func ReadConfigsFS(fsys fs.FS, root string) (*Configs, error) {
	src, err := openRepoFS(fsys, root)
	if err != nil {
		return nil, err
	}
	return src.hubConfigs()
}

func (s repo) hubConfigs() (*Configs, error) {
	files, err := s.Files()
	if err != nil {
		return nil, err
	}
	hc := &Configs{src: s, files: files}
	if _, ok := slices.BinarySearch(files, hubReadme); ok {
		rc, err := s.Open(hubReadme)
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", s.Show(hubReadme), err)
		}
		hc.Readme = s.Show(hubReadme)
		hc.Configs, hc.Declared, err = ParseConfigs(data, hc.Readme)
		if err != nil {
			return nil, err
		}
	}
	if !hc.Declared {
		hc.Configs = inferConfigs(files)
	}
	return hc, nil
}

// yamlLineRE reads the block-relative line out of a YAML syntax error.
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// frontMatterRE is huggingface_hub's pattern for a card's metadata block.
var frontMatterRE = regexp.MustCompile(`^\s*---[\r\n]+((?s:.*?))[\r\n]+---(?:\r\n|\n|$)`)

// ParseConfigs reads the configs block of a dataset card's YAML front
// matter (see ReadConfigs). declared is false when the card has no front
// matter or no configs key. name is used in error messages, which give the
// card's line.
func ParseConfigs(readme []byte, name string) (configs []Config, declared bool, err error) {
	readme = []byte(strings.TrimPrefix(string(readme), "\ufeff"))
	m := frontMatterRE.FindSubmatchIndex(readme)
	if m == nil {
		return nil, false, nil
	}
	// Node lines count from the block's first line.
	offset := strings.Count(string(readme[:m[2]]), "\n")
	errorf := func(n *yaml.Node, format string, args ...any) error {
		line := 0
		if n != nil {
			line = offset + n.Line
		}
		return fileio.Errorf(name, line, format, args...)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(readme[m[2]:m[3]], &doc); err != nil {
		if lm := yamlLineRE.FindStringSubmatch(err.Error()); lm != nil {
			n, _ := strconv.Atoi(lm[1])
			return nil, false, fileio.Errorf(name, offset+n, "front matter is not valid YAML: %s", lm[2])
		}
		return nil, false, fileio.Errorf(name, 0, "front matter is not valid YAML: %v", err)
	}
	if len(doc.Content) == 0 {
		return nil, false, nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, false, errorf(top, "front matter is a YAML %s, want a mapping of card fields", nodeKind(top))
	}
	list := yamlx.Get(top, "configs")
	if list == nil {
		return nil, false, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, false, errorf(list, "configs is a YAML %s, want a list of configs", nodeKind(list))
	}
	seen := make(map[string]bool)
	for i, item := range list.Content {
		where := fmt.Sprintf("configs[%d]", i)
		if item.Kind != yaml.MappingNode {
			return nil, false, errorf(item, "%s is a YAML %s, want a mapping with config_name and data_files", where, nodeKind(item))
		}
		var c Config
		nameNode := yamlx.Get(item, "config_name")
		if nameNode == nil || nameNode.Kind != yaml.ScalarNode || nameNode.Value == "" {
			return nil, false, errorf(item, "%s has no config_name; the Hub requires one for every config", where)
		}
		c.Name = nameNode.Value
		where += " (" + c.Name + ")"
		if seen[c.Name] {
			return nil, false, errorf(nameNode, "%s: config %q is declared twice", where, c.Name)
		}
		seen[c.Name] = true
		if d := yamlx.Get(item, "default"); d != nil {
			if err := d.Decode(&c.Default); err != nil {
				return nil, false, errorf(d, "%s: default is %q, want true or false", where, d.Value)
			}
		}
		files := yamlx.Get(item, "data_files")
		if files == nil {
			return nil, false, errorf(item, "%s has no data_files; configs that name their files another way (data_dir, a loading script) are not supported", where)
		}
		if c.Splits, err = parseDataFiles(files, where, errorf); err != nil {
			return nil, false, err
		}
		configs = append(configs, c)
	}
	return configs, true, nil
}

const dataFilesForms = "a path pattern, a list of them, or a list of {split, path} with path a pattern or a list of patterns"

// parseDataFiles reads the data_files forms the datasets library accepts in
// a card; a bare pattern or list of patterns is the split "train", as there.
func parseDataFiles(n *yaml.Node, where string, errorf func(*yaml.Node, string, ...any) error) ([]Split, error) {
	where += ": data_files"
	if n.Kind == yaml.ScalarNode {
		p, err := patternOf(n, where, errorf)
		if err != nil {
			return nil, err
		}
		return []Split{{Name: "train", Patterns: []string{p}}}, nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, errorf(n, "%s is %s, want %s", where, describeNode(n), dataFilesForms)
	}
	if n.Content[0].Kind == yaml.ScalarNode {
		pats, err := patternList(n, where, errorf)
		if err != nil {
			return nil, err
		}
		return []Split{{Name: "train", Patterns: pats}}, nil
	}
	var splits []Split
	for i, item := range n.Content {
		at := fmt.Sprintf("%s[%d]", where, i)
		if item.Kind != yaml.MappingNode {
			return nil, errorf(item, "%s is %s; the list mixes patterns and {split, path} entries, want %s", at, describeNode(item), dataFilesForms)
		}
		sn, pn := yamlx.Get(item, "split"), yamlx.Get(item, "path")
		if sn == nil || sn.Kind != yaml.ScalarNode || sn.Value == "" || pn == nil {
			return nil, errorf(item, "%s needs both split and path", at)
		}
		var pats []string
		var err error
		if pn.Kind == yaml.ScalarNode {
			var p string
			p, err = patternOf(pn, at+".path", errorf)
			pats = []string{p}
		} else {
			pats, err = patternList(pn, at+".path", errorf)
		}
		if err != nil {
			return nil, err
		}
		if j := slices.IndexFunc(splits, func(s Split) bool { return s.Name == sn.Value }); j >= 0 {
			// The datasets library merges them; so does this.
			splits[j].Patterns = append(splits[j].Patterns, pats...)
			continue
		}
		splits = append(splits, Split{Name: sn.Value, Patterns: pats})
	}
	return splits, nil
}

func patternList(n *yaml.Node, where string, errorf func(*yaml.Node, string, ...any) error) ([]string, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, errorf(n, "%s is %s, want a pattern or a non-empty list of patterns", where, describeNode(n))
	}
	var pats []string
	for i, item := range n.Content {
		p, err := patternOf(item, fmt.Sprintf("%s[%d]", where, i), errorf)
		if err != nil {
			return nil, err
		}
		pats = append(pats, p)
	}
	return pats, nil
}

// patternOf checks a pattern names something inside the repository.
func patternOf(n *yaml.Node, where string, errorf func(*yaml.Node, string, ...any) error) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Value == "" {
		return "", errorf(n, "%s is %s, want a path pattern", where, describeNode(n))
	}
	p := strings.TrimPrefix(n.Value, "./")
	if strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || slices.Contains(strings.Split(p, "/"), "..") {
		return "", errorf(n, "%s %q must be a slash-separated path inside the repository", where, n.Value)
	}
	for _, seg := range strings.Split(p, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return "", errorf(n, "%s %q is not a valid pattern: %v", where, n.Value, err)
		}
	}
	return p, nil
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

func describeNode(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == ""):
		return "empty"
	case n.Kind == yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	case n.Kind == yaml.SequenceNode && len(n.Content) == 0:
		return "an empty list"
	}
	return "a " + nodeKind(n)
}

// Config returns the named config, or an error listing those there are.
func (h *Configs) Config(name string) (*Config, error) {
	for i := range h.Configs {
		if h.Configs[i].Name == name {
			return &h.Configs[i], nil
		}
	}
	return nil, fmt.Errorf("%s has no config %q; %s", h.where(), name, h.listConfigs())
}

// Default returns the config the card marks default, else the one named
// "default", else nil.
func (h *Configs) Default() *Config {
	for i := range h.Configs {
		if h.Configs[i].Default {
			return &h.Configs[i]
		}
	}
	for i := range h.Configs {
		if h.Configs[i].Name == "default" {
			return &h.Configs[i]
		}
	}
	return nil
}

// Split returns the named split, or an error listing those there are.
func (c *Config) Split(name string) (*Split, error) {
	for i := range c.Splits {
		if c.Splits[i].Name == name {
			return &c.Splits[i], nil
		}
	}
	return nil, fmt.Errorf("config %q has no split %q; its splits: %s", c.Name, name, splitNames(c))
}

func splitNames(c *Config) string {
	names := make([]string, len(c.Splits))
	for i, s := range c.Splits {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// Patterns returns the patterns of a config's split: what to download to
// read it.
func (h *Configs) Patterns(config, split string) ([]string, error) {
	c, err := h.Config(config)
	if err != nil {
		return nil, err
	}
	s, err := c.Split(split)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.where(), err)
	}
	return s.Patterns, nil
}

// Files returns the files of a config's split, relative to the repository
// root: each pattern's matches in byte order, patterns in order, a file
// matched twice listed once. A pattern matching nothing is an error, since
// it most likely means an incomplete download.
func (h *Configs) Files(config, split string) ([]string, error) {
	pats, err := h.Patterns(config, split)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pats {
		n := 0
		for _, f := range h.files {
			if hub.Match(p, f) {
				n++
				if !slices.Contains(out, f) {
					out = append(out, f)
				}
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: config %q split %q: no file matches %q; was the repository downloaded with this config's files?", h.where(), config, split, p)
		}
	}
	for _, f := range out {
		if _, ok := table.Format(f); !ok {
			return nil, fmt.Errorf("%s: config %q split %q: %s is not a table file this reader takes (%s)", h.where(), config, split, h.src.Show(f), table.Formats)
		}
		if slices.Contains(out, f+".gz") {
			if _, _, err := h.src.Find(f); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (h *Configs) where() string {
	if h.Readme != "" {
		return h.Readme
	}
	return h.src.Show(".")
}

func (h *Configs) listConfigs() string {
	if len(h.Configs) == 0 {
		if h.Declared {
			return "its card declares none"
		}
		return "it has no README configs block and no files named after configs and splits"
	}
	names := make([]string, len(h.Configs))
	for i, c := range h.Configs {
		names[i] = c.Name
	}
	how := "declared"
	if !h.Declared {
		how = "inferred from file names"
	}
	return fmt.Sprintf("its configs (%s): %s", how, strings.Join(names, ", "))
}

// shardRE matches the Hub's shard suffix, as in train-00000-of-00003.
var shardRE = regexp.MustCompile(`^(.+)-\d{5}-of-\d{5}$`)

// inferConfigs names configs and splits after the file-name conventions
// ReadConfigs lists; every split's patterns are its literal files.
func inferConfigs(files []string) []Config {
	type key struct{ config, split string }
	found := make(map[key][]string)
	for _, f := range files {
		base, ok := table.Format(f)
		if !ok {
			continue
		}
		parts := strings.Split(f, "/")
		stem := strings.TrimSuffix(path.Base(base), path.Ext(base))
		shard := ""
		if m := shardRE.FindStringSubmatch(stem); m != nil {
			shard = m[1]
		}
		var k key
		switch {
		case len(parts) == 1 && shard != "":
			k = key{"default", shard}
		case len(parts) == 1:
			k = key{stem, stem}
		case len(parts) == 2:
			k = key{parts[0], stem}
			if shard != "" {
				k.split = shard
			}
			if k.config == "data" {
				k.config = "default"
			}
		case len(parts) == 3:
			k = key{parts[0], parts[1]}
		default:
			continue
		}
		found[k] = append(found[k], f)
	}
	keys := make([]key, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.config, b.config); c != 0 {
			return c
		}
		return strings.Compare(a.split, b.split)
	})
	var configs []Config
	for _, k := range keys {
		if len(configs) == 0 || configs[len(configs)-1].Name != k.config {
			configs = append(configs, Config{Name: k.config})
		}
		c := &configs[len(configs)-1]
		c.Splits = append(c.Splits, Split{Name: k.split, Patterns: found[k]})
	}
	return configs
}

// repo is a downloaded dataset repository.
type repo struct{ dataset.Dir }

func openRepo(dir string) (repo, error) {
	d, err := dataset.OpenDir(dir, "dataset repository", "")
	return repo{d}, err
}

func openRepoFS(fsys fs.FS, root string) (repo, error) {
	d, err := dataset.OpenDirFS(fsys, root, "dataset repository", "")
	return repo{d}, err
}
