package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/r2med/r2med/dataset"
	"github.com/r2med/r2med/internal/errtext"
	"github.com/r2med/r2med/ir"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/searchapi"
)

func newSearchCmd() *cobra.Command {
	var sf serviceFlags
	var server, id, gar, queryFile string
	var k, batch int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   `search (--index INDEX... | --server URL) ("QUERY"... | --queries FILE)`,
		Short: "Search stored indexes from the terminal (in process, or through a running serve-search)",
		Long: `search prints the hits of each query: rank, document id and score, then
under them the start of the document, wrapped to $COLUMNS (else the
terminal's width, else 80), with the words whose analyzed terms the query
shares marked (bold on a terminal, **between stars** elsewhere), and the
query's terms the document holds. It answers exactly as serve-search (and so as r2med run) would:
in process over --index files, or by asking the service at --server
(its key, if it has one, from $R2MED_SEARCH_KEY).

Several queries are searched as one batch. --queries FILE searches a
task's query file (R2MED query.jsonl or BEIR queries.jsonl; - reads
standard input) in batches the service takes, each query with its id,
as run would. --retriever picks retrievers
(several are fused), --gar METHOD expands the query with the --gar-model
LLM, --rerank KIND reranks (with --server: the server's reranker).`,
		Example: `  r2med search --index demo.idx "a 54-year-old with crushing chest pain radiating to the jaw"
  r2med search --index nfcorpus.idx -k 5 --json "vitamin d and depression"
  r2med search --index nfcorpus.idx -k 3 --queries ../shared/data/nfcorpus/queries.jsonl
  r2med search --server http://127.0.0.1:8081 --retriever bm25,bge "statins and muscle pain"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 0) == (queryFile == "") {
				return usage(errors.New(`give the queries as arguments ("QUERY"...) or --queries FILE, one of the two`))
			}
			if (server == "") == (len(sf.indexes) == 0) {
				return errors.New("give --index INDEX (search in process) or --server URL (ask a running r2med serve-search), one of the two")
			}
			if k < 1 { // 0 is not "the default", as the API refuses k: 0
				return usage(fmt.Errorf("-k must be at least 1, got %d (leave -k out for %d)", k, searchapi.DefaultK))
			}
			if batch < 1 {
				return usage(fmt.Errorf("--batch must be at least 1, got %d", batch))
			}
			if id != "" && (len(args) > 1 || queryFile != "") {
				return errors.New("--id names one query; give one query with it")
			}
			body := searchapi.SearchBody{K: k, Retrievers: sf.defaults, GAR: gar, Rerank: sf.rerankKind != ""}
			if server != "" && cmd.Flags().Changed("rerank-depth") {
				body.RerankDepth = sf.rerankDepth // in process it is the service's own
			}
			if cmd.Flags().Changed("snippet") {
				body.Snippet = &sf.snippet
			}
			fl := cmd.Flags()
			if fl.Changed("fuse") || fl.Changed("rrf-k") || fl.Changed("norm") || fl.Changed("weights") {
				f := sf.fuse
				body.Fuse = &f
			}
			var items []searchapi.QueryItem
			switch {
			case queryFile != "":
				qs, err := readQueryFile(queryFile, cmd.InOrStdin())
				if err != nil {
					return err
				}
				for _, q := range qs {
					items = append(items, searchapi.QueryItem{ID: q.ID, Query: q.Text})
				}
			case len(args) == 1:
				body.Query, body.ID = &args[0], id
			default:
				for _, a := range args {
					items = append(items, searchapi.QueryItem{Query: a})
				}
			}
			var search func(searchapi.SearchBody) ([]*searchapi.Result, error)
			if server != "" {
				c := &searchapi.Client{BaseURL: server, Key: os.Getenv(DefaultKeyEnv)}
				search = func(body searchapi.SearchBody) ([]*searchapi.Result, error) { return c.Search(cmd.Context(), body) }
			} else {
				svc, closeAll, err := sf.open(cmd.Context(), cmd.ErrOrStderr(), searchapi.Limits{})
				if err != nil {
					return err
				}
				defer closeAll()
				search = func(body searchapi.SearchBody) ([]*searchapi.Result, error) {
					reqs, _, err := body.Requests()
					if err != nil {
						return nil, err
					}
					return svc.SearchBatch(cmd.Context(), reqs)
				}
			}
			var results []*searchapi.Result
			if body.Query != nil {
				r, err := search(body)
				if err != nil {
					return err
				}
				results = r
			}
			// A file's queries go in batches within the service's
			// default limits (queries per request, k summed over them),
			// or --batch.
			per := min(batch, max(1, searchapi.DefaultLimits.MaxHits/k))
			for lo := 0; lo < len(items); lo += per {
				body.Queries = items[lo:min(lo+per, len(items))]
				r, err := search(body)
				if err != nil {
					if queryFile != "" {
						src := queryFile
						if src == "-" {
							src = "standard input"
						}
						return fmt.Errorf("%s: queries %d to %d: %w (--batch sets how many are sent at once)", src, lo+1, lo+len(body.Queries), err)
					}
					return err
				}
				results = append(results, r...)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if body.Query != nil {
					return enc.Encode(results[0])
				}
				return enc.Encode(searchapi.BatchResult{Results: results})
			}
			for i, r := range results {
				if i > 0 {
					fmt.Fprintln(out)
				}
				printResult(out, r, isTerminal(out), terminalWidth(out))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	sf.add(fl)
	fl.Lookup("rerank").Usage = "rerank the hits with this reranker (" + joinNames(rerank.Kinds) + "); with --server any kind asks the server's reranker"
	fl.StringVar(&server, "server", "", "ask a running r2med serve-search at this URL instead of searching --index in process")
	fl.IntVarP(&k, "k", "k", searchapi.DefaultK, "hits per query")
	fl.StringVar(&id, "id", "", "the query's id (dense retrieval skips a document with this id, as run does for a task's queries)")
	fl.StringVar(&gar, "gar", "", "expand the query with the --gar-model LLM first: hyde, query2doc, lamer, reasoning, reasoning-append")
	fl.BoolVar(&asJSON, "json", false, "print the API's JSON instead of text")
	fl.IntVar(&batch, "batch", searchapi.DefaultLimits.MaxBatch, "with --queries: the most queries sent at once (a service may take fewer: serve-search --max-batch)")
	fl.StringVar(&queryFile, "queries", "", `search the queries of this file, a task's query file: R2MED query.jsonl ({"id","text"}) or BEIR queries.jsonl ({"_id","text"}); - reads standard input`)
	return cmd
}

// readQueryFile reads --queries' file, "-" being in.
func readQueryFile(path string, in io.Reader) ([]ir.Query, error) {
	if path == "-" {
		return dataset.ReadQueriesOfEitherLayout(in, "standard input")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return dataset.ReadQueriesOfEitherLayout(f, path)
}

// printResult writes one query's hits for people: rank, id, score and
// the snippet with matched words in bold on a terminal, between ** and
// ** elsewhere.
func printResult(w io.Writer, r *searchapi.Result, color bool, width int) {
	head := r.System
	if r.ID != "" {
		head = r.ID + " · " + head
	}
	fmt.Fprintf(w, "%s · %s · %q\n", head, errtext.Count(len(r.Hits), "hit", "hits"), r.Query)
	if allZero(r.Hits) {
		fmt.Fprintln(w, "no document holds a word of the query: all tie at 0, ranked by id descending (trec_eval's tie order);\n"+
			"each score is a float32 step below the one before (-1e-45 …), so that every evaluator reads this order")
	}
	if e := r.Expansion; e != nil {
		cached := ""
		if e.Cached {
			cached = ", cached"
		}
		fmt.Fprintf(w, "expanded by %s/%s%s: %s\n", e.Method, e.LLM, cached, oneLine(e.Generation, 300))
	}
	// Scores are printed with the digits the JSON gives (encoding/json's
	// shortest form), which read back as the run file's float32 scores:
	// rounded, tied documents (which the ranking separates by float32
	// steps, in trec_eval's order) would look equal in an order the reader
	// cannot check, and a tie at zero would print as -0.0000. They line
	// up on their decimal points, after ids padded to their display
	// width.
	idw, scores, intw := 2, make([]string, len(r.Hits)), 1
	for i, h := range r.Hits {
		idw = max(idw, uniseg.StringWidth(h.ID))
		b, err := json.Marshal(h.Score)
		if err != nil { // not finite: the API never answers one
			b = []byte(fmt.Sprint(h.Score))
		}
		scores[i] = string(b)
		intw = max(intw, intDigits(scores[i]))
	}
	for i, h := range r.Hits {
		pad := idw - uniseg.StringWidth(h.ID) + intw - intDigits(scores[i])
		fmt.Fprintf(w, "%4d  %s  %s%s\n", h.Rank, h.ID, strings.Repeat(" ", pad), scores[i])
		if len(h.Snippet) > 0 {
			var words []snippetWord
			space := false
			for _, s := range h.Snippet {
				words = appendWords(words, oneLine(s.Text, len(s.Text)), s.Match, &space)
			}
			if h.Truncated && len(words) > 0 {
				words[len(words)-1].text += "…"
			}
			writeWrapped(w, words, hitIndent, width, color)
		}
		if len(h.Matched) > 0 {
			fmt.Fprintf(w, "%smatched: %s\n", strings.Repeat(" ", hitIndent), strings.Join(h.Matched, ", "))
		}
	}
}

// allZero says whether hits is a list of documents that all scored 0, as
// every document does for a query none of whose terms the index holds:
// run's ranking keeps them, tied and then separated by float32 steps
// below 0 (ir.Rank), which no matching document comes near.
func allZero(hits []searchapi.Hit) bool {
	for _, h := range hits {
		if math.Abs(h.Score) > 1e-30 {
			return false
		}
	}
	return len(hits) > 0
}

// intDigits is the length of a number's integer part, sign included:
// what comes before its decimal point or exponent.
func intDigits(s string) int {
	if i := strings.IndexAny(s, ".eE"); i >= 0 {
		return i
	}
	return len(s)
}

// hitIndent is where a hit's snippet and matched terms start, under its
// id.
const hitIndent = 6

// snippetWord is a run of text between spaces, with whether it is a
// matched word, and whether a space came before it.
type snippetWord struct {
	text         string
	match, space bool
}

// appendWords splits a snippet segment at its spaces. space carries
// across segments whether a space came last: a segment that starts
// mid-word (the rest of a word after a marked part) joins the word before
// it.
func appendWords(words []snippetWord, text string, match bool, space *bool) []snippetWord {
	for text != "" {
		if text[0] == ' ' {
			text, *space = strings.TrimLeft(text, " "), true
			continue
		}
		end := strings.IndexByte(text, ' ')
		if end < 0 {
			end = len(text)
		}
		words = append(words, snippetWord{text: text[:end], match: match, space: *space || len(words) == 0})
		text, *space = text[end:], false
	}
	return words
}

// writeWrapped writes the words as lines of at most width display
// columns after indent spaces (a word longer than a line gets one of its
// own), matched words in bold on a terminal, between ** and ** elsewhere.
func writeWrapped(w io.Writer, words []snippetWord, indent, width int, color bool) {
	pad := strings.Repeat(" ", indent)
	var line strings.Builder
	col := 0
	for _, wd := range words {
		n := uniseg.StringWidth(wd.text)
		if wd.match && !color {
			n += 4
		}
		if wd.space && col > 0 && indent+col+1+n > width {
			fmt.Fprintf(w, "%s%s\n", pad, line.String())
			line.Reset()
			col = 0
		} else if wd.space && col > 0 {
			line.WriteByte(' ')
			col++
		}
		switch {
		case wd.match && color:
			line.WriteString("\x1b[1;33m" + wd.text + "\x1b[0m")
		case wd.match:
			line.WriteString("**" + wd.text + "**")
		default:
			line.WriteString(wd.text)
		}
		col += n
	}
	if col > 0 {
		fmt.Fprintf(w, "%s%s\n", pad, line.String())
	}
}

func oneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
