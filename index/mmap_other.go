//go:build !unix

package index

import "os"

// mmapFile is not available here; Open reads the file instead.
func mmapFile(*os.File, int64) ([]byte, func() error, error) { return nil, nil, errNoMmap }
