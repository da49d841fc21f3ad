package main

import (
	"fmt"
	"net"
	"os"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/internal/httpserve"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/pipeline"
	"github.com/r2med/r2med/report"
	"github.com/r2med/r2med/server"
)

func init() { register(newServeCmd) }

// DefaultViewerKeyEnv is the environment variable the viewer's key is
// read from.
const DefaultViewerKeyEnv = "R2MED_SERVE_KEY"

func newServeCmd() *cobra.Command {
	var dir, addr, analyzer, keyEnv string
	var allowHosts []string
	var published, external bool
	var topK int
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Browse results: leaderboard, task pages and a per-query drill-down with matched terms highlighted; JSON API and CSV",
		Long: `serve starts a local web viewer of the runs under --results (and R2MED's
published systems with --published):

  /                         the leaderboard (?metric=recall@100&family=case&baseline=ID)
  /task/TASK                the task's leaderboard, recall@k, per-query values of ours
  /task/TASK/data           the task's data: the r2med stats profile, body_system counts
  /query/TASK/QID           the query, then each system's top k (?k=20) side by side,
                            rank by rank, relevant hits marked, the words matching the
                            query highlighted; the relevant documents collapsed below
  /diff/TASK?a=ID&b=ID      two systems: per-query change, rank changes, documents
                            only in A or only in B (&q=QID)
  /api/leaderboard          the leaderboard as JSON (same parameters, every column)
  /api/runs                 the runs, as r2med results --format json
  /api/query/TASK/QID       the drill-down as JSON (document snippets)
  /api/doc/TASK/DOCID       one document (what "show more" fetches), at most 1 MiB
  /leaderboard.csv          the leaderboard as CSV

Pages carry document snippets, never whole corpora. Requests must name the
viewer's address or a loopback name in their Host header (--allow-host adds
names), which stops DNS-rebinding pages; slow and idle connections time out.
It listens on loopback unless --addr says otherwise; any other address needs
a key of 16 characters or more, read from the environment variable
--key-env names (never from a flag, which ps would show): a browser asks for
it as the password (any user name), a program may send "Authorization:
Bearer KEY".
An unknown ?metric= is answered 400 with the valid names.

Task data (queries, documents, judgments) is loaded on first use from where
each run's manifest says it came from. The viewer follows --results: a run
re-run into its directory, a run added or deleted shows at the next request
(checked at most once a second); while a result file there does not read
(cut short, edited, a run caught between its files) pages answer 503 naming
it rather than the numbers read before. Ctrl-C stops the server gracefully.`,
		Example: `  r2med run --task demo --out out/demo
  r2med serve --results out
  r2med serve --results out --published --addr 127.0.0.1:9000
  R2MED_SERVE_KEY=$(openssl rand -hex 16) r2med serve --results out --addr 0.0.0.0:8080 --allow-host results.example.org`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key := os.Getenv(keyEnv)
			if !httpserve.Loopback(addr) && key == "" {
				return fmt.Errorf("--addr %s is reachable from other machines, so the viewer needs a key: set it in $%s (or name another variable with --key-env); a browser asks for it as the password, any user name", addr, keyEnv)
			}
			if err := httpserve.CheckKey(key, keyEnv); err != nil {
				return err
			}
			if err := checkResultsDir(cmd, dir); err != nil {
				return err
			}
			taskData := report.KeepTaskData(pipeline.LoadRunTask) // across reloads of --results
			load := func() (*report.Data, error) {
				return report.Load(dir, leaderboard.Sources{Published: published, External: external}, taskData)
			}
			d, err := load()
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			s, err := server.New(d, server.Options{Analyzer: analyzer, TopK: topK, Addr: ln.Addr().String(), AllowHosts: allowHosts,
				Key: key, Results: dir, Reload: load})
			if err != nil {
				ln.Close()
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "serving %d systems (%d of ours) at http://%s/ — Ctrl-C to stop\n",
				len(d.Board.Systems), len(d.Ours()), ln.Addr())
			return server.Serve(cmd.Context(), ln, s)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dir, "results", resultsDir(), "results directory searched for runs (results.json + manifest.json), at any depth; default $R2MED_RESULTS, else out")
	fl.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	fl.BoolVar(&published, "published", false, "include R2MED's 71 published systems")
	fl.BoolVar(&external, "external", false, "include results printed by later papers and R2MED's website")
	fl.StringSliceVar(&allowHosts, "allow-host", nil, "another host name requests may give (the machine's name when serving on 0.0.0.0)")
	fl.StringVar(&keyEnv, "key-env", DefaultViewerKeyEnv, "environment variable holding the viewer's key (required on a non-loopback --addr)")
	fl.StringVar(&analyzer, "analyzer", "lucene-english", "analyzer whose terms decide which words are highlighted as matching the query")
	fl.IntVar(&topK, "top-k", 10, "hits shown per system in the drill-down (a page can ask ?k=N)")
	return cmd
}
