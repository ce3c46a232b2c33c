package mont

// SetTrace installs f as the kernel trace hook (nil removes it): f then
// receives one event per kernel call and table lookup ('M' multiply, 'S'
// square, 'T' table lookup). It exists for the constant-time trace tests
// of the packages built on this one (engine/alg/dsa, engine/alg/dh); it must not
// be called while arithmetic runs.
func SetTrace(f func(op byte)) { kernelTrace = f }
