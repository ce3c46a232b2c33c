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
