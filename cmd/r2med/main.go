package main
import (
 _ "github.com/spf13/cobra"
 _ "github.com/schollz/progressbar/v3"
 _ "github.com/blevesearch/go-porterstemmer"
 _ "golang.org/x/term"
)
func main(){}
