// Package version says which build of ModExp Token is running, for the
// --version of the CLI and the daemon.
package version

import "runtime/debug"

// Version is set at link time by the Makefile:
//
//	-ldflags "-X github.com/modexp-token/modexp-token/cmd/internal/version.Version=$(git describe ...)"
//
// Empty means "ask the build info".
var Version string

// String returns Version, else the module version or VCS revision recorded
// in the build info ("devel-<rev>[-dirty]"), else "devel".
func String() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}
