package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/internal/fileio"
)

// otherModels is appended to every refusal of a tokenizer this package
// does not implement, so the user learns the way out.
const otherModels = "local inference supports WordPiece (BERT-family) tokenizers; serve other models through an OpenAI-compatible embedding server (--backend openai)"

// Load reads a Hugging Face tokenizer.json.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return parse(data, path)
}

// Parse reads the contents of a Hugging Face tokenizer.json.
func Parse(data []byte) (*Tokenizer, error) {
	return parse(data, "tokenizer.json")
}

type fileJSON struct {
	Truncation    *truncJSON      `json:"truncation"`
	Padding       *padJSON        `json:"padding"`
	AddedTokens   []addedJSON     `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         json.RawMessage `json:"model"`
}

type truncJSON struct {
	Direction string `json:"direction"`
	MaxLength int    `json:"max_length"`
	Strategy  string `json:"strategy"`
}

type padJSON struct {
	Strategy        json.RawMessage `json:"strategy"`
	Direction       string          `json:"direction"`
	PadToMultipleOf *int            `json:"pad_to_multiple_of"`
	PadID           int64           `json:"pad_id"`
	PadTypeID       int64           `json:"pad_type_id"`
}

type addedJSON struct {
	ID         *int64 `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
}

type modelJSON struct {
	Type                    string           `json:"type"`
	Vocab                   json.RawMessage  `json:"vocab"`
	UnkToken                *string          `json:"unk_token"`
	ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
	MaxInputCharsPerWord    *int             `json:"max_input_chars_per_word"`
	Merges                  json.RawMessage  `json:"merges"`
	vocab                   map[string]int64 `json:"-"`
}

type typed struct {
	Type string `json:"type"`
}

func parse(data []byte, file string) (*Tokenizer, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("tokenizer: %w", fileio.Errorf(file, 0, format, args...))
	}
	// encoding/json would read a vocabulary entry that is not valid Unicode
	// as U+FFFD, silently changing which token an id stands for.
	if err := errtext.CheckJSONFile(file, data); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, bad("%s", jsonProblem(data, err))
	}
	if len(bytes.TrimSpace(f.Model)) == 0 || string(bytes.TrimSpace(f.Model)) == "null" {
		return nil, bad("no \"model\" object; is this a Hugging Face tokenizer.json?")
	}
	t := &Tokenizer{}

	var m modelJSON
	if err := json.Unmarshal(f.Model, &m); err != nil {
		return nil, bad("model: %v", err)
	}
	if m.Type == "" && m.MaxInputCharsPerWord != nil && len(m.Merges) == 0 {
		m.Type = "WordPiece" // files from before the type tag
	}
	if m.Type != "WordPiece" {
		name := m.Type
		if name == "" {
			name = "untagged (BPE or Unigram)"
		}
		return nil, bad("model type %s is not supported: %s", name, otherModels)
	}
	if len(m.Vocab) == 0 || string(m.Vocab) == "null" {
		return nil, bad("model: WordPiece has no \"vocab\"")
	}
	if err := json.Unmarshal(m.Vocab, &m.vocab); err != nil {
		return nil, bad("model.vocab: want an object of token → id: %v", err)
	}
	if len(m.vocab) == 0 {
		return nil, bad("model.vocab is empty")
	}
	if err := t.setModel(&m, bad); err != nil {
		return nil, err
	}
	if err := t.setAdded(f.AddedTokens, bad); err != nil {
		return nil, err
	}
	var err error
	if t.norm, err = parseNormalizer(f.Normalizer, "normalizer"); err != nil {
		return nil, bad("%v", err)
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer, "pre_tokenizer"); err != nil {
		return nil, bad("%v", err)
	}
	t.setAddedMatchers(f.AddedTokens)
	if err := t.setPost(f.PostProcessor, bad); err != nil {
		return nil, err
	}
	if tr := f.Truncation; tr != nil {
		switch tr.Strategy {
		case "LongestFirst", "":
			t.trunc.strategy = longestFirst
		case "OnlyFirst":
			t.trunc.strategy = onlyFirst
		case "OnlySecond":
			t.trunc.strategy = onlySecond
		default:
			return nil, bad("truncation.strategy %q: want LongestFirst, OnlyFirst or OnlySecond", tr.Strategy)
		}
		switch tr.Direction {
		case "Right", "":
		case "Left":
			t.trunc.left = true
		default:
			return nil, bad("truncation.direction %q: want Right or Left", tr.Direction)
		}
		if tr.MaxLength <= 0 {
			return nil, bad("truncation.max_length %d: want a positive length", tr.MaxLength)
		}
		t.trunc.maxLen = tr.MaxLength
	}
	if err := t.setPadding(f.Padding, bad); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Tokenizer) setModel(m *modelJSON, bad func(string, ...any) error) error {
	unk := "[UNK]"
	if m.UnkToken != nil {
		unk = *m.UnkToken
	}
	prefix := "##"
	if m.ContinuingSubwordPrefix != nil {
		prefix = *m.ContinuingSubwordPrefix
	}
	maxChars := 100
	if m.MaxInputCharsPerWord != nil {
		maxChars = *m.MaxInputCharsPerWord
	}
	wp := wordPiece{
		vocab:    make(map[string]int32, len(m.vocab)),
		cont:     make(map[string]int32),
		maxChars: maxChars,
	}
	maxID := int64(-1)
	for tok, id := range m.vocab {
		if id < 0 || id > 1<<30 {
			return bad("model.vocab: token %q has id %d, out of range", tok, id)
		}
		maxID = max(maxID, id)
		wp.vocab[tok] = int32(id)
		wp.maxKey = max(wp.maxKey, len(tok))
		if prefix != "" && strings.HasPrefix(tok, prefix) {
			rest := tok[len(prefix):]
			wp.cont[rest] = int32(id)
			wp.maxCont = max(wp.maxCont, len(rest))
		}
	}
	if prefix == "" {
		wp.cont, wp.maxCont = wp.vocab, wp.maxKey
	}
	id, ok := wp.vocab[unk]
	if !ok {
		return bad("model: unk_token %q is not in the vocabulary (%d entries)", unk, len(m.vocab))
	}
	wp.unk = id
	t.wp = wp
	t.tokens = make([]string, maxID+1)
	for tok, id := range m.vocab {
		t.tokens[id] = tok
	}
	t.nIDs = len(m.vocab)
	seen := make(map[int32]bool, len(m.vocab))
	for _, id := range wp.vocab {
		if seen[id] {
			t.nIDs--
		}
		seen[id] = true
	}
	return nil
}

func (t *Tokenizer) setAdded(added []addedJSON, bad func(string, ...any) error) error {
	for i, a := range added {
		if a.Content == "" {
			return bad("added_tokens[%d]: empty content", i)
		}
		if a.ID == nil || *a.ID < 0 || *a.ID > 1<<30 {
			return bad("added_tokens[%d] %q: missing or out-of-range id", i, a.Content)
		}
		id := int(*a.ID)
		if id >= len(t.tokens) {
			t.tokens = append(t.tokens, make([]string, id+1-len(t.tokens))...)
		}
		if t.tokens[id] == "" {
			t.nIDs++
		}
		t.tokens[id] = a.Content
	}
	return nil
}

// setAddedMatchers builds the two added-token matchers; normalized tokens
// are matched by their normalized content, as HF does.
func (t *Tokenizer) setAddedMatchers(added []addedJSON) {
	var raw, normed []addedToken
	for _, a := range added {
		tok := addedToken{content: a.Content, id: int32(*a.ID), singleWord: a.SingleWord, lstrip: a.LStrip, rstrip: a.RStrip}
		if !a.Normalized {
			raw = append(raw, tok)
			continue
		}
		if t.norm != nil {
			out, _ := t.norm.normalize(nil, []byte(a.Content), nil)
			tok.content = string(out)
		}
		if tok.content != "" {
			normed = append(normed, tok)
		}
	}
	t.raw, t.normed = newMatcher(raw), newMatcher(normed)
}

func isNull(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || string(s) == "null"
}

func parseNormalizer(raw json.RawMessage, where string) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	switch ty.Type {
	case "BertNormalizer":
		var n struct {
			CleanText          *bool `json:"clean_text"`
			HandleChineseChars *bool `json:"handle_chinese_chars"`
			StripAccents       *bool `json:"strip_accents"`
			Lowercase          *bool `json:"lowercase"`
		}
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		or := func(b *bool, def bool) bool {
			if b == nil {
				return def
			}
			return *b
		}
		bn := &bertNormalizer{clean: or(n.CleanText, true), chinese: or(n.HandleChineseChars, true), lower: or(n.Lowercase, true)}
		// HF: strip_accents null (or absent) means "do what lowercase does".
		bn.strip = or(n.StripAccents, bn.lower)
		return bn, nil
	case "Sequence":
		var s struct {
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		seq := make(sequenceNormalizer, 0, len(s.Normalizers))
		for i, r := range s.Normalizers {
			n, err := parseNormalizer(r, fmt.Sprintf("%s.normalizers[%d]", where, i))
			if err != nil {
				return nil, err
			}
			if n != nil {
				seq = append(seq, n)
			}
		}
		return seq, nil
	case "NFD":
		return unicodeForm{norm.NFD}, nil
	case "NFC":
		return unicodeForm{norm.NFC}, nil
	case "NFKD":
		return unicodeForm{norm.NFKD}, nil
	case "NFKC":
		return unicodeForm{norm.NFKC}, nil
	case "Lowercase":
		return lowercase{}, nil
	case "StripAccents":
		return stripAccents{}, nil
	case "Strip":
		var s struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		return strip{s.Left, s.Right}, nil
	case "Replace":
		var r struct {
			Pattern struct {
				String *string `json:"String"`
			} `json:"pattern"`
			Content string `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		if r.Pattern.String == nil || *r.Pattern.String == "" {
			return nil, fmt.Errorf("%s: Replace with a regex (or empty) pattern is not supported: %s", where, otherModels)
		}
		return replace{[]byte(*r.Pattern.String), []byte(r.Content)}, nil
	case "Prepend":
		var p struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		return prepend{p.Prepend}, nil
	case "":
		return nil, fmt.Errorf("%s: no \"type\"", where)
	}
	return nil, fmt.Errorf("%s type %s is not supported: %s", where, ty.Type, otherModels)
}

func parsePreTokenizer(raw json.RawMessage, where string) (preTokenizer, error) {
	var p preTokenizer
	if isNull(raw) {
		return p, nil
	}
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return p, fmt.Errorf("%s: %v", where, err)
	}
	switch ty.Type {
	case "BertPreTokenizer":
		return preTokenizer{space: true, punct: true}, nil
	case "WhitespaceSplit":
		return preTokenizer{space: true}, nil
	case "Punctuation":
		var pu struct {
			Behavior string `json:"behavior"`
		}
		if err := json.Unmarshal(raw, &pu); err != nil {
			return p, fmt.Errorf("%s: %v", where, err)
		}
		if pu.Behavior != "" && pu.Behavior != "Isolated" {
			return p, fmt.Errorf("%s: Punctuation with behavior %s is not supported (only Isolated): %s", where, pu.Behavior, otherModels)
		}
		return preTokenizer{punct: true}, nil
	case "Sequence":
		var s struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return p, fmt.Errorf("%s: %v", where, err)
		}
		for i, r := range s.PreTokenizers {
			q, err := parsePreTokenizer(r, fmt.Sprintf("%s.pretokenizers[%d]", where, i))
			if err != nil {
				return p, err
			}
			p.space = p.space || q.space
			p.punct = p.punct || q.punct
		}
		return p, nil
	case "":
		return p, fmt.Errorf("%s: no \"type\"", where)
	}
	return p, fmt.Errorf("%s type %s is not supported: %s", where, ty.Type, otherModels)
}

func (t *Tokenizer) setPost(raw json.RawMessage, bad func(string, ...any) error) error {
	if isNull(raw) {
		t.single = template{items: []templateItem{{seq: 0}}}
		t.pair = template{items: []templateItem{{seq: 0}, {seq: 1, typeID: 1}}}
		return nil
	}
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return bad("post_processor: %v", err)
	}
	switch ty.Type {
	case "BertProcessing":
		var b struct {
			Sep []json.RawMessage `json:"sep"`
			Cls []json.RawMessage `json:"cls"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return bad("post_processor: %v", err)
		}
		sep, err := t.tokenRef(b.Sep, "post_processor.sep")
		if err != nil {
			return bad("%v", err)
		}
		cls, err := t.tokenRef(b.Cls, "post_processor.cls")
		if err != nil {
			return bad("%v", err)
		}
		t.single = template{items: []templateItem{{ids: []int32{cls}, seq: -1}, {seq: 0}, {ids: []int32{sep}, seq: -1}}, added: 2}
		t.pair = template{items: []templateItem{{ids: []int32{cls}, seq: -1}, {seq: 0}, {ids: []int32{sep}, seq: -1},
			{seq: 1, typeID: 1}, {ids: []int32{sep}, seq: -1, typeID: 1}}, added: 3}
		return nil
	case "TemplateProcessing":
		var tp struct {
			Single        []json.RawMessage `json:"single"`
			Pair          []json.RawMessage `json:"pair"`
			SpecialTokens map[string]struct {
				IDs []int64 `json:"ids"`
			} `json:"special_tokens"`
		}
		if err := json.Unmarshal(raw, &tp); err != nil {
			return bad("post_processor: %v", err)
		}
		ids := make(map[string][]int32, len(tp.SpecialTokens))
		for name, st := range tp.SpecialTokens {
			for _, id := range st.IDs {
				if id < 0 || int(id) >= len(t.tokens) {
					return bad("post_processor.special_tokens[%q]: id %d is outside the vocabulary", name, id)
				}
				ids[name] = append(ids[name], int32(id))
			}
		}
		var err error
		if t.single, err = parseTemplate(tp.Single, ids, "post_processor.single"); err != nil {
			return bad("%v", err)
		}
		if t.pair, err = parseTemplate(tp.Pair, ids, "post_processor.pair"); err != nil {
			return bad("%v", err)
		}
		return nil
	case "":
		return bad("post_processor: no \"type\"")
	}
	return bad("post_processor type %s is not supported (TemplateProcessing and BertProcessing are): %s", ty.Type, otherModels)
}

// tokenRef reads BertProcessing's ["[SEP]", 102] and checks it against the
// vocabulary.
func (t *Tokenizer) tokenRef(raw []json.RawMessage, where string) (int32, error) {
	var tok string
	var id int64
	if len(raw) != 2 || json.Unmarshal(raw[0], &tok) != nil || json.Unmarshal(raw[1], &id) != nil {
		return 0, fmt.Errorf("%s: want [\"token\", id]", where)
	}
	if id < 0 || int(id) >= len(t.tokens) {
		return 0, fmt.Errorf("%s: id %d of %q is outside the vocabulary", where, id, tok)
	}
	return int32(id), nil
}

func parseTemplate(items []json.RawMessage, special map[string][]int32, where string) (template, error) {
	var tpl template
	if len(items) == 0 {
		return tpl, fmt.Errorf("%s: empty template", where)
	}
	for i, raw := range items {
		var it struct {
			Sequence *struct {
				ID     string `json:"id"`
				TypeID int64  `json:"type_id"`
			} `json:"Sequence"`
			SpecialToken *struct {
				ID     string `json:"id"`
				TypeID int64  `json:"type_id"`
			} `json:"SpecialToken"`
		}
		if err := json.Unmarshal(raw, &it); err != nil {
			return tpl, fmt.Errorf("%s[%d]: %v", where, i, err)
		}
		switch {
		case it.Sequence != nil:
			seq := 0
			switch it.Sequence.ID {
			case "A":
			case "B":
				seq = 1
			default:
				return tpl, fmt.Errorf("%s[%d]: sequence id %q: want A or B", where, i, it.Sequence.ID)
			}
			tpl.items = append(tpl.items, templateItem{seq: seq, typeID: it.Sequence.TypeID})
		case it.SpecialToken != nil:
			ids, ok := special[it.SpecialToken.ID]
			if !ok {
				known := make([]string, 0, len(special))
				for k := range special {
					known = append(known, k)
				}
				sort.Strings(known)
				return tpl, fmt.Errorf("%s[%d]: special token %q is not in special_tokens (%s)", where, i, it.SpecialToken.ID, strings.Join(known, ", "))
			}
			tpl.items = append(tpl.items, templateItem{ids: ids, seq: -1, typeID: it.SpecialToken.TypeID})
			tpl.added += len(ids)
		default:
			return tpl, fmt.Errorf("%s[%d]: want a Sequence or SpecialToken item", where, i)
		}
	}
	return tpl, nil
}

func (t *Tokenizer) setPadding(p *padJSON, bad func(string, ...any) error) error {
	if id, ok := t.wp.vocab["[PAD]"]; ok {
		t.padding.id = int64(id)
	}
	if p == nil {
		return nil
	}
	t.padding.id, t.padding.typeID = p.PadID, p.PadTypeID
	switch p.Direction {
	case "Right", "":
	case "Left":
		t.padding.left = true
	default:
		return bad("padding.direction %q: want Right or Left", p.Direction)
	}
	if p.PadToMultipleOf != nil {
		if *p.PadToMultipleOf < 0 {
			return bad("padding.pad_to_multiple_of %d: want a positive number", *p.PadToMultipleOf)
		}
		t.padding.multipleOf = *p.PadToMultipleOf
	}
	if !isNull(p.Strategy) {
		var s string
		var fixed struct {
			Fixed *int `json:"Fixed"`
		}
		switch {
		case json.Unmarshal(p.Strategy, &s) == nil && s == "BatchLongest":
		case json.Unmarshal(p.Strategy, &fixed) == nil && fixed.Fixed != nil && *fixed.Fixed >= 0:
			t.padding.fixed = *fixed.Fixed
		default:
			return bad("padding.strategy %s: want \"BatchLongest\" or {\"Fixed\": n}", p.Strategy)
		}
	}
	return nil
}

// jsonProblem says where in the file a JSON error is, as line:column.
func jsonProblem(data []byte, err error) string {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
		field := typ.Field
		if field == "" {
			field = "the top level"
		}
		err = fmt.Errorf("%s: want %s, found a JSON %s", field, typ.Type, typ.Value)
	}
	if off < 0 || off > int64(len(data)) {
		return "invalid JSON: " + errtext.JSONMsg(err)
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, errtext.JSONMsg(err))
}
