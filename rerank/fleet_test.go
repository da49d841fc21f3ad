package rerank

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/r2med/r2med/internal/httpx"
)

// The HTTP scorers spread their requests over a fleet and survive a dead
// server; a Spec in replay mode sends nothing.
func TestHTTPScorersOverFleet(t *testing.T) {
	tei := teiServer(t, nil)
	defer tei.Close()
	dead := httptest.NewServer(nil)
	dead.Close()
	s, err := New(Spec{Kind: "tei", BaseURLs: []string{dead.URL, tei.URL}, HTTP: fastClient()})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		got, err := s.Score(context.Background(), "fever cough", []string{"fever", "cough fever", "x"})
		if err != nil || !slices.Equal(got, []float64{1, 2, 0}) {
			t.Fatalf("tei fleet: %v %v", got, err)
		}
	}
	if st := s.(*TEI).conn.c.Fleet.Stats(); st[0].Healthy || st[1].Requests != 3 {
		t.Errorf("fleet stats %+v: want the dead server out, the live one serving", st)
	}

	// The API scorer routes each server's base URL its own way.
	a1, a2 := apiServer(t, "results", "k"), apiServer(t, "results", "k")
	defer a1.Close()
	defer a2.Close()
	api, err := New(Spec{Kind: "cohere", BaseURLs: []string{a1.URL + "/v2", a2.URL}, Model: "m", APIKey: "k", HTTP: fastClient()})
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := api.Score(context.Background(), "rash", []string{"rash"}); err != nil {
			t.Fatal(err)
		}
	}
	if st := api.(*API).conn.c.Fleet.Stats(); st[0].Requests == 0 || st[1].Requests == 0 || st[0].URL != a1.URL+"/v2/rerank" || st[1].URL != a2.URL+"/v1/rerank" {
		t.Errorf("api fleet %+v", st)
	}

	silent := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("replay contacted a server") }))
	defer silent.Close()
	r, err := New(Spec{Kind: "tei", BaseURL: silent.URL, Replay: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Score(context.Background(), "q", []string{"d"}); !errors.Is(err, httpx.ErrReplay) {
		t.Errorf("replay: %v", err)
	}
}
