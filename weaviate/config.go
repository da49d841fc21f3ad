package weaviate

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// DefaultGRPCPort is Weaviate's gRPC port unless GRPC_PORT says otherwise.
const DefaultGRPCPort = "50051"

// Config says where a collection lives.
type Config struct {
	// URL is the server's REST root, http://HOST:PORT (https for TLS).
	URL string
	// GRPC is the gRPC address HOST:PORT; empty: URL's host, port 50051.
	GRPC string
	// Collection is the collection (class) name: a capital letter, then
	// letters, digits and underscores, as Weaviate requires.
	Collection string
	// Timeout bounds each request; zero means 60 s for a batch import
	// and 15 s for any other request, which is then tried again (RetryFor).
	Timeout time.Duration
	// RetryFor is how long a request that fails with a transient error
	// (a node of the cluster just died, a 5xx, gRPC unavailable, a
	// timeout) is sent again; zero means 1 minute, negative never.
	RetryFor time.Duration
}

var collectionName = regexp.MustCompile(`^[A-Z][_0-9A-Za-z]*$`)

// ParseTarget reads weaviate://HOST:PORT/Collection (what r2med index push
// takes after --to) into a Config with URL http://HOST:PORT; weaviates://
// gives https. The gRPC address is left to the default unless grpc is given.
//
// Over TLS the REST requests verify the server's certificate, but the
// official Go client (v5.5) opens gRPC — the batch writes and every
// search — with InsecureSkipVerify and no way to change it: its TLS
// keeps what is sent private from onlookers, not from a server that
// poses as the one named. Reach a TLS server over a network you trust.
func ParseTarget(target, grpc string) (Config, error) {
	u, err := url.Parse(target)
	if err != nil {
		return Config{}, fmt.Errorf("--to %q: %v (want weaviate://HOST:PORT/Collection)", target, err)
	}
	scheme := map[string]string{"weaviate": "http", "weaviates": "https"}[u.Scheme]
	if scheme == "" || u.Host == "" {
		return Config{}, fmt.Errorf("--to %q: want weaviate://HOST:PORT/Collection (weaviates:// for TLS)", target)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return Config{}, fmt.Errorf("--to %q: only weaviate://HOST:PORT/Collection is understood (no user, query or fragment)", target)
	}
	c := Config{URL: scheme + "://" + u.Host, GRPC: grpc, Collection: strings.Trim(u.Path, "/")}
	if c.Collection == "" {
		return Config{}, fmt.Errorf("--to %q names no collection: want weaviate://HOST:PORT/Collection", target)
	}
	return c, c.Validate()
}

// Validate checks the URL, the gRPC address and the collection name.
func (c Config) Validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return fmt.Errorf("weaviate URL %q: want http://HOST:PORT", c.URL)
	}
	if u.User != nil {
		// URLs go into manifests; credentials must not.
		return fmt.Errorf("weaviate URL %s: no user or password in the URL (r2med talks to servers that allow anonymous access)", u.Redacted())
	}
	if c.GRPC != "" {
		if _, _, err := net.SplitHostPort(c.GRPC); err != nil {
			return fmt.Errorf("weaviate gRPC address %q: want HOST:PORT (%v)", c.GRPC, err)
		}
	}
	if !collectionName.MatchString(c.Collection) {
		hint := ""
		if c.Collection != "" && collectionName.MatchString(strings.ToUpper(c.Collection[:1])+c.Collection[1:]) {
			hint = fmt.Sprintf(" (Weaviate capitalizes collection names: use %s)", strings.ToUpper(c.Collection[:1])+c.Collection[1:])
		}
		return fmt.Errorf("collection name %q: want a capital letter, then letters, digits or underscores%s", c.Collection, hint)
	}
	return nil
}

// host is URL's HOST:PORT.
func (c Config) host() string {
	u, _ := url.Parse(c.URL)
	return u.Host
}

func (c Config) scheme() string {
	u, _ := url.Parse(c.URL)
	return u.Scheme
}

// GRPCAddr is the gRPC address used: GRPC, else URL's host on port 50051.
func (c Config) GRPCAddr() string {
	if c.GRPC != "" {
		return c.GRPC
	}
	u, _ := url.Parse(c.URL)
	return net.JoinHostPort(u.Hostname(), DefaultGRPCPort)
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 60 * time.Second
}
