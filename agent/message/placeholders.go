package message

import (
	"slices"

	"github.com/zot-editors/zot/internal/jsonstr"
)

// WithPlaceholders returns a copy of cs with each text of min bytes or
// more (tool results' texts too) replaced by jsonstr.Placeholder, the
// texts appended to texts in placeholder order; ok is false (and cs
// untouched) when there is none. The encoding of the copy goes to
// jsonstr.Splice, which escapes each text straight into its destination
// instead of letting an encoder copy it (a 16 MiB prompt).
func WithPlaceholders(cs []Content, min int, texts *[]string) (out []Content, ok bool) {
	for i, c := range cs {
		changed := false
		if len(c.Text) >= min {
			c.Text = jsonstr.Placeholder(len(*texts))
			*texts = append(*texts, cs[i].Text)
			changed = true
		}
		if sub, subOK := WithPlaceholders(c.Content, min, texts); subOK {
			c.Content = sub
			changed = true
		}
		if !changed {
			continue
		}
		if out == nil {
			out = slices.Clone(cs)
		}
		out[i] = c
	}
	return out, out != nil
}
