package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/r2med/r2med/internal/fileio"
)

// FileFormat names the audit file format (File.Format).
const FileFormat = "r2med-audit/1"

// File is an audit file: what r2med audit leakage|dataset --format json writes and what
// r2med report shows (audit.json or NAME.audit.json in the results
// directory).
type File struct {
	Format string `json:"format"`
	// Version is the version of the r2med that wrote the file
	// (results.Version: a release, or the source revision and whether it
	// had uncommitted changes).
	Version  string           `json:"version,omitempty"`
	Leakage  *LeakageReport   `json:"leakage,omitempty"`
	Datasets []*DatasetReport `json:"datasets,omitempty"`
}

// Write writes the file as indented JSON.
func (f *File) Write(w io.Writer) error {
	f.Format = FileFormat
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// ReadFile reads an audit file.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&f); err != nil {
		return nil, fileio.Errorf(path, 0, "not an audit file: %v; write one with r2med audit leakage|dataset --format json", err)
	}
	if f.Format != FileFormat {
		return nil, fileio.Errorf(path, 0, "format %q, want %q; write it again with this version's r2med audit leakage|dataset --format json", f.Format, FileFormat)
	}
	return &f, nil
}

// Find lists the audit files of a results directory: audit.json and
// *.audit.json directly in it, sorted.
func Find(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && (n == "audit.json" || strings.HasSuffix(n, ".audit.json")) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	slices.Sort(out)
	return out, nil
}

// Sections reads the audit files of a results directory and renders each
// as a report section, for r2med report.
func Sections(dir string) ([]template.HTML, error) {
	paths, err := Find(dir)
	if err != nil {
		return nil, err
	}
	var out []template.HTML
	for _, p := range paths {
		f, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		s, err := f.Section(filepath.Base(p))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Section renders the file as a section of an HTML page: headings,
// tables and examples, every value escaped; name says where it came from.
func (f *File) Section(name string) (template.HTML, error) {
	var b strings.Builder
	if err := sectionTmpl.Execute(&b, map[string]any{"F": f, "Name": name}); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

var sectionTmpl = template.Must(template.New("audit").Funcs(template.FuncMap{
	"f3":   func(x float64) string { return fmt.Sprintf("%.3f", x) },
	"num":  settingText,
	"lsh":  lshNote,
	"more": func(n, shown int) int { return n - shown },
	"head": func(n int, v any) any {
		switch s := v.(type) {
		case []Group:
			return s[:min(n, len(s))]
		case []Pair:
			return s[:min(n, len(s))]
		case []Split:
			return s[:min(n, len(s))]
		case []Short:
			return s[:min(n, len(s))]
		case []Shared:
			return s[:min(n, len(s))]
		case []string:
			return s[:min(n, len(s))]
		case []Judgment:
			return s[:min(n, len(s))]
		}
		return v
	},
	"join": func(s []string) string { return strings.Join(s, ", ") },
	"grade": func(g *int) string {
		if g == nil {
			return "unjudged"
		}
		return fmt.Sprint(*g)
	},
}).Parse(`<section class="audit" id="audit-{{.Name}}">
{{with .F.Leakage}}<h2>Leakage audit <span class="sub">({{$.Name}})</span></h2>
<p class="sub">Exact: equal after normalisation ({{.Settings.Normalization}}). Near: Jaccard ≥ {{num .Settings.Threshold}} over {{.Settings.Shingle}}-word shingles ({{lsh .Settings.Bands .Settings.Rows .Settings.Seed .Settings.RecallAtThreshold}}){{with .Settings.WordEdits}}{{if not .Off}}, or a text of {{.MinWords}}–{{.MaxWords}} words with one word replaced, dropped or added, a content word by another from {{.ContentMinWords}} words (word edits: 1 − edits/words){{end}}{{end}}.{{if .Settings.DenseModel}} Dense: cosine ≥ {{num .Settings.DenseThreshold}} with {{.Settings.DenseModel}}{{if .Settings.DenseTopK}}, among the {{.Settings.DenseTopK}} benchmark texts nearest each training text (exact search){{end}}.{{end}} Documents audited: {{.Settings.Documents}}.</p>
<div class="table-wrap"><table>
<caption class="sub">Benchmark texts found in the training set</caption>
<thead><tr><th scope="col">task</th><th scope="col" class="num">queries</th><th scope="col" class="num">leaked</th><th scope="col" class="num">share</th><th scope="col" class="num">exact/near/dense</th><th scope="col" class="num">documents</th><th scope="col" class="num">leaked</th><th scope="col" class="num">share</th><th scope="col" class="num">exact/near/dense</th><th scope="col" class="num" title="judgments whose query and relevant document both appear in one training record">pairs</th><th scope="col" class="num" title="judgments whose query and relevant document were both audited">of judgments</th></tr></thead>
<tbody>{{range .Tasks}}<tr><td>{{.Task}}</td><td class="num">{{.Queries.Total}}</td><td class="num">{{.Queries.Contaminated}}</td><td class="num">{{.Queries.Percent}}</td><td class="num">{{.Queries.Exact}}/{{.Queries.Near}}/{{.Queries.Dense}}</td><td class="num">{{.Documents.Total}}</td><td class="num">{{.Documents.Contaminated}}</td><td class="num">{{.Documents.Percent}}</td><td class="num">{{.Documents.Exact}}/{{.Documents.Near}}/{{.Documents.Dense}}</td><td class="num">{{.PairsText}}</td><td class="num">{{.JudgmentsText}}</td></tr>
{{end}}</tbody></table></div>
{{range .Tasks}}{{$task := .Task}}{{range .Notes}}<p class="sub">{{$task}}: {{.}}.</p>{{end}}{{end}}
<div class="table-wrap"><table>
<caption class="sub">Training files</caption>
<thead><tr><th scope="col">file</th><th scope="col">layout</th><th scope="col" class="num">rows</th><th scope="col" class="num">texts</th><th scope="col" class="num">empty</th><th scope="col" class="num">matches</th></tr></thead>
<tbody>{{range .Train}}<tr><td>{{.Path}}</td><td>{{.Layout}}</td><td class="num">{{.Rows}}</td><td class="num">{{.Texts}}</td><td class="num">{{.Empty}}</td><td class="num">{{.Matches}}</td></tr>
{{end}}</tbody></table></div>
{{range .Tasks}}{{if .Examples}}<div class="table-wrap"><table>
<caption class="sub">{{.Task}}: examples (strongest match of each text)</caption>
<thead><tr><th scope="col">benchmark</th><th scope="col">match</th><th scope="col" class="num">similarity</th><th scope="col">training line</th><th scope="col">benchmark text</th><th scope="col">training text</th></tr></thead>
<tbody>{{range .Examples}}<tr><td>{{.Kind}} {{.ID}}</td><td>{{.Match}}{{if .Measure}} ({{.Measure}}){{end}}</td><td class="num">{{f3 .Similarity}}</td><td>{{.TrainFile}}:{{.TrainLine}}{{if .TrainElement}} element {{.TrainElement}}{{end}} ({{.TrainField}}){{if gt .Matches 1}}, {{.Matches}} matches{{end}}</td><td>{{.Text}}</td><td>{{.TrainText}}</td></tr>
{{end}}</tbody></table></div>
{{end}}{{end}}{{end}}
{{if .F.Datasets}}<h2>Dataset audit <span class="sub">({{.Name}})</span></h2>
<div class="table-wrap"><table>
<caption class="sub">Findings per task (near-duplicates: Jaccard ≥ threshold over word shingles; short: fewer words than the setting)</caption>
<thead><tr><th scope="col">task</th><th scope="col" class="num">documents</th><th scope="col" class="num">queries</th><th scope="col" class="num">judgments</th><th scope="col" class="num">duplicate doc groups (docs in them)</th><th scope="col" class="num">near-duplicate doc pairs</th><th scope="col" class="num">relevance splits</th><th scope="col" class="num">duplicate query groups</th><th scope="col" class="num">near-duplicate query pairs</th><th scope="col" class="num">empty docs/queries</th><th scope="col" class="num">short docs/queries</th><th scope="col" class="num">id collisions</th><th scope="col" class="num">judgments of missing docs</th><th scope="col" class="num">shared positives</th><th scope="col" class="num">queries without positives</th></tr></thead>
<tbody>{{range .F.Datasets}}<tr><td>{{.Task}}</td><td class="num">{{.Documents}}</td><td class="num">{{.Queries}}</td><td class="num">{{.Judgments}}</td>{{with .Summary}}<td class="num">{{.DuplicateDocGroups}} ({{.DuplicateDocs}})</td><td class="num">{{.NearDuplicateDocs}}</td><td class="num">{{.RelevanceSplits}}</td><td class="num">{{.DuplicateQueryGroups}}</td><td class="num">{{.NearDuplicateQueries}}</td><td class="num">{{.EmptyDocs}}/{{.EmptyQueries}}</td><td class="num">{{.ShortDocs}}/{{.ShortQueries}}</td><td class="num">{{.IDCollisions}}</td><td class="num">{{.MissingDocs}}</td><td class="num">{{.SharedPositives}}</td><td class="num">{{.NoPositive}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{range .F.Datasets}}<details><summary>{{.Task}}: details</summary>
<p class="sub">Normalisation: {{.Settings.Normalization}}. Near-duplicates: Jaccard ≥ {{num .Settings.Threshold}} over {{.Settings.Shingle}}-word shingles{{if .Settings.Bands}} ({{lsh .Settings.Bands .Settings.Rows .Settings.Seed .Settings.RecallAtThreshold}}){{end}}. Short: fewer than {{.Settings.ShortWords}} words. Shared positives: relevant to ≥ {{.Settings.SharedPositives}} queries. Lists show their first 20 entries.{{with .Summary}}{{if or .DroppedEmptyDocs .DroppedEmptyQueries}} Rows left out by the loader for an empty text: documents {{.DroppedEmptyDocs}}, queries {{.DroppedEmptyQueries}}.{{end}}{{end}}</p>
<ul>
{{if .DuplicateDocs}}<li>Duplicate documents: {{range head 20 .DuplicateDocs}}[{{join .IDs}}] {{end}}{{if gt (len .DuplicateDocs) 20}}… and {{more (len .DuplicateDocs) 20}} more{{end}}</li>{{end}}
{{if .NearDuplicateDocs}}<li>Near-duplicate documents: {{range head 20 .NearDuplicateDocs}}{{.A}} ≈ {{.B}} ({{f3 .Similarity}}); {{end}}{{if gt (len .NearDuplicateDocs) 20}}… and {{more (len .NearDuplicateDocs) 20}} more{{end}}</li>{{end}}
{{if .RelevanceSplits}}<li>Relevance splits: {{range head 20 .RelevanceSplits}}{{.Query}}: {{.Relevant}} ({{.Grade}}) vs its {{.Match}} copy {{.Copy}} ({{grade .CopyGrade}}); {{end}}{{if gt (len .RelevanceSplits) 20}}… and {{more (len .RelevanceSplits) 20}} more{{end}}</li>{{end}}
{{if .DuplicateQueries}}<li>Duplicate queries: {{range head 20 .DuplicateQueries}}[{{join .IDs}}] {{end}}{{if gt (len .DuplicateQueries) 20}}… and {{more (len .DuplicateQueries) 20}} more{{end}}</li>{{end}}
{{if .NearDuplicateQueries}}<li>Near-duplicate queries: {{range head 20 .NearDuplicateQueries}}{{.A}} ≈ {{.B}} ({{f3 .Similarity}}); {{end}}{{if gt (len .NearDuplicateQueries) 20}}… and {{more (len .NearDuplicateQueries) 20}} more{{end}}</li>{{end}}
{{if .EmptyDocs}}<li>Empty documents: {{join (head 20 .EmptyDocs)}}{{if gt (len .EmptyDocs) 20}} … and {{more (len .EmptyDocs) 20}} more{{end}}</li>{{end}}
{{if .EmptyQueries}}<li>Empty queries: {{join (head 20 .EmptyQueries)}}{{if gt (len .EmptyQueries) 20}} … and {{more (len .EmptyQueries) 20}} more{{end}}</li>{{end}}
{{if .ShortDocs}}<li>Short documents: {{range head 20 .ShortDocs}}{{.ID}} “{{.Text}}”; {{end}}{{if gt (len .ShortDocs) 20}}… and {{more (len .ShortDocs) 20}} more{{end}}</li>{{end}}
{{if .ShortQueries}}<li>Short queries: {{range head 20 .ShortQueries}}{{.ID}} “{{.Text}}”; {{end}}{{if gt (len .ShortQueries) 20}}… and {{more (len .ShortQueries) 20}} more{{end}}</li>{{end}}
{{if .IDCollisions}}<li>Ids used by a query and a document: {{join (head 20 .IDCollisions)}}{{if gt (len .IDCollisions) 20}} … and {{more (len .IDCollisions) 20}} more{{end}}</li>{{end}}
{{if .MissingDocs}}<li>Judgments of missing documents: {{range head 20 .MissingDocs}}{{.Query}} → {{.Doc}} ({{.Grade}}); {{end}}{{if gt (len .MissingDocs) 20}}… and {{more (len .MissingDocs) 20}} more{{end}}</li>{{end}}
{{if .SharedPositives}}<li>Shared positives: {{range head 20 .SharedPositives}}{{.Doc}} ({{len .Queries}} queries); {{end}}{{if gt (len .SharedPositives) 20}}… and {{more (len .SharedPositives) 20}} more{{end}}</li>{{end}}
{{if .NoPositive}}<li>Queries without a relevant document: {{join (head 20 .NoPositive)}}{{if gt (len .NoPositive) 20}} … and {{more (len .NoPositive) 20}} more{{end}}</li>{{end}}
</ul></details>
{{end}}{{end}}</section>
`))
