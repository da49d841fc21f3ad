module github.com/r2med/r2med/bench/httpfloor/fasthttp

go 1.26.8

require (
	github.com/r2med/r2med v0.0.0
	github.com/valyala/fasthttp v1.78.0
)

require (
	github.com/blevesearch/go-porterstemmer v1.0.3 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/molecule-man/go-brrr v1.3.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/r2med/r2med => ../../..
