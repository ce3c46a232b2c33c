package main

import (
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token/config"
)

func TestRemoveSlot(t *testing.T) {
	const text = `# top comment
log_level = "info"

[[slot]]
label = "a"
token_file = "/a.db"

[[slot]] # the second
label = "b"
token_file = "/b.db"
engines = ["soft"]

[[slot]]
label = "c"
token_file = "/c.db"
`
	for _, tc := range []struct {
		index int
		want  []string // labels left
	}{
		{0, []string{"b", "c"}}, {1, []string{"a", "c"}}, {2, []string{"a", "b"}},
	} {
		out, err := removeSlot(text, tc.index)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Parse([]byte(out), "/")
		if err != nil {
			t.Fatalf("index %d: %v\n%s", tc.index, err, out)
		}
		var got []string
		for _, s := range cfg.Slots {
			got = append(got, s.Label)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("remove %d: slots %v, want %v", tc.index, got, tc.want)
		}
		if !strings.HasPrefix(out, "# top comment\nlog_level = \"info\"\n") {
			t.Errorf("remove %d: the top of the file changed:\n%s", tc.index, out)
		}
	}
	if _, err := removeSlot(text, 3); err == nil {
		t.Error("removing a 4th slot of 3 succeeded")
	}
}

// FuzzRemoveSlot: removeSlot never panics, and when the text and the
// result both load, the result has one slot fewer and the others in order
// (writeConfig refuses a result that does not load).
func FuzzRemoveSlot(f *testing.F) {
	f.Add("[[slot]]\ntoken_file = \"/a\"\n[[slot]]\ntoken_file = \"/b\"\n", 0)
	f.Add("log = \"x\"\n[[slot]] # c\nlabel = \"a\"\ntoken_file = \"/a\"\n\n[[slot]]\ntoken_file = \"/b\"\n", 1)
	f.Fuzz(func(t *testing.T, text string, index int) {
		out, err := removeSlot(text, index)
		if err != nil {
			return
		}
		before, err1 := config.Parse([]byte(text), "/")
		after, err2 := config.Parse([]byte(out), "/")
		if err1 != nil || err2 != nil {
			return
		}
		if len(after.Slots) != len(before.Slots)-1 {
			t.Fatalf("removing slot %d of %d left %d:\n%s\n---\n%s", index, len(before.Slots), len(after.Slots), text, out)
		}
		j := 0
		for i, s := range before.Slots {
			if i == index {
				continue
			}
			if after.Slots[j].TokenFile != s.TokenFile {
				t.Fatalf("slot %d is %s, want %s", j, after.Slots[j].TokenFile, s.TokenFile)
			}
			j++
		}
	})
}
