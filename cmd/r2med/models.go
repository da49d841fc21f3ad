package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2med/r2med/demo"
	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/hub"
	"github.com/r2med/r2med/internal/progress"
	"github.com/r2med/r2med/internal/textwrap"
	"github.com/r2med/r2med/internal/yamlx"
	"github.com/r2med/r2med/models"
	"github.com/r2med/r2med/tasks"
)

func init() {
	register(newModelsCmd)
	register(newModelCmd)
}

func newModelsCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the dense retrievers R2MED evaluated and the leaders since, with the recipe for each",
		Long: `models lists the registry of dense retrievers: R2MED's 14 and the models
that lead R2MED since (ReasonEmbed, ReasonIR, RaDeR, DIVER, Qwen3-Embedding,
gte-Qwen2), by the names r2med run --model takes (as do the aliases and Hub
ids), with checkpoints, pooling, maximum length, which backends serve each,
R2MED's published 8-task mean nDCG@10 and the one a later evaluation
reported, and the repositories their instructions come from. --format json
adds every field and the per-task R2MED and BRIGHT instructions, each with
its source (repository, path, commit); r2med model show NAME prints them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch format {
			case "table":
				return writeModelsTable(cmd, models.All())
			case "json":
				return writeModelsJSON(cmd, models.All())
			}
			return fmt.Errorf("--format %q: want table or json", format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table or json")
	return cmd
}

func writeModelsTable(cmd *cobra.Command, ms []models.Model) error {
	// The name stays whole (it is what --model takes); the checkpoint goes
	// under its model.
	w := newTableWriter(cmd.OutOrStdout(), textwrap.Layout{Wrap: []int{8, 5}, Below: 2})
	fmt.Fprintln(w, "model\tcheckpoint\tpooling\tmax len\tnormalized\tbackends\tR2MED nDCG@10\treported\tinstructions from")
	for _, m := range ms {
		length := fmt.Sprint(m.MaxLength)
		if m.DocMaxLength > 0 {
			length = fmt.Sprintf("%d/%d", m.MaxLength, m.DocMaxLength)
		}
		ndcg, reported := "-", "-"
		if m.NDCG10 > 0 {
			ndcg = fmt.Sprintf("%.2f", m.NDCG10)
		}
		if m.Reported > 0 {
			reported = fmt.Sprintf("%.2f", m.Reported)
		}
		norm := "no"
		if m.Normalize {
			norm = "yes"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, strings.Join(m.HubIDs(), " + "), m.Pooling, length, norm,
			strings.Join(m.Backends, ","), ndcg, reported, instructionsFrom(m))
	}
	return w.Flush()
}

// instructionsFrom names, for the table, the repositories the model's
// R2MED (and BRIGHT) instructions come from.
func instructionsFrom(m models.Model) string {
	from := m.Instruction(tasks.All()[0].Name).Source.Repo
	for _, t := range m.Tables {
		switch {
		case t.Benchmark != models.BenchBRIGHT:
		case t.Source.Repo == from:
			from += " (+BRIGHT)"
		default:
			from += "; BRIGHT: " + t.Source.Repo
		}
	}
	return from
}

type modelJSON struct {
	Name           string                     `json:"name"`
	Aliases        []string                   `json:"aliases"`
	QueryModel     string                     `json:"query_model"`
	DocModel       string                     `json:"doc_model"`
	Pooling        string                     `json:"pooling"`
	MaxLength      int                        `json:"max_length"`
	DocMaxLength   int                        `json:"doc_max_length"`
	Normalize      bool                       `json:"normalize"`
	AppendEOS      bool                       `json:"append_eos"`
	DocAsPair      bool                       `json:"doc_as_pair"`
	InstructHyDoc  bool                       `json:"instruct_hy_doc"`
	Backends       []string                   `json:"backends"`
	BatchSize      int                        `json:"batch_size"`
	R2MEDName      string                     `json:"r2med_name,omitempty"`
	NDCG10         float64                    `json:"r2med_ndcg_at_10,omitempty"`
	Reported       float64                    `json:"reported_ndcg_at_10,omitempty"`
	ReportedBy     string                     `json:"reported_by,omitempty"`
	Note           string                     `json:"note,omitempty"`
	Instructions   map[string]instructionJSON `json:"instructions"`
	Generic        *instructionJSON           `json:"generic_instruction,omitempty"`
	TaskDependent  bool                       `json:"task_dependent"`
	SeparatePrompt bool                       `json:"separate_prompt"`
}

// instructionJSON is one task's instructions and where they come from.
type instructionJSON struct {
	Query     string        `json:"query"`
	Doc       string        `json:"doc"`
	Source    models.Source `json:"-"`
	SourceOut sourceJSON    `json:"source"`
	MaxLength int           `json:"max_length,omitempty"`
}

type sourceJSON struct {
	Repo    string `json:"repo,omitempty"`
	Path    string `json:"path,omitempty"`
	Commit  string `json:"commit,omitempty"`
	URL     string `json:"url,omitempty"`
	Entry   string `json:"entry,omitempty"`
	Derived string `json:"derived,omitempty"`
}

func newInstructionJSON(in models.Instruction) instructionJSON {
	s := in.Source
	return instructionJSON{Query: in.Query, Doc: in.Doc, Source: s, MaxLength: in.MaxLength,
		SourceOut: sourceJSON{Repo: s.Repo, Path: s.Path, Commit: s.Commit, URL: s.URL, Entry: s.Entry, Derived: s.Derived}}
}

func writeModelsJSON(cmd *cobra.Command, ms []models.Model) error {
	out := make([]modelJSON, 0, len(ms))
	for _, m := range ms {
		j := modelJSON{
			Name: m.Name, Aliases: m.Aliases,
			QueryModel: m.CheckpointFor(embed.Query), DocModel: m.CheckpointFor(embed.Document),
			Pooling: m.Pooling.String(), MaxLength: m.MaxLength, DocMaxLength: m.MaxLengthFor(embed.Document),
			Normalize: m.Normalize, AppendEOS: m.AppendEOS, DocAsPair: m.DocAsPair, InstructHyDoc: m.InstructHyDoc(),
			Backends: m.Backends, BatchSize: m.BatchSize, R2MEDName: m.R2MEDName, NDCG10: m.NDCG10,
			Reported: m.Reported, ReportedBy: m.ReportedBy, Note: m.Note,
			Instructions: map[string]instructionJSON{}, TaskDependent: m.TaskDependent(), SeparatePrompt: m.SeparatePrompt,
		}
		if j.Aliases == nil {
			j.Aliases = []string{}
		}
		for _, name := range instructionTasks(m) {
			j.Instructions[name] = newInstructionJSON(m.Instruction(name))
		}
		if m.TaskDependent() {
			g := newInstructionJSON(m.Generic)
			j.Generic = &g
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// instructionTasks are the task names the model has instructions for:
// R2MED's eight, then BRIGHT's twelve ("BRIGHT-<task>") where a source
// gives them.
func instructionTasks(m models.Model) []string {
	var out []string
	for _, t := range tasks.All() {
		out = append(out, t.Name)
	}
	for _, t := range m.Tables {
		if t.Benchmark == models.BenchBRIGHT {
			for _, bt := range models.BRIGHTTasks {
				out = append(out, "BRIGHT-"+bt)
			}
		}
	}
	return out
}

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Show a model's recipe, or fetch a local encoder from the Hugging Face Hub",
	}
	cmd.AddCommand(newModelShowCmd(), newModelPullCmd())
	return cmd
}

func lookupModel(name string) (models.Model, error) {
	m, ok := models.Lookup(name)
	if !ok {
		return m, models.Unknown(name)
	}
	return m, nil
}

func newModelShowCmd() *cobra.Command {
	var task string
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Print a model's recipe and its query and document instructions for each task, with where each comes from",
		Example: `  r2med model show nv
  r2med model show inst-xl --task PMC-Clinical
  r2med model show reasonembed-qwen3-8b --task Biology,BRIGHT-biology,nfcorpus`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := lookupModel(args[0])
			if err != nil {
				return err
			}
			names := instructionTasks(m)
			if task != "" {
				names = nil
				for _, name := range strings.Split(task, ",") {
					ts, err := tasks.Expand(name)
					switch _, bright := models.BRIGHTTask(name); {
					case err == nil:
						for _, t := range ts {
							names = append(names, t.Name)
						}
					case !bright && nearTask(name):
						return taskError(err) // a typo of a task's name: say which
					default:
						names = append(names, strings.TrimSpace(name)) // BRIGHT's, or another: the generic instruction
					}
				}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "model       %s (aliases: %s)\n", m.Name, strings.Join(m.Aliases, ", "))
			fmt.Fprintf(out, "queries     %s\n", m.CheckpointFor(embed.Query))
			fmt.Fprintf(out, "documents   %s\n", m.CheckpointFor(embed.Document))
			fmt.Fprintf(out, "pooling     %s, max length %d/%d tokens (query/doc), normalized %v\n", m.Pooling, m.MaxLengthFor(embed.Query), m.MaxLengthFor(embed.Document), m.Normalize)
			fmt.Fprintf(out, "backends    %s; batch %d\n", strings.Join(m.Backends, ", "), m.BatchSize)
			fmt.Fprintf(out, "dense GAR   hy_doc embedded %s\n", map[bool]string{true: "with the query instruction", false: "bare"}[m.InstructHyDoc()])
			if m.NDCG10 > 0 {
				fmt.Fprintf(out, "R2MED       %s: 8-task mean nDCG@10 %.2f\n", m.R2MEDName, m.NDCG10)
			}
			if m.Reported > 0 {
				fmt.Fprintf(out, "reported    8-task mean nDCG@10 %.2f, %s\n", m.Reported, m.ReportedBy)
			}
			if m.Note != "" {
				fmt.Fprintf(out, "note        %s\n", m.Note)
			}
			// Each run of tasks whose instructions share a source is
			// headed by that source.
			var last models.Source
			for i, name := range names {
				in := m.Instruction(name)
				if i == 0 || in.Source != last {
					head := "from"
					if in.Generic {
						head = "generic, for tasks without a published instruction; from"
					}
					if n := m.Instruction(name).MaxLength; n > 0 {
						head = fmt.Sprintf("max length %d; from", n)
					}
					fmt.Fprintf(out, "instructions %s %s\n", head, in.Source)
					last = in.Source
				}
				fmt.Fprintf(out, "%-16s query %q  doc %q\n", name, in.Query, in.Doc)
			}
			if m.TaskDependent() && task == "" {
				fmt.Fprintf(out, "instructions generic, for tasks without a published instruction; from %s\n", m.Generic.Source)
				fmt.Fprintf(out, "%-16s query %q  doc %q\n", "other tasks", m.Generic.Query, m.Generic.Doc)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&task, "task", "", "only these tasks (a name, a comma-separated list, or all); BRIGHT-<task> for BRIGHT's, any other name for the generic instruction")
	return cmd
}

func newModelPullCmd() *cobra.Command {
	var revision string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "pull NAME|HUB_ID...",
		Short: "Download a local encoder's ONNX graph, tokenizer.json and config.json into the Hugging Face cache",
		Long: `pull fills the Hugging Face cache ($HF_HOME/hub, shared with Python tools)
with what the local ONNX backend needs of a model: onnx/model.onnx (or
model.onnx), tokenizer.json and config.json, and nothing else. NAME is a
registry name (r2med models; medcpt pulls both of its encoders); HUB_ID
(OWNER/NAME) pulls that one repository. Later runs find the files offline (HF_HUB_OFFLINE=1). HF_ENDPOINT
selects a mirror; HF_TOKEN is sent if set.

A repository without an ONNX export is refused with what to do: export it
with optimum-cli export onnx, or serve the model over HTTP.`,
		Example: `  r2med model pull bge
  r2med model pull medcpt
  r2med model pull sentence-transformers/all-MiniLM-L6-v2 --revision main`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := hub.FromEnv()
			c.Progress = progress.Auto(quiet)
			for _, arg := range args {
				var cps []models.Checkpoint
				var err error
				// A Hub id names one repository; a registry name may
				// name two (medcpt) or a model with nothing to pull.
				if m, ok := models.Lookup(arg); ok && !strings.Contains(arg, "/") {
					cps, err = m.Pull(cmd.Context(), c, revision)
				} else {
					var cp models.Checkpoint
					cp, err = models.Pull(cmd.Context(), c, arg, revision)
					cps = append(cps, cp)
				}
				if err != nil {
					return err
				}
				for _, cp := range cps {
					fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\t%s\n", cp.HubID, cp.Commit[:min(12, len(cp.Commit))], cp.Dir)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&revision, "revision", hub.DefaultRevision, "branch, tag or commit of every model named")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress bars")
	return cmd
}

// nearTask reports whether name is a near miss of an R2MED task's name
// (or the demo's), which a user more likely mistyped than meant as a task
// of their own.
func nearTask(name string) bool {
	var known []string
	for _, t := range tasks.All() {
		known = append(known, t.Names()...)
	}
	return yamlx.Suggest(strings.TrimSpace(name), append(known, demo.Name)) != ""
}
