package tokenizer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// tiny builds a BERT-shaped tokenizer.json around vocab (ids in order),
// with edit applied to the decoded document before it is encoded again.
func tiny(t *testing.T, vocab []string, edit func(doc map[string]any)) *Tokenizer {
	t.Helper()
	tk, err := Parse(tinyJSON(t, vocab, edit))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func tinyJSON(t *testing.T, vocab []string, edit func(doc map[string]any)) []byte {
	t.Helper()
	v := map[string]int{}
	for i, s := range vocab {
		v[s] = i
	}
	doc := map[string]any{
		"version":    "1.0",
		"truncation": nil,
		"padding":    nil,
		"added_tokens": []any{
			map[string]any{"id": v["[CLS]"], "content": "[CLS]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
			map[string]any{"id": v["[SEP]"], "content": "[SEP]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
		},
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{
			"type": "TemplateProcessing",
			"single": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 0}},
			},
			"pair": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 1}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 1}},
			},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{v["[CLS]"]}, "tokens": []string{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{v["[SEP]"]}, "tokens": []string{"[SEP]"}},
			},
		},
		"decoder": nil,
		"model":   map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": v},
	}
	if edit != nil {
		edit(doc)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var tinyVocab = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cafe", "naive", "un", "##aff", "##able", "a", "##b", ".", "5", "mg", "/", "kg", "##mg"}

func TestEncodeBasics(t *testing.T) {
	tk := tiny(t, tinyVocab, nil)
	e := tk.Encode("The Café  unaffable naïve 5mg/kg.", 0)
	want := []string{"[CLS]", "the", "cafe", "un", "##aff", "##able", "naive", "5", "##mg", "/", "kg", ".", "[SEP]"}
	if !reflect.DeepEqual(e.Tokens, want) {
		t.Fatalf("tokens %q, want %q", e.Tokens, want)
	}
	if e.IDs[0] != 2 || e.IDs[len(e.IDs)-1] != 3 || len(e.TypeIDs) != len(e.IDs) || len(e.AttentionMask) != len(e.IDs) {
		t.Fatalf("ids %v types %v mask %v", e.IDs, e.TypeIDs, e.AttentionMask)
	}
	if n := tk.Count("The Café  unaffable naïve 5mg/kg."); n != len(want) {
		t.Errorf("Count = %d, want %d", n, len(want))
	}
	// A word with an unmatched remainder is [UNK] as a whole.
	if got := tk.Encode("unaffablex", 0).Tokens; !reflect.DeepEqual(got, []string{"[CLS]", "[UNK]", "[SEP]"}) {
		t.Errorf("unmatched remainder: %q", got)
	}
	// [SEP] in the text is the special token; [sep] is not.
	if got := tk.Encode("a [SEP] a", 0).IDs; !reflect.DeepEqual(got, []int64{2, 10, 3, 10, 3}) {
		t.Errorf("[SEP] in text: %v", got)
	}
}

func TestTruncationAndPairs(t *testing.T) {
	tk := tiny(t, tinyVocab, nil)
	a := strings.Repeat("a ", 7)  // 7 tokens
	b := strings.Repeat("kg ", 3) // 3 tokens
	for _, c := range []struct {
		max, na, nb int
	}{{0, 7, 3}, {13, 7, 3}, {12, 6, 3}, {9, 3, 3}, {8, 3, 2}, {7, 2, 2}, {4, 1, 0}, {3, 0, 0}, {1, 0, 0}} {
		e := tk.EncodePair(a, b, c.max)
		na, nb := 0, 0
		for i, id := range e.IDs {
			switch id {
			case 10:
				na++
				if e.TypeIDs[i] != 0 {
					t.Errorf("max %d: a token with type %d", c.max, e.TypeIDs[i])
				}
			case 16:
				nb++
				if e.TypeIDs[i] != 1 {
					t.Errorf("max %d: b token with type %d", c.max, e.TypeIDs[i])
				}
			}
		}
		if na != c.na || nb != c.nb {
			t.Errorf("max %d: kept %d+%d, want %d+%d", c.max, na, nb, c.na, c.nb)
		}
		if want := 10 - c.na - c.nb; e.Cut != want {
			t.Errorf("max %d: Cut %d, want the %d tokens removed", c.max, e.Cut, want)
		}
	}
	if e := tk.Encode(a, 5); len(e.IDs) != 5 || e.Cut != 4 {
		t.Errorf("Encode(max 5) gave %d ids, cut %d; want 5 and 4", len(e.IDs), e.Cut)
	}
	if e := tk.Encode(a, 9); e.Cut != 0 {
		t.Errorf("Encode(max 9) of 7 tokens cut %d", e.Cut)
	}
}

func TestPad(t *testing.T) {
	tk := tiny(t, tinyVocab, nil)
	encs := []Encoding{tk.Encode("a", 0), tk.Encode("a a a", 0)}
	b := tk.Pad(encs)
	if b.Rows != 2 || b.Len != 5 {
		t.Fatalf("rows %d len %d", b.Rows, b.Len)
	}
	if want := []int64{2, 10, 3, 0, 0, 2, 10, 10, 10, 3}; !reflect.DeepEqual(b.IDs, want) {
		t.Errorf("ids %v, want %v", b.IDs, want)
	}
	if want := []int64{1, 1, 1, 0, 0, 1, 1, 1, 1, 1}; !reflect.DeepEqual(b.AttentionMask, want) {
		t.Errorf("mask %v, want %v", b.AttentionMask, want)
	}
	left := tiny(t, tinyVocab, func(doc map[string]any) {
		doc["padding"] = map[string]any{"strategy": "BatchLongest", "direction": "Left", "pad_to_multiple_of": 4, "pad_id": 1, "pad_type_id": 0, "pad_token": "[UNK]"}
	})
	b = left.Pad(encs)
	if want := []int64{1, 1, 1, 1, 1, 2, 10, 3, 1, 1, 1, 2, 10, 10, 10, 3}; b.Len != 8 || !reflect.DeepEqual(b.IDs, want) {
		t.Errorf("left, multiple of 4: len %d ids %v, want %v", b.Len, b.IDs, want)
	}
	if left.PadID() != 1 || tk.PadID() != 0 {
		t.Errorf("PadID: %d, %d", left.PadID(), tk.PadID())
	}
	if tk.VocabSize() != len(tinyVocab) {
		t.Errorf("VocabSize %d, want %d", tk.VocabSize(), len(tinyVocab))
	}
}

func TestConcurrentUse(t *testing.T) {
	tk := tiny(t, tinyVocab, nil)
	want := tk.Encode("The Café unaffable naïve 5mg/kg.", 0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if got := tk.Encode("The Café unaffable naïve 5mg/kg.", 0); !reflect.DeepEqual(got, want) {
					t.Error("concurrent Encode differs")
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"syntax", []byte("{\n  \"model\": {,\n}"), "line 2, column"},
		{"no model", []byte(`{"version":"1.0"}`), `no "model"`},
		{"latin-1 token", bytes.Replace(tinyJSON(t, tinyVocab, func(map[string]any) {}), []byte(`"[UNK]"`), []byte("\"caf\xe9\""), 1), "invalid UTF-8 (byte 0xe9) at byte offset"},
		{"lone surrogate", []byte("{\n  \"model\": {\"vocab\": {\"\\ud800\": 0}}}"), `:2: unpaired UTF-16 surrogate \ud800 (half of a character) at byte offset 23 of the line`},
		{"bpe", tinyJSON(t, tinyVocab, func(d map[string]any) {
			d["model"] = map[string]any{"type": "BPE", "vocab": map[string]int{}, "merges": []string{}}
		}), "model type BPE is not supported: local inference supports WordPiece"},
		{"unigram", tinyJSON(t, tinyVocab, func(d map[string]any) { d["model"] = map[string]any{"type": "Unigram", "vocab": []any{}} }), "model type Unigram"},
		{"metaspace", tinyJSON(t, tinyVocab, func(d map[string]any) { d["pre_tokenizer"] = map[string]any{"type": "Metaspace"} }), "pre_tokenizer type Metaspace is not supported"},
		{"bytelevel", tinyJSON(t, tinyVocab, func(d map[string]any) {
			d["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFD"}, map[string]any{"type": "Precompiled"}}}
		}), "normalizer.normalizers[1] type Precompiled is not supported"},
		{"no vocab", tinyJSON(t, tinyVocab, func(d map[string]any) { delete(d["model"].(map[string]any), "vocab") }), `WordPiece has no "vocab"`},
		{"no unk", tinyJSON(t, tinyVocab, func(d map[string]any) { d["model"].(map[string]any)["unk_token"] = "<unk>" }), `unk_token "<unk>" is not in the vocabulary`},
		{"vocab type", tinyJSON(t, tinyVocab, func(d map[string]any) { d["model"].(map[string]any)["vocab"] = []string{"a"} }), "model.vocab: want an object"},
		{"template", tinyJSON(t, tinyVocab, func(d map[string]any) {
			d["post_processor"].(map[string]any)["special_tokens"] = map[string]any{}
		}), `special token "[CLS]" is not in special_tokens`},
		{"truncation", tinyJSON(t, tinyVocab, func(d map[string]any) {
			d["truncation"] = map[string]any{"max_length": 8, "strategy": "Shortest", "direction": "Right", "stride": 0}
		}), `truncation.strategy "Shortest"`},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", c.name, err, path, c.want)
		}
	}
}
