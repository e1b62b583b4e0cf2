// Package jsonerr turns encoding/json errors into messages a person can act
// on: where (line and column, when the input is given) and what to fix.
package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Describe explains err, returned by decoding data (nil when the input is
// not at hand). want names what the top level should be ("a JSON array of
// models"); known lists the accepted field names for an unknown-field
// error (DisallowUnknownFields).
func Describe(data []byte, err error, want, known string) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		if data == nil {
			return err
		}
		// Offset counts the offending byte itself; the column names it.
		l, c := LineCol(data, se.Offset-1)
		return fmt.Errorf("line %d, column %d: %v", l, c, se)
	case errors.As(err, &te):
		if te.Field == "" {
			return fmt.Errorf("want %s, found a JSON %s", want, te.Value)
		}
		if data == nil {
			return fmt.Errorf("field %q must not be a JSON %s", te.Field, te.Value)
		}
		l, c := LineCol(data, te.Offset)
		return fmt.Errorf("line %d, column %d: field %q must not be a JSON %s", l, c, te.Field, te.Value)
	case known != "" && strings.HasPrefix(err.Error(), "json: unknown field"):
		return fmt.Errorf("%s (known: %s)", strings.TrimPrefix(err.Error(), "json: "), known)
	}
	return err
}

// LineCol is the 1-based line and column of byte offset off in data.
func LineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	line, col = 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
