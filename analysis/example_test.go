package analysis_test

import (
	"fmt"

	"github.com/r2med/r2med/analysis"
)

// LuceneEnglish is Lucene 8.7's EnglishAnalyzer, token for token:
// StandardTokenizer (Unicode word breaks, so "COVID-19" splits and "2.5mg"
// stays whole), English possessives, lower case, Lucene's English stop
// words and the Porter stemmer.
func ExampleLuceneEnglish() {
	a := analysis.LuceneEnglish()
	fmt.Println(a.Analyze(nil, "The patient's COVID-19 symptoms improved after 2.5mg doses."))
	// Output:
	// [patient covid 19 symptom improv after 2.5mg dose]
}

// Get finds an analyzer by the name indexes and manifests record.
func ExampleGet() {
	for _, name := range analysis.Names() {
		a, err := analysis.Get(name)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: %q\n", name, a.Analyze(nil, "Running fevers"))
	}
	// Output:
	// lucene-english: ["run" "fever"]
	// whitespace: ["Running" "fevers"]
}
