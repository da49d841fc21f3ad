package embed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/r2med/r2med/internal/httpx"
	"github.com/r2med/r2med/usage"
)

// HTTPOptions are the settings every HTTP backend shares: how texts are
// cut and batched, how many requests run at once, and how failed requests
// are retried. The zero value works.
type HTTPOptions struct {
	// BatchSize bounds the texts in one request. 0 adapts it: 64 (R2MED's
	// batch for its openai and voyage runs) at first, doubled while the
	// servers' throughput rises, up to 512 (see adapter). Batches do not
	// change vectors.
	BatchSize int
	// MaxTokens bounds the estimated tokens of all texts in one request
	// (OpenAI refuses requests over 300k tokens, Voyage over 120k for
	// voyage-3); 0 means 100,000. A text estimated above it is sent alone.
	MaxTokens int
	// Tokens estimates the tokens of a text for MaxTokens; nil means
	// EstimateTokens.
	Tokens func(string) int
	// Concurrency bounds the requests in flight to each server. 0 adapts
	// it per server: 4 at first, raised while that server's throughput
	// rises, halved when it rate-limits or fails (429, 503, timeouts).
	// With a fleet of N servers (several base URLs), up to N times as
	// many run at once.
	Concurrency int
	// Fleet tunes how a fleet of servers takes failing ones out and back
	// (httpx.Fleet); its PerEndpoint is ignored, Concurrency is used.
	Fleet httpx.FleetOptions

	// MaxChars cuts each text to its first MaxChars characters (runes)
	// before it is sent; 0 sends texts whole. It stands in for a
	// tokenizer-exact cut, which needs the model's tokenizer: R2MED cut
	// openai inputs to 6000 cl100k tokens (about 24,000 characters of
	// English) and voyage inputs to 16,000 tokens.
	MaxChars int
	// Truncate, if set, cuts each text instead of MaxChars (for a
	// tokenizer-exact cut); set one of the two.
	Truncate func(string) string
	// QuoteInputs sends each text the way R2MED's openai and voyage runs
	// did (quirk (d) of its code): newlines replaced by spaces, then
	// quoted and escaped by Python's json.dumps, quotes included, after
	// truncation. Only for reproducing those runs: it changes the
	// embeddings, and their cache keys must say so.
	QuoteInputs bool

	// Progress, if set, hears how many texts of one Embed call are done,
	// after each request; calls do not overlap and the count only grows.
	Progress func(done int)

	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
	// MaxAttempts, BaseDelay, MaxDelay and Timeout tune the retries as
	// httpx.Client documents them: 0 means 6 attempts, 500 ms first
	// backoff, 30 s cap, 120 s per attempt.
	MaxAttempts int
	BaseDelay   time.Duration
	MaxDelay    time.Duration
	Timeout     time.Duration
	// MaxBody caps an answer's size in bytes; 0 means
	// httpx.DefaultMaxBody.
	MaxBody int64
	// Replay refuses to send any request (see httpx.Client.Replay);
	// Cache.Replay says the same one level up, with a clearer message.
	Replay bool
	// Notify, if set, hears about each retry; its error holds no key.
	// Concurrent requests may call it at the same time.
	Notify func(attempt int, wait time.Duration, err error)
}

// EstimateTokens is the default token estimate for batching, and for the
// usage of servers that report none (usage.EstimateTokens): a quarter of
// the UTF-8 bytes, rounded up. It is close for English under BPE
// vocabularies (about 4 characters a token) and overestimates most other
// Latin text; CJK text may take more tokens than it says, so lower
// MaxTokens or set Tokens for such corpora.
func EstimateTokens(s string) int { return usage.EstimateTokens(s) }

func (o HTTPOptions) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"batch size", o.BatchSize}, {"token budget", o.MaxTokens}, {"concurrency", o.Concurrency}, {"max chars", o.MaxChars}, {"max attempts", o.MaxAttempts}} {
		if f.v < 0 {
			return fmt.Errorf("%s is %d; it must be positive, or 0 for the default", f.name, f.v)
		}
	}
	if o.Timeout < 0 || o.MaxBody < 0 {
		return fmt.Errorf("timeout %v and answer cap %d must not be negative", o.Timeout, o.MaxBody)
	}
	if o.MaxChars > 0 && o.Truncate != nil {
		return errors.New("both a character limit and a truncation function are set; set one")
	}
	return nil
}

// client is the retrying client of a fleet of servers at bases.
func (o HTTPOptions) client(bases []string, secrets ...string) (*httpx.Client, error) {
	fo := o.Fleet
	fo.PerEndpoint = o.concurrency()
	fleet, err := httpx.NewFleet(bases, fo)
	if err != nil {
		return nil, err
	}
	return &httpx.Client{
		HTTP: o.HTTP, MaxAttempts: o.MaxAttempts, BaseDelay: o.BaseDelay, MaxDelay: o.MaxDelay,
		Timeout: o.Timeout, Notify: o.Notify, Secrets: secrets, MaxBody: o.MaxBody, Fleet: fleet, Replay: o.Replay,
	}, nil
}

func (o HTTPOptions) concurrency() int { return cmp.Or(o.Concurrency, startConcurrency) }

// prepare returns the texts as they will be sent: cut, then quoted.
func (o HTTPOptions) prepare(texts []string) []string {
	if o.Truncate == nil && o.MaxChars <= 0 && !o.QuoteInputs {
		return texts
	}
	out := make([]string, len(texts))
	for i, s := range texts {
		switch {
		case o.Truncate != nil:
			s = o.Truncate(s)
		case o.MaxChars > 0:
			s = cutRunes(s, o.MaxChars)
		}
		if o.QuoteInputs {
			s = pyJSONQuote(strings.ReplaceAll(s, "\n", " "))
		}
		out[i] = s
	}
	return out
}

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// pyJSONQuote is Python's json.dumps(s) with its defaults
// (ensure_ascii=True): printable ASCII kept, the usual two-character
// escapes, everything else as \uXXXX in lower-case hex, astral
// characters as surrogate pairs. Invalid UTF-8 becomes \ufffd.
func pyJSONQuote(s string) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	u4 := func(r rune) {
		b = append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
	}
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r >= 0x20 && r <= 0x7e:
			b = append(b, byte(r))
		case r < 0x10000:
			u4(r)
		default:
			r -= 0x10000
			u4(0xd800 | r>>10)
			u4(0xdc00 | r&0x3ff)
		}
	}
	return string(append(b, '"'))
}

// span is a batch: texts[lo:hi].
type span struct{ lo, hi int }

// spans cuts n texts into consecutive batches of at most size texts and
// at most budget estimated tokens; a text over the budget goes alone.
func spans(texts []string, size, budget int, tokens func(string) int) []span {
	var out []span
	for lo := 0; lo < len(texts); {
		hi := cut(texts, lo, size, budget, tokens)
		out = append(out, span{lo, hi})
		lo = hi
	}
	return out
}

// cut is the end of the batch that starts at texts[lo]: at most size
// texts and budget estimated tokens, at least one text.
func cut(texts []string, lo, size, budget int, tokens func(string) int) int {
	sum := 0
	for i := lo; i < len(texts); i++ {
		t := tokens(texts[i])
		if i > lo && (i-lo >= size || sum+t > budget) {
			return i
		}
		sum += t
	}
	return len(texts)
}

// batcher runs one backend's requests: it prepares and batches texts,
// sends batches concurrently, checks every answer and puts vectors back
// in input order, with each text's share of its request's usage. Its
// adapter decides the batch size and the requests in flight, across
// calls (concurrent calls share them).
type batcher struct {
	name  string // "openai text-embedding-3-large", for messages
	opts  HTTPOptions
	fixed int          // the dimension asked for, 0 if the server chooses
	dim   atomic.Int64 // the dimension seen first, kept across calls
	adapt *adapter
}

// newBatcher makes the batcher of a backend on fleet; batchCap bounds an
// adaptive batch (a server's own limit, TEI's 32), 0 for the default.
func newBatcher(name string, o HTTPOptions, dim int, fleet *httpx.Fleet, batchCap int) *batcher {
	if o.MaxTokens == 0 {
		o.MaxTokens = 100_000
	}
	if o.Tokens == nil {
		o.Tokens = EstimateTokens
	}
	maxBatch := maxAdaptBatch
	if batchCap > 0 {
		maxBatch = batchCap
	}
	batch := cmp.Or(o.BatchSize, min(startBatch, maxBatch))
	conc := cmp.Or(o.Concurrency, startConcurrency)
	return &batcher{name: name, opts: o, fixed: dim,
		adapt: newAdapter(fleet, batch, maxBatch, conc, o.BatchSize > 0, o.Concurrency > 0)}
}

// sent is one request's answer: a vector per text, the prompt tokens the
// server counted (-1 when it says nothing) and the server that answered
// (its index in the fleet).
type sent struct {
	vecs   [][]float32
	tokens int
	server int
}

// send embeds one batch; it returns exactly one vector per text or an
// error.
type send func(ctx context.Context, texts []string) (sent, error)

func (b *batcher) embed(ctx context.Context, texts []string, f send) ([][]float32, []usage.Usage, error) {
	out := make([][]float32, len(texts))
	use := make([]usage.Usage, len(texts))
	if len(texts) == 0 {
		return out, use, nil
	}
	prepared := b.opts.prepare(texts)
	// A failed batch cancels gctx before it frees its slot, so the slot
	// it frees never starts another batch (errgroup's own context is
	// cancelled only after the function returns, which is too late).
	gctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var g errgroup.Group
	var mu sync.Mutex
	done := 0
	for lo := 0; lo < len(prepared); {
		// A slot first, then the batch: its size is the adapter's when
		// it goes out.
		if err := b.adapt.acquire(gctx); err != nil {
			break // a batch failed, or the caller gave up: start no more
		}
		if gctx.Err() != nil {
			b.adapt.release(-1, 0, 0, false)
			break
		}
		sp := span{lo, cut(prepared, lo, b.adapt.batchSize(), b.opts.MaxTokens, b.opts.Tokens)}
		lo = sp.hi
		g.Go(func() error {
			batch := prepared[sp.lo:sp.hi]
			if err := gctx.Err(); err != nil {
				b.adapt.release(-1, 0, 0, false)
				return err
			}
			start := time.Now()
			res, err := f(gctx, batch)
			if err == nil {
				err = b.check(res.vecs, len(batch))
			}
			tokens := res.tokens
			if tokens < 0 { // the server counts none: estimate
				tokens = 0
				for _, s := range batch {
					tokens += usage.EstimateTokens(s)
				}
			}
			if err != nil {
				err = fmt.Errorf("%s: texts %d-%d of %d: %w", b.name, sp.lo+1, sp.hi, len(texts), err)
				stop(err)
			}
			b.adapt.release(res.server, len(batch), tokens, err == nil)
			if err != nil {
				return err
			}
			copy(out[sp.lo:sp.hi], res.vecs)
			apportion(use[sp.lo:sp.hi], batch, res.tokens, time.Since(start).Seconds())
			if b.opts.Progress != nil {
				mu.Lock()
				done += sp.hi - sp.lo
				b.opts.Progress(done)
				mu.Unlock()
			}
			return nil
		})
	}
	werr := g.Wait()
	// The caller's cancellation says more than a batch that saw it, and
	// the first batch to fail more than those it stopped.
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if gctx.Err() != nil {
		return nil, nil, context.Cause(gctx)
	}
	if werr != nil {
		return nil, nil, werr
	}
	return out, use, nil
}

// apportion shares one request's usage among its texts, in proportion to
// their estimated tokens: tokens the server counted (tokens ≥ 0; the
// shares add up to it exactly, by largest remainder) or the estimates
// themselves (tokens < 0, marked estimated), and its wall time.
func apportion(dst []usage.Usage, texts []string, tokens int, seconds float64) {
	est := make([]int, len(texts))
	sum := 0
	for i, t := range texts {
		est[i] = usage.EstimateTokens(t)
		sum += est[i]
	}
	weight := func(i int) float64 {
		if sum == 0 {
			return 1 / float64(len(texts))
		}
		return float64(est[i]) / float64(sum)
	}
	for i := range dst {
		dst[i] = usage.Usage{PromptTokens: est[i], Seconds: seconds * weight(i), Estimated: usage.Estimator}
	}
	if tokens < 0 {
		return
	}
	type rem struct {
		i int
		r float64
	}
	left := tokens
	rems := make([]rem, len(dst))
	for i := range dst {
		share := float64(tokens) * weight(i)
		dst[i].PromptTokens = int(share)
		dst[i].Estimated = ""
		left -= dst[i].PromptTokens
		rems[i] = rem{i, share - float64(dst[i].PromptTokens)}
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return cmp.Compare(b.r, a.r) })
	for k := 0; k < left; k++ {
		dst[rems[k%len(rems)].i].PromptTokens++
	}
	for i := range dst {
		dst[i].TotalTokens = dst[i].PromptTokens
	}
}

// check validates one batch's answer against the dimension asked for or,
// failing that, the first one seen (by any batch of any call), so a
// server cannot switch dimensions between batches or between queries and
// documents.
func (b *batcher) check(vecs [][]float32, n int) error {
	dim := b.fixed
	if dim == 0 && len(vecs) > 0 {
		b.dim.CompareAndSwap(0, int64(len(vecs[0])))
		dim = int(b.dim.Load())
	}
	if b.fixed > 0 && len(vecs) == n {
		for i, v := range vecs {
			if len(v) != b.fixed {
				return fmt.Errorf("embedding %d has dimension %d, but %d was asked for; does the model support that dimension?", i, len(v), b.fixed)
			}
		}
	}
	if err := Check(vecs, n, dim); err != nil {
		return fmt.Errorf("unusable answer: %w", err)
	}
	return nil
}

// checkBase validates a base URL for the flag that sets it.
func checkBase(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base URL %q is not an http(s) URL like http://localhost:8080/v1; check --base-url", httpx.RedactURL(base))
	}
	return nil
}

// HTTPBackends are the backend names NewHTTP knows.
var HTTPBackends = []string{"openai", "tei", "voyage"}

// RemoteOptions are what a command line gives any HTTP backend.
type RemoteOptions struct {
	BaseURL, APIKey, Model string
	// BaseURLs are more servers of the same model: with BaseURL, one
	// fleet (httpx.ReadURLs reads them from flags and files).
	BaseURLs   []string
	Dimensions int
	// Encoding is what OpenAI-compatible and Voyage servers are asked to
	// write vectors as (auto: base64, floats where a server refuses it);
	// TEI's /embed writes floats only.
	Encoding Encoding
	// TruncateTokens and QueryTruncateTokens ask an OpenAI-compatible
	// server to cut documents and queries (see OpenAIOptions); TEI's
	// /embed cuts at its own --max-input-length.
	TruncateTokens, QueryTruncateTokens int
	HTTPOptions
}

// NewHTTP returns the HTTP backend named by backend (one of HTTPBackends),
// resolving base URL and key as that backend's constructor does. The
// result also implements fmt.Stringer (what the vectors depend on).
func NewHTTP(backend string, o RemoteOptions) (Embedder, error) {
	switch backend {
	case "openai":
		return NewOpenAI(OpenAIOptions{BaseURL: o.BaseURL, BaseURLs: o.BaseURLs, APIKey: o.APIKey, Model: o.Model, Dimensions: o.Dimensions, Encoding: o.Encoding,
			TruncateTokens: o.TruncateTokens, QueryTruncateTokens: o.QueryTruncateTokens, HTTPOptions: o.HTTPOptions})
	case "voyage":
		return NewVoyage(VoyageOptions{BaseURL: o.BaseURL, BaseURLs: o.BaseURLs, APIKey: o.APIKey, Model: o.Model, Dimensions: o.Dimensions, Encoding: o.Encoding, HTTPOptions: o.HTTPOptions})
	case "tei":
		if o.Dimensions != 0 {
			return nil, errors.New("tei embeddings: TEI's /embed returns the model's own dimension; drop --dimensions")
		}
		if o.Encoding == EncodingBase64 {
			return nil, errors.New("tei embeddings: TEI's /embed writes floats only; drop --encoding base64 (or serve through TEI's OpenAI route with --backend openai)")
		}
		return NewTEI(TEIOptions{BaseURL: o.BaseURL, BaseURLs: o.BaseURLs, APIKey: o.APIKey, Model: o.Model, HTTPOptions: o.HTTPOptions})
	}
	return nil, fmt.Errorf("unknown HTTP embedding backend %q; use one of %s", backend, strings.Join(HTTPBackends, ", "))
}
