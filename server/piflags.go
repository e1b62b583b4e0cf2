package server

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"

	"github.com/zot-editors/zot/extensions"
)

// applyPiFlags adds initializationOptions.piFlags to the values pi
// extensions read with getFlag. They travel as `--flag name=value` does:
// $ZOT_PI_FLAGS (a JSON object of strings) in zot's environment, which
// the pi runtime inherits; an editor's value wins over the command line's
// (initializationOptions override the flags). One zot lsp serves one
// editor, so the process environment is this session's.
func applyPiFlags(method string, flags map[string]any) error {
	if len(flags) == 0 {
		return nil
	}
	vals := map[string]string{}
	if cur := os.Getenv(extensions.EnvPiFlags); cur != "" {
		_ = json.Unmarshal([]byte(cur), &vals) // a bad one is replaced
	}
	names := make([]string, 0, len(flags))
	for n := range flags {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		field := "initializationOptions.piFlags." + n
		if n == "" {
			return fieldError(method, "initializationOptions.piFlags", "has an empty flag name")
		}
		switch v := flags[n].(type) {
		case string:
			vals[n] = v
		case bool:
			vals[n] = strconv.FormatBool(v)
		case float64:
			vals[n] = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			raw, _ := json.Marshal(v)
			return fieldError(method, field, "must be a string, a boolean or a number, not %s", jsonKind(string(raw)))
		}
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return fmt.Errorf("piFlags: %v", err)
	}
	return os.Setenv(extensions.EnvPiFlags, string(b))
}
