package embed_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/r2med/r2med/embed"
	"github.com/r2med/r2med/embed/embedtest"
)

func encodingTexts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("passage %d on the kidney and the liver", i)
	}
	return out
}

// embedOver embeds texts through an OpenAI-compatible backend on servers,
// in fixed small batches so that every server gets many requests.
func embedOver(t *testing.T, enc embed.Encoding, texts []string, servers ...*embedtest.Server) (*embed.OpenAI, error) {
	t.Helper()
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.URL)
	}
	e, err := embed.NewOpenAI(embed.OpenAIOptions{BaseURL: urls[0], BaseURLs: urls[1:], Model: "stub", Encoding: enc,
		HTTPOptions: embed.HTTPOptions{BatchSize: 5, Concurrency: 3}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(context.Background(), embed.Document, texts)
	if err == nil {
		for i, s := range texts {
			if !slices.Equal(got[i], embedtest.Vector(s, 8)) {
				t.Fatalf("vector %d is not the embedding of %q", i, s)
			}
		}
	}
	return e, err
}

// TestEncodingAutoFallsBackOncePerServer: by default the client asks for
// base64; a server that refuses it is asked once, then for floats only,
// while the server beside it in the fleet, which accepts base64, keeps
// being asked for base64; the run's vectors are exact either way, and the
// stats say which server answered in what, and why.
func TestEncodingAutoFallsBackOncePerServer(t *testing.T) {
	refusing := embedtest.NewServer(t, embedtest.Options{Base64: embedtest.Base64Refused})
	accepting := embedtest.NewServer(t, embedtest.Options{})
	e, err := embedOver(t, embed.EncodingAuto, encodingTexts(200), refusing, accepting)
	if err != nil {
		t.Fatal(err)
	}
	if n := refusing.Asked("base64"); n != 1 {
		t.Errorf("the refusing server was asked for base64 %d times, want once", n)
	}
	if refusing.Asked("float") == 0 || accepting.Asked("base64") < 2 || accepting.Asked("float") != 0 {
		t.Errorf("asked: refusing float %d; accepting base64 %d, float %d",
			refusing.Asked("float"), accepting.Asked("base64"), accepting.Asked("float"))
	}
	st := e.Stats()
	if s := st.Servers[0]; s.Encoding != embed.EncodingFloat || !strings.Contains(s.EncodingNote, "refused base64 (HTTP 400)") {
		t.Errorf("refusing server's stats: %+v", s)
	}
	if s := st.Servers[1]; s.Encoding != embed.EncodingBase64 || s.EncodingNote != "" {
		t.Errorf("accepting server's stats: %+v", s)
	}
	if st.Texts != 200 {
		t.Errorf("stats count %d texts", st.Texts)
	}
}

// TestEncodingAutoServerAnswersFloats: a server that answers floats to a
// request for base64 is read (strictly) and asked for floats from then on.
func TestEncodingAutoServerAnswersFloats(t *testing.T) {
	s := embedtest.NewServer(t, embedtest.Options{Base64: embedtest.Base64Ignored})
	e, err := embedOver(t, embed.EncodingAuto, encodingTexts(60), s)
	if err != nil {
		t.Fatal(err)
	}
	if s.Asked("base64") != 1 || s.Asked("float") != 11 {
		t.Errorf("asked base64 %d times, float %d; want once, then floats for the other 11 batches", s.Asked("base64"), s.Asked("float"))
	}
	if st := e.Stats().Servers[0]; st.Encoding != embed.EncodingFloat || st.EncodingNote != "answered floats to a base64 request" {
		t.Errorf("stats: %+v", st)
	}
}

// TestEncodingFixed: --encoding base64 is kept even against a server that
// refuses it (the error says what to do); --encoding float never asks
// for base64.
func TestEncodingFixed(t *testing.T) {
	refusing := embedtest.NewServer(t, embedtest.Options{Base64: embedtest.Base64Refused})
	_, err := embedOver(t, embed.EncodingBase64, encodingTexts(10), refusing)
	if err == nil || !strings.Contains(err.Error(), "HTTP 400") || !strings.Contains(err.Error(), "--encoding float") {
		t.Errorf("base64 against a refusing server: %v", err)
	}
	if refusing.Asked("float") != 0 {
		t.Errorf("--encoding base64 fell back to floats")
	}
	plain := embedtest.NewServer(t, embedtest.Options{})
	e, err := embedOver(t, embed.EncodingFloat, encodingTexts(30), plain)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Asked("base64") != 0 || plain.Asked("float") != 6 || e.Stats().Servers[0].Encoding != embed.EncodingFloat {
		t.Errorf("--encoding float: asked base64 %d, float %d", plain.Asked("base64"), plain.Asked("float"))
	}
	if _, err := embed.ParseEncoding("utf8"); err == nil {
		t.Error("ParseEncoding took utf8")
	}
}
