package trainset

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if strings.HasSuffix(name, ".gz") {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(content))
		zw.Close()
		content = buf.String()
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll reads every record from the start, or from a position.
func readAll(t *testing.T, f *File, from Position) ([]Record, []Position) {
	t.Helper()
	var recs []Record
	var pos []Position
	err := f.Rows(context.Background(), from, func(r Row) error {
		rec, err := f.Decode(r)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
		pos = append(pos, r.Next)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, pos
}

// brief renders records as "line:role=text|role=text".
func brief(recs []Record) []string {
	var out []string
	for _, r := range recs {
		var parts []string
		for _, x := range r.Texts {
			parts = append(parts, string(x.Role)+"="+x.Text)
		}
		s := fmt.Sprintf("%d:%s", r.Line, strings.Join(parts, "|"))
		if r.ID != "" {
			s += "#" + r.ID
		}
		out = append(out, s)
	}
	return out
}

func TestLayouts(t *testing.T) {
	for _, c := range []struct {
		name, file, content string
		opts                Options
		layout              string
		want                []string
	}{
		{"bge", "bge.jsonl", `{"query":"q1","pos":["p1","p2"],"neg":["n1"]}` + "\n\n" + `{"query":"q2","pos":["p3"],"neg":[]}` + "\n",
			Options{}, "BGE {query, pos, neg}", []string{"1:query=q1|positive=p1|positive=p2|negative=n1", "3:query=q2|positive=p3"}},
		{"st triplets", "st.jsonl", `{"anchor":"a","positive":"p","negative_1":"n1","negative_2":"n2"}` + "\n",
			Options{}, "sentence-transformers {anchor, positive, negative}", []string{"1:query=a|positive=p|negative=n1|negative=n2"}},
		{"st pairs", "st.jsonl.gz", `{"query":"q","positive":"p"}` + "\r\n" + `{"query":"r","positive":"s","negative":null}` + "\r\n",
			Options{}, "sentence-transformers {query, positive, negative}", []string{"1:query=q|positive=p", "2:query=r|positive=s"}},
		{"sentence pairs", "nli.jsonl", `{"sentence1":"x","sentence2":"y","label":1}` + "\n",
			Options{}, "sentence-transformers {sentence1, sentence2}", []string{"1:query=x|positive=y"}},
		{"beir corpus", "corpus.jsonl", "\ufeff" + `{"_id":"d1","title":"T","text":"body"}` + "\n" + `{"_id":"d2","title":"","text":"b2"}` + "\n",
			Options{}, "BEIR corpus {_id, title, text}", []string{"1:text=T body#d1", "2:text=b2#d2"}},
		{"beir queries", "queries.jsonl", `{"_id":"q1","text":"what"}` + "\n",
			Options{}, "BEIR queries {_id, text}", []string{"1:query=what#q1"}},
		{"r2med", "query.jsonl", `{"id":7,"text":"case","body_system":"Cardio"}` + "\n",
			Options{Meta: []string{"body_system"}}, "{id, text}", []string{"1:text=case#7"}},
		{"fields given", "x.jsonl", `{"q":"a","docs":["b","c"],"bad":["d"]}` + "\n",
			Options{Fields: Fields{Query: []string{"q"}, Positive: []string{"docs"}, Negative: []string{"bad"}}}, "fields given", []string{"1:query=a|positive=b|positive=c|negative=d"}},
		{"json array", "arr.json", "[\n {\"query\":\"q\",\n  \"pos\":[\"p\"]},\n {\"query\":\"r\",\"pos\":[]}\n]\n",
			Options{}, "BGE {query, pos, neg}", []string{"2:query=q|positive=p", "4:query=r"}},
		{"tsv blank lines, CRLF", "b.tsv", "\r\nquery\tpositive\r\n\r\nq\tp\r\n", Options{}, "sentence-transformers {query, positive, negative}", []string{"4:query=q|positive=p"}},
		{"plain text", "lines.txt", "first line\n\nthird line", Options{}, "one text per line", []string{"1:text=first line", "2:text=", "3:text=third line"}},
		{"tsv triples", "triples.tsv", "what is x\tx is y\tz is w\n", Options{}, "query, positive, negative", []string{"1:query=what is x|positive=x is y|negative=z is w"}},
		{"tsv id text", "queries.tsv", "1048578\tcost of endless pools\n2\tb c\n", Options{}, "id, text", []string{"1:text=cost of endless pools#1048578", "2:text=b c#2"}},
		{"tsv pairs", "pairs.tsv", "what is x\tx is y\n", Options{}, "query, positive", []string{"1:query=what is x|positive=x is y"}},
		{"tsv header", "h.tsv", "query\tpositive\textra\nq\tp\te\n", Options{}, "sentence-transformers {query, positive, negative}", []string{"2:query=q|positive=p"}},
		{"tsv columns", "c.tsv", "a\tb\tc\td\n", Options{Fields: Fields{Query: []string{"2"}, Positive: []string{"4"}}}, "columns given", []string{"1:query=b|positive=d"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Open(write(t, c.file, c.content), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if f.Layout.Name != c.layout {
				t.Errorf("layout %q, want %q", f.Layout.Name, c.layout)
			}
			recs, _ := readAll(t, f, Position{})
			if got := brief(recs); !reflect.DeepEqual(got, c.want) {
				t.Errorf("records\n%q\nwant\n%q", got, c.want)
			}
			if c.name == "r2med" && recs[0].Meta["body_system"] != "Cardio" {
				t.Errorf("meta %v", recs[0].Meta)
			}
		})
	}
}

func TestParquet(t *testing.T) {
	type row struct {
		Query string   `parquet:"query"`
		Pos   []string `parquet:"pos,list"`
		Neg   []string `parquet:"neg,list"`
	}
	p := filepath.Join(t.TempDir(), "train.parquet")
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf)
	if _, err := w.Write([]row{{"q1", []string{"p1"}, []string{"n1", "n2"}}, {"q2", []string{"p2", "p3"}, nil}, {"q3", nil, nil}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, buf.Bytes(), 0o644)
	f, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Layout.Name != "BGE {query, pos, neg}" || f.Seekable() {
		t.Errorf("layout %q seekable %v", f.Layout.Name, f.Seekable())
	}
	recs, pos := readAll(t, f, Position{})
	want := []string{"1:query=q1|positive=p1|negative=n1|negative=n2", "2:query=q2|positive=p2|positive=p3", "3:query=q3"}
	if got := brief(recs); !reflect.DeepEqual(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
	rest, _ := readAll(t, f, pos[0])
	if got := brief(rest); !reflect.DeepEqual(got, want[1:]) {
		t.Errorf("resumed after row 1: %q", got)
	}
}

// Resuming at a recorded position gives exactly the rows after it, by
// seeking in plain files and by skipping in gzipped ones.
func TestResume(t *testing.T) {
	var sb strings.Builder
	for i := range 50 {
		fmt.Fprintf(&sb, `{"query":"query %d","positive":"doc %d"}`+"\n", i, i)
		if i%7 == 0 {
			sb.WriteString("\n")
		}
	}
	for _, name := range []string{"t.jsonl", "t.jsonl.gz"} {
		f, err := Open(write(t, name, sb.String()), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if f.Seekable() != !strings.HasSuffix(name, ".gz") {
			t.Errorf("%s: seekable %v", name, f.Seekable())
		}
		all, pos := readAll(t, f, Position{})
		if len(all) != 50 {
			t.Fatalf("%s: %d records", name, len(all))
		}
		for _, k := range []int{0, 1, 17, 48, 49} {
			rest, _ := readAll(t, f, pos[k])
			if !reflect.DeepEqual(brief(rest), brief(all[k+1:])) {
				t.Errorf("%s: resumed after record %d: %q…, want %q…", name, k, brief(rest)[:min(2, len(rest))], brief(all[k+1:])[:min(2, len(all)-k-1)])
			}
		}
	}
	// A position that is not at a line start means the file changed.
	f, _ := Open(write(t, "u.jsonl", sb.String()), Options{})
	err := f.Rows(context.Background(), Position{Line: 3, Offset: 5}, func(Row) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "not at the start of a line") {
		t.Errorf("bad offset: %v", err)
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct{ file, content, want string }{
		{"a.jsonl", `{"query":"q","pos":["p"]}` + "\n" + `{"pos":["p"]}` + "\n", `a.jsonl:2: no "query" field (or null); every row of this BGE {query, pos, neg} file needs one`},
		{"b.jsonl", `{"query":"q","pos":["p"]}` + "\n" + `{"query":3,"pos":["p"]}` + "\n", `b.jsonl:2: field "query": is a number; want a string or a list of strings`},
		{"c.jsonl", `{"query":"q","pos":["p"]}` + "\n" + `{"query":"q","pos":[null]}` + "\n", `c.jsonl:2: field "pos": element 0 is null; want a list of strings`},
		{"d.jsonl", `{"query":"q","pos":["p"]}` + "\n" + `{"query":"q",` + "\n", `d.jsonl:2: malformed JSON`},
		{"e.jsonl", `{"prompt":"q","completion":"p"}` + "\n", `e.jsonl: the first row has fields completion, prompt, which match no known training layout`},
		{"f.tsv", "a\tb\tc\td\n", `f.tsv:1: has 4 tab-separated columns and no header`},
		{"g.tsv", "a b\tc d\te\nonly\ttwo\n", `g.tsv:2: 2 tab-separated cells; the file's first line has 3`},
		{"h.jsonl", "\n\n", `h.jsonl: the file holds no JSON lines`},
	} {
		path := write(t, c.file, c.content)
		f, err := Open(path, Options{})
		if err == nil {
			err = f.Rows(context.Background(), Position{}, func(r Row) error { _, err := f.Decode(r); return err })
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.file, err, c.want)
		} else if !strings.HasPrefix(err.Error(), path) {
			t.Errorf("%s: error %q does not start with the file's path", c.file, err)
		}
	}
	if _, err := Open(write(t, "x.txt", "a\n"), Options{Fields: Fields{Query: []string{"q"}}}); err == nil {
		t.Error("fields for a plain-text file accepted")
	}
	if _, err := Open(write(t, "x.jsonl", `{"a":"b"}`+"\n"), Options{Fields: Fields{Query: []string{"q"}}}); err == nil || !strings.Contains(err.Error(), `no field "q"`) {
		t.Errorf("missing named field: %v", err)
	}
}

// TestTevatron: Tevatron's training layout (texttron/tevatron
// src/tevatron/retriever/dataset.py at 9ea49370): group['query'],
// group['positive_passages'] and group['negative_passages'], passages
// {docid, title, text} read as format_passage does,
// f'{title.strip()} {text.strip()}'.strip(); queries are named by
// query_id. It was refused as matching no known layout, and naming its
// fields failed on the passages being objects.
func TestTevatron(t *testing.T) {
	content := `{"query_id":"3","query":"what is x","positive_passages":[{"docid":"d1","title":" T ","text":" x is y "}],"negative_passages":[{"docid":"d2","title":"","text":"z is w"},{"docid":"d3","text":"no title"}]}` + "\n" +
		`{"query_id":"4","query":"q2","positive_passages":[{"docid":"d4","title":"only title","text":""}]}` + "\n"
	f, err := Open(write(t, "train.jsonl", content), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Tevatron {query_id, query, positive_passages, negative_passages}"; f.Layout.Name != want {
		t.Errorf("layout %q, want %q", f.Layout.Name, want)
	}
	recs, _ := readAll(t, f, Position{})
	want := []string{"1:query=what is x|positive=T x is y|negative=z is w|negative=no title#3", "2:query=q2|positive=only title#4"}
	if got := brief(recs); !reflect.DeepEqual(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
	bad := `{"query_id":"3","query":"x","positive_passages":[{"docid":"d1","title":"t"}]}` + "\n"
	f, err = Open(write(t, "bad.jsonl", bad), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Decode(firstRow(t, f)); err == nil || !strings.Contains(err.Error(), `element 0 has no "text"`) {
		t.Errorf("a passage without text: %v", err)
	}
}

func firstRow(t *testing.T, f *File) Row {
	t.Helper()
	var row Row
	f.Rows(context.Background(), Position{}, func(r Row) error {
		if row.Line == 0 {
			row = r
		}
		return nil
	})
	return row
}

// TestNegativeColumnsPerRow: sentence-transformers' negative_1,
// negative_2, … are read wherever a row has them, where only those the
// first row had were read and a later row's negative_2 was dropped
// without a word (its text neither audited nor pooled for mining).
func TestNegativeColumnsPerRow(t *testing.T) {
	content := `{"anchor":"a1","positive":"p1","negative_1":"n1"}` + "\n" +
		`{"anchor":"a2","positive":"p2","negative_1":"n2","negative_10":"n4","negative_2":"n3"}` + "\n" +
		`{"anchor":"a3","positive":"p3","negative":"n5"}` + "\n"
	f, err := Open(write(t, "st.jsonl", content), Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := readAll(t, f, Position{})
	want := []string{"1:query=a1|positive=p1|negative=n1", "2:query=a2|positive=p2|negative=n2|negative=n3|negative=n4", "3:query=a3|positive=p3|negative=n5"}
	if got := brief(recs); !reflect.DeepEqual(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
	// The same rows as one JSON array.
	rows := strings.Split(strings.TrimSpace(content), "\n")
	f, err = Open(write(t, "st.json", "[\n"+strings.Join(rows, ",\n")+"\n]\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ = readAll(t, f, Position{})
	for i := range want {
		want[i] = fmt.Sprint(i+2) + want[i][1:]
	}
	if got := brief(recs); !reflect.DeepEqual(got, want) {
		t.Errorf("JSON array: records %q, want %q", got, want)
	}
}

// TestResumeJSONArrayOnOneLine: a JSON array whose objects share a line
// resumes after the row it stopped at; it resumed after the line, skipping
// the line's later rows.
func TestResumeJSONArrayOnOneLine(t *testing.T) {
	var objs []string
	for i := range 30 {
		objs = append(objs, fmt.Sprintf(`{"query":"query %d","positive":"doc %d"}`, i, i))
		if i%10 == 9 {
			objs[len(objs)-1] += "\n"
		}
	}
	f, err := Open(write(t, "t.json", "["+strings.Join(objs, ",")+"]"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	all, pos := readAll(t, f, Position{})
	if len(all) != 30 {
		t.Fatalf("%d records, want 30", len(all))
	}
	for i, r := range all {
		if r.Element != i+1 || r.Line != 1+i/10 {
			t.Errorf("record %d: line %d element %d, want line %d element %d", i, r.Line, r.Element, 1+i/10, i+1)
		}
	}
	for _, k := range []int{0, 4, 9, 10, 28} {
		rest, _ := readAll(t, f, pos[k])
		if !reflect.DeepEqual(brief(rest), brief(all[k+1:])) {
			t.Errorf("resumed after record %d: %d records, want %d", k, len(rest), len(all)-k-1)
		}
	}
}

// TestJSONArrayErrorNamesElement: an error in a JSON array names the
// element as well as the line, which many elements may share.
func TestJSONArrayErrorNamesElement(t *testing.T) {
	f, err := Open(write(t, "t.json", `[{"query":"a","pos":["b"]},{"query":"c","pos":[1]}]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = f.Rows(context.Background(), Position{}, func(r Row) error { _, err := f.Decode(r); return err })
	if err == nil || !strings.Contains(err.Error(), "t.json:1: element 2 of the array: field \"pos\"") {
		t.Errorf("%v; want the line and element 2 named", err)
	}
}
