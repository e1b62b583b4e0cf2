//go:build !unix

package tools

import (
	"bytes"
	"io"
	"os"
)

// readFileInto reads the file at path into buf[:0], growing it as needed;
// see readfile_unix.go.
func readFileInto(buf []byte, path string, max int) (data []byte, tooBig bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return buf[:0], false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > int64(max) {
		return buf[:0], true, nil
	}
	w := bytes.NewBuffer(buf[:0])
	if _, err := io.Copy(w, io.LimitReader(f, int64(max)+1)); err != nil {
		return buf[:0], false, err
	}
	if w.Len() > max {
		return buf[:0], true, nil
	}
	return w.Bytes(), false, nil
}
