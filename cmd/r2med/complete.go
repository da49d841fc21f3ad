package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/r2med/r2med/bm25"
	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/leaderboard"
	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/rerank"
	"github.com/r2med/r2med/results"
	"github.com/r2med/r2med/retrieve"
	"github.com/r2med/r2med/tasks"
)

// completer lists the values a flag or argument takes, for the shell
// ("VALUE\tdescription", as cobra prints them).
type completer func(cmd *cobra.Command) []string

// flagValues are the completions of flags by name, for every command
// that has the flag; byCommand overrides them for one command, where the
// same flag name takes other values there.
var flagValues = map[string]completer{
	"task":    taskValues,
	"suite":   fixed("r2med\tthe full R2MED tasks", "nano\tNanoR2MED, HAKARI-Bench's compact splits"),
	"bm25":    schemeValues,
	"metric":  metricValues,
	"model":   modelValues,
	"rerank":  fixed(rerank.Kinds...),
	"gar":     fixed(expand.Methods()...),
	"fuse":    fixed("rrf\treciprocal rank fusion", "combsum\tnormalized score sum"),
	"norm":    fixed("minmax", "zscore", "none"),
	"backend": fixed(append([]string{"onnx\tlocal ONNX Runtime"}, embed.HTTPBackends...)...),
	"family":  fixed("all", "qa\tQ&A reference", "evidence\tclinical evidence", "case\tclinical case"),
	"rank":    fixed("avg\tR2MED's task average", "borda\tHAKARI-Bench's Borda count"),
	"profile": fixed("trec\ttrec_eval 9.0.8 (R2MED's measures)", "hakari\tHAKARI-Bench's measures"),
	"measure": measureValues,
	"retriever": func(*cobra.Command) []string {
		var out []string
		for _, k := range retrieve.Kinds() {
			out = append(out, k.Usage+"\t"+k.Help)
		}
		return out
	},
	"baseline": systemValues(true),
	"systems":  systemValues(false),
	"tasks":    taskValues,
}

var byCommand = map[string]map[string]completer{
	"leaderboard": {"format": fixed("table", "markdown", "csv", "json", "latex"), "kind": fixed("base", "gar", "reranker", "fusion")},
	"compare":     {"format": fixed("text", "markdown", "json", "latex"), "test": fixed("rand\tpaired randomization (Fisher)", "t\tpaired t-test (Student)", "tukey\trandomised Tukey HSD")},
	"report":      {"format": fixed("html", "png", "svg", "pdf")},
	"results":     {"format": fixed("table", "markdown", "csv", "json")},
	"models":      {"format": fixed("table", "json")},
	"negatives":   {"format": fixed("bge", "triplet")},
	"stats":       {"format": fixed("table", "json")},
}

// listFlags take comma-separated lists: each item completes alike.
var listFlags = map[string]bool{"task": true, "tasks": true, "systems": true, "retriever": true}

func fixed(values ...string) completer {
	return func(*cobra.Command) []string { return values }
}

func taskValues(*cobra.Command) []string {
	out := []string{demo.Name + "\tthe built-in demo task", "all\tR2MED's eight tasks"}
	for _, t := range tasks.All() {
		out = append(out, t.Name+"\t"+t.Family.Title()+"; --suite nano: "+t.NanoSplit)
	}
	return out
}

func schemeValues(*cobra.Command) []string {
	var out []string
	for _, s := range bm25.Schemes() {
		out = append(out, string(s))
	}
	return out
}

func metricValues(cmd *cobra.Command) []string {
	return leaderboard.MetricNames()
}

func measureValues(cmd *cobra.Command) []string {
	if p, _ := cmd.Flags().GetString("profile"); p == "hakari" {
		return []string{"ndcg@10", "ndcg@100", "recall@10", "recall@100", "hit@1", "hit@10", "mrr@10", "map@100", "precision@10"}
	}
	return []string{"ndcg_cut.10", "ndcg_cut.1,10,25,50,100", "recall.100", "map_cut.100", "P.10", "recip_rank", "map", "Rprec", "bpref", "success.10", "num_rel_ret"}
}

func modelValues(*cobra.Command) []string {
	var out []string
	for _, m := range models.All() {
		out = append(out, m.Name+"\t"+m.R2MEDName)
	}
	return out
}

// systemValues completes system IDs and names from the results directory
// the command reads (--results, else the default), with R2MED's and the
// later papers' systems where the command's flags include them; ours
// only for a baseline.
func systemValues(oursOnly bool) completer {
	return func(cmd *cobra.Command) []string {
		dir := results.Root()
		if f := cmd.Flags().Lookup("results"); f != nil && f.Changed {
			dir = f.Value.String()
		}
		src := leaderboard.Sources{}
		if !oursOnly {
			src.Published = flagTrue(cmd, "published") || (cmd.Flags().Lookup("no-published") != nil && !flagTrue(cmd, "no-published"))
			src.External = flagTrue(cmd, "external") || (cmd.Flags().Lookup("no-external") != nil && !flagTrue(cmd, "no-external"))
		}
		b, err := leaderboard.Load(dir, src)
		if err != nil {
			return nil
		}
		var out []string
		for _, s := range b.Systems {
			if oursOnly && !s.IsOurs() {
				continue
			}
			out = append(out, s.ID+"\t"+s.FullName())
			if n := s.DisplayName(); n != s.ID && !strings.ContainsAny(n, " ,") {
				out = append(out, n+"\t"+string(s.Origin()))
			}
		}
		return out
	}
}

func flagTrue(cmd *cobra.Command, name string) bool {
	v, err := cmd.Flags().GetBool(name)
	return err == nil && v
}

// complete answers one flag's or argument's completion: values that
// start with what was typed, each item of a list flag alike.
func complete(values completer, list bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		prefix, word := "", toComplete
		if list {
			if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
				prefix, word = toComplete[:i+1], toComplete[i+1:]
			}
		}
		var out []cobra.Completion
		seen := map[string]bool{}
		for _, v := range values(cmd) {
			name, _, _ := strings.Cut(v, "\t")
			if !seen[name] && strings.HasPrefix(strings.ToLower(name), strings.ToLower(word)) {
				seen[name] = true
				out = append(out, prefix+v)
			}
		}
		directive := cobra.ShellCompDirectiveNoFileComp
		if list {
			directive |= cobra.ShellCompDirectiveNoSpace
		}
		return out, directive
	}
}

// registerCompletions gives every command's flags (and the commands that
// take task or model names as arguments) completions of their values.
func registerCompletions(cmd *cobra.Command) {
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		values, ok := byCommand[cmd.Name()][f.Name]
		if !ok {
			values, ok = flagValues[f.Name]
		}
		if ok {
			// A flag registered twice (a parent's) is an error we can ignore.
			_ = cmd.RegisterFlagCompletionFunc(f.Name, complete(values, listFlags[f.Name]))
		}
	})
	switch cmd.CommandPath() {
	case "r2med tasks", "r2med pull":
		cmd.ValidArgsFunction = complete(taskValues, true)
	case "r2med model show", "r2med model pull":
		cmd.ValidArgsFunction = complete(modelValues, false)
	}
	for _, c := range cmd.Commands() {
		registerCompletions(c)
	}
}
