package rerank

import (
	"context"

	"github.com/r2med/r2med/ir"
)

// Job reranks a run over one task's texts: the queries' own text (not an
// expansion) and the documents of the corpus.
type Job struct {
	Task *ir.Task
	// Docs gives a document's text; nil looks it up in Task.Corpus (a
	// search service passes its stored index's lookup instead, and a Task
	// holding only the query).
	Docs    func(id string) (string, bool)
	Run     ir.Run
	Scorer  Scorer
	Options Options
	// Checkpoint, when set, is a file where every finished query is kept
	// under Key (the fingerprint of what decides the reranked lists): a
	// job with the same key resumes from it, one with another key starts
	// afresh. The caller removes it once the output it feeds is safely
	// written, or keeps it as the stage's record. A job that fails (bad
	// input, an interrupt) before any query is in the file removes it:
	// there is nothing to resume.
	Checkpoint, Key string
	// Trace is a JSON-lines file where the reasoning rerankers' exchanges
	// (Trace: reasoning, answer, score or repaired ranking) are kept, each
	// query's written when it is finished, just before its checkpoint
	// line; empty means TraceFile(Checkpoint) when there is a checkpoint,
	// "-" none. A resumed job keeps the traces of the queries it resumes,
	// a fresh one starts the file anew; scorers without traces write none.
	Trace string
	// Progress hears the queries done so far (resumed ones included) out
	// of the queries that have documents.
	Progress func(done, total int)
}

// Resume says what a Job found in its checkpoint.
type Resume struct {
	Done  int  // queries taken from the checkpoint
	Stale bool // the checkpoint was written under another key and set aside
}

// Do runs the job. The Resume is valid even when err is not nil.
func (j Job) Do(ctx context.Context) (ir.Run, Resume, error) {
	var res Resume
	queries := make(map[string]string, len(j.Task.Queries))
	for _, q := range j.Task.Queries {
		queries[q.ID] = q.Text
	}
	docs := j.Docs
	if docs == nil {
		corpus := make(map[string]string, len(j.Task.Corpus))
		for _, d := range j.Task.Corpus {
			corpus[d.ID] = d.Text
		}
		docs = func(id string) (string, bool) { t, ok := corpus[id]; return t, ok }
	}
	opts := j.Options
	var cp *Checkpoint
	added := 0 // queries this run wrote to the checkpoint
	if j.Checkpoint != "" {
		var done ir.Run
		var stale bool
		var err error
		if cp, done, stale, err = OpenCheckpoint(j.Checkpoint, j.Key); err != nil {
			return nil, res, err
		}
		res.Done, res.Stale = len(done), stale
		opts.Done = done
		opts.OnQuery = func(qid string, hits []ir.Hit) error {
			if err := cp.Add(qid, hits); err != nil {
				return err
			}
			added++
			return nil
		}
	}
	trace := j.Trace
	if trace == "" && j.Checkpoint != "" {
		trace = TraceFile(j.Checkpoint)
	}
	if trace != "" && trace != "-" {
		tl, err := openTraceLog(trace, opts.Done)
		if err != nil {
			if cp != nil {
				cp.Close()
			}
			return nil, res, err
		}
		defer tl.Close()
		ctx = WithTrace(ctx, tl.add)
		next := opts.OnQuery
		opts.OnQuery = func(qid string, hits []ir.Hit) error {
			if err := tl.flush(qid); err != nil {
				return err
			}
			if next != nil {
				return next(qid, hits)
			}
			return nil
		}
	}
	total := 0
	for _, hits := range j.Run {
		if len(hits) > 0 {
			total++
		}
	}
	if j.Progress != nil {
		j.Progress(res.Done, total)
		opts.Progress = j.Progress
	}
	out, err := Rerank(ctx, j.Run, queries, docs, j.Scorer, opts)
	if cp != nil {
		if err != nil && res.Done == 0 && added == 0 {
			cp.Remove()
		} else {
			cp.Close()
		}
	}
	return out, res, err
}
