package engine

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Factory makes an engine from the part of its spec after the first colon
// ("" for "soft", "pukcc" for "chip:pukcc", "unix:/x.sock" for
// "device:unix:/x.sock").
type Factory func(arg string) (Engine, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
)

// Register makes a kind of engine available under name ("soft", "chip",
// "device"). It panics if name is registered twice; call it from init.
func Register(name string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("engine: Register called twice for " + name)
	}
	registry[name] = f
}

// Open makes the engine named by spec ("soft", "chip:orup561",
// "device:unix:/path"). An unknown kind is ErrUnknownEngine.
func Open(spec string) (Engine, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	registryMu.RLock()
	f, ok := registry[kind]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownEngine, spec, strings.Join(Kinds(), ", "))
	}
	e, err := f(arg)
	if err != nil {
		return nil, fmt.Errorf("engine: open %q: %w", spec, err)
	}
	return e, nil
}

// Kinds lists the registered engine kinds, sorted.
func Kinds() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
