package jsonresume

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// After a valid body, the next is checked from the last checkpoint (a
// comma between the elements of an array that is a member of the
// top-level object) in the bytes they share, and the answer is the whole
// body's in every case.
func TestValidatorResumes(t *testing.T) {
	const base = `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b","cache":1}]}`
	for _, tc := range []struct {
		name, next string
		want       bool
	}{
		{"more messages", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b","cache":1},{"x":1}]}`, true},
		{"the breakpoint moved", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"x":1,"cache":1}]}`, true},
		{"same", base, true},
		{"fewer", `{"model":"m","messages":[{"role":"user","content":"a"}]}`, true},
		{"broken message", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"x":]}`, false},
		{"no comma", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}{"x":1}]}`, false},
		{"closed twice", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}}`, false},
		{"unclosed array", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}}`, false},
		{"another member after", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user"}],"x":[1,2]}`, true},
		{"broken before every checkpoint", `{"model":"m" "messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"b":1}]}`, false},
		{"unrelated", `{"a":[1,2]}`, true},
		{"unrelated broken", `{"a":[1,2}`, false},
	} {
		var v Validator
		if !v.Valid([]byte(base)) {
			t.Fatal("base is valid")
		}
		if got := v.Valid([]byte(tc.next)); got != tc.want || got != json.Valid([]byte(tc.next)) {
			t.Errorf("%s: valid = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Bodies that share bytes up to a comma that is no checkpoint: in a
	// deeper array, in an object, in a string; and one ending after one.
	for _, tc := range [][2]string{
		{`{"a":[[1,2]],"b":1}`, `{"a":[[1,2],"b":1}`},
		{`{"a":{"b":1,"c":2}}`, `{"a":{"b":1,2]}`},
		{`{"a":["x\",",1]}`, `{"a":["x\",1]}`},
		{`{"a":[1,2]}`, `{"a":[1,]}`},
	} {
		var v Validator
		if !v.Valid([]byte(tc[0])) || v.Valid([]byte(tc[1])) {
			t.Errorf("after %s, %s passed", tc[0], tc[1])
		}
	}
	// The shared bytes are not checked again: a last body that only looks
	// valid (never so without a check) lets its continuations pass.
	v := Validator{last: []byte(`{"x" [1,{]}`), checkpoints: []int{8}}
	if !v.Valid([]byte(`{"x" [1,{"y":2}]}`)) {
		t.Error("a body sharing bytes up to a checkpoint was checked whole")
	}
}

// Checkpoints are the commas of the arrays that are members of the
// top-level object, not those in strings, deeper arrays or objects.
func TestCheckpoints(t *testing.T) {
	body := `{"a":[1,[2,3],{"b":[4,5]},"x,\"],"],"c":{"d":[6,7]},"e":[8,9]}`
	// After "1,", "[2,3]," and "{…}," in a, and "8," in e.
	want := []int{8, 14, 26, strings.Index(body, "8,") + 2}
	if got := checkpointsFrom([]byte(body), 0); !slices.Equal(got, want) {
		t.Errorf("checkpoints = %v, want %v", got, want)
	}
	if got := checkpointsFrom([]byte(`[1,[2,3]]`), 0); got != nil {
		t.Errorf("an array has no checkpoints: %v", got)
	}
}

// FuzzValidator: after any body, the validator's answer for one that
// shares its first bytes is encoding/json's.
func FuzzValidator(f *testing.F) {
	f.Add(`{"m":[{"a":1},{"b":2}]}`, 14, `{"b":2},{"c":3}]}`)
	f.Add(`{"m":[{"a":1},{"b":2}]}`, 14, `{"b":2}{"c":3}]}`)
	f.Add(`{"m":[1,2],"n":[3,4]}`, 8, `2],"n":[3,4]}}`)
	f.Fuzz(func(t *testing.T, last string, cut int, tail string) {
		next := last[:min(max(cut, 0), len(last))] + tail
		var v Validator
		v.Valid([]byte(last))
		if got, want := v.Valid([]byte(next)), json.Valid([]byte(next)); got != want {
			t.Fatalf("after %q: valid(%q) = %v, want %v", last, next, got, want)
		}
	})
}
